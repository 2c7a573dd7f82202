# kgate-problem: problems/level1/98_KLDivLoss.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: load_inline per-row sums of xlogy(t, t) - t * log(p) (one block per row, fixed-order fp32 block reduction), as torch's kl_div computes each term (t = 0 gives 0 - 0 * log p); the rows summed and divided by the batch with torch.
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

// fixed-order block reduction (warp shuffles, then the warps in order): deterministic
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_down_sync(0xffffffffu, v, o);
        v = (u > v || u != u) ? u : v;  // NaN wins, as in torch.max
    }
    return v;
}
template <bool MAX> __device__ float block_reduce(float v) {
    __shared__ float part[32];
    __shared__ float result;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = part[0];
        for (int w = 1; w < nw; w++) r = MAX ? ((part[w] > r || part[w] != part[w]) ? part[w] : r) : r + part[w];
        result = r;
    }
    __syncthreads();
    return result;
}

__global__ void kl_rows_kernel(const float* __restrict__ p, const float* __restrict__ t, float* __restrict__ out, int64_t n) {
    const int64_t row = blockIdx.x;
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const float tv = t[row * n + j], lp = logf(p[row * n + j]);
        const float xlogy = tv == 0.f ? 0.f : tv * logf(tv);  // NaN stays NaN
        s += xlogy - tv * lp;
    }
    s = block_reduce<false>(s);
    if (threadIdx.x == 0) out[row] = s;
}

torch::Tensor kl_rows(torch::Tensor p, torch::Tensor t) {
    TORCH_CHECK(p.is_cuda() && t.is_cuda() && p.scalar_type() == at::kFloat && t.scalar_type() == at::kFloat, "float32 CUDA tensors expected");
    TORCH_CHECK(p.sizes() == t.sizes() && p.dim() == 2, "two 2-D tensors of one shape expected");
    const c10::cuda::CUDAGuard guard(p.device());
    auto pc = p.contiguous(), tc = t.contiguous();
    const int64_t rows = pc.size(0), n = pc.size(1);
    auto out = torch::empty({rows}, pc.options());
    if (rows == 0) return out;
    kl_rows_kernel<<<(unsigned)rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(pc.data_ptr<float>(), tc.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = """torch::Tensor kl_rows(torch::Tensor p, torch::Tensor t);"""

ext = load_inline(
    name="kgate_real_l1_98",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["kl_rows"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return ext.kl_rows(predictions, targets).sum() / predictions.shape[0]
