# kgate-problem: problems/sum_dim.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: load_inline row sum with a fixed-order reduction (each thread sums a fixed strided subset sequentially, then a shared-memory tree in a fixed pattern), so repeated runs are bit-identical; one block per row, 64-bit offsets, current stream.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

row_sum_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256;

__global__ void row_sum_tree_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
    __shared__ float sdata[THREADS];
    const int64_t row = blockIdx.x;
    const float* xr = x + row * cols;
    float acc = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) acc += xr[c];
    sdata[threadIdx.x] = acc;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sdata[threadIdx.x] += sdata[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = sdata[0];
}

torch::Tensor row_sum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "row_sum_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "row_sum_cuda: x must be 2-D");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "row_sum_cuda: x must be float32");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0);
    const int64_t cols = xc.size(1);
    auto out = torch::empty({rows}, xc.options());
    if (rows == 0) return out;
    if (cols == 0) return out.zero_();
    row_sum_tree_kernel<<<(unsigned int)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

row_sum_cpp_source = "torch::Tensor row_sum_cuda(torch::Tensor x);"

row_sum_ext = load_inline(
    name="kgate_ok_cuda_sum_dim",
    cpp_sources=row_sum_cpp_source,
    cuda_sources=row_sum_source,
    functions=["row_sum_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.row_sum = row_sum_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.row_sum.row_sum_cuda(x)
