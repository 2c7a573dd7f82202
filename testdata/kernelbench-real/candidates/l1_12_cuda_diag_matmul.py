# kgate-problem: problems/level1/12_Matmul_with_diagonal_matrices.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: load_inline row scaling A[i] * B[i, j] instead of the dense product, keeping its non-finite semantics: a non-finite B[k, j] makes the dense product's column j NaN off row k (0 * inf), so column counts of non-finite values are taken first; 64-bit indices, current stream.
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

__global__ void nonfinite_cols(const float* __restrict__ b, int* __restrict__ cnt, int64_t n, int64_t m) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n * m; i += (int64_t)gridDim.x * blockDim.x)
        if (!isfinite(b[i])) atomicAdd(&cnt[i % m], 1);  // a count: order-independent
}

__global__ void diag_scale(const float* __restrict__ a, const float* __restrict__ b, const int* __restrict__ cnt,
                           float* __restrict__ out, int64_t n, int64_t m) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n * m; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / m, c = i % m;
        const float v = b[i];
        const int others = cnt[c] - (isfinite(v) ? 0 : 1);
        // the dense product adds 0 * B[k, j] for every k != r: NaN when one of them is not finite
        out[i] = others > 0 ? __int_as_float(0x7fc00000) : a[r] * v;
    }
}

torch::Tensor diag_mm(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat,
                "diag_mm: float32 CUDA tensors expected");
    TORCH_CHECK(a.dim() == 1 && b.dim() == 2 && b.size(0) == a.size(0), "diag_mm: shapes (N,) and (N, M) expected");
    const c10::cuda::CUDAGuard guard(b.device());
    auto ac = a.contiguous(), bc = b.contiguous();
    const int64_t n = bc.size(0), m = bc.size(1);
    auto out = torch::empty({n, m}, bc.options());
    if (n * m == 0) return out;
    auto stream = at::cuda::getCurrentCUDAStream();
    // a[k] appears only in row k of diag(a), so a non-finite a[k] affects row k alone (a[k] * B[k, j])
    auto cnt = torch::zeros({m}, bc.options().dtype(at::kInt));
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n * m + threads - 1) / threads, 65535LL * 8);
    nonfinite_cols<<<(unsigned)blocks, threads, 0, stream>>>(bc.data_ptr<float>(), cnt.data_ptr<int>(), n, m);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    diag_scale<<<(unsigned)blocks, threads, 0, stream>>>(ac.data_ptr<float>(), bc.data_ptr<float>(), cnt.data_ptr<int>(),
                                                        out.data_ptr<float>(), n, m);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = """torch::Tensor diag_mm(torch::Tensor a, torch::Tensor b);"""

ext = load_inline(
    name="kgate_real_l1_12",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["diag_mm"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return ext.diag_mm(A, B)
