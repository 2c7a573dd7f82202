# kgate-problem: problems/mean_dim.py
# expect: fail accuracy fp16-accumulation
# baseline: pass
# runs-on: gpu
# why: the load_inline row mean converts to __half and accumulates with __hadd (per-thread partials and the shared-memory tree, "half math doubles throughput"): a partial above 65504 overflows to inf (large-mean inputs 1e3 x 512 per thread) and zero-mean inputs already carry ~1e-5 error in the mean (accuracy fails first; its diagnosis runs the large-mean inputs and sees the overflow), far inside KernelBench's 1e-2.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

row_mean_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

constexpr int THREADS = 256;

__global__ void row_mean_half_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
    __shared__ __half sdata[THREADS];
    const int64_t row = blockIdx.x;
    const float* xr = x + row * cols;
    __half acc = __float2half(0.0f);
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) acc = __hadd(acc, __float2half(xr[c]));
    sdata[threadIdx.x] = acc;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sdata[threadIdx.x] = __hadd(sdata[threadIdx.x], sdata[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = __half2float(sdata[0]) / (float)cols;
}

torch::Tensor row_mean_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "row_mean_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "row_mean_cuda: x must be 2-D");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "row_mean_cuda: x must be float32");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0);
    const int64_t cols = xc.size(1);
    auto out = torch::empty({rows}, xc.options());
    if (rows == 0) return out;
    row_mean_half_kernel<<<(unsigned int)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

row_mean_cpp_source = "torch::Tensor row_mean_cuda(torch::Tensor x);"

row_mean_ext = load_inline(
    name="kgate_fp16_accum_mean_dim",
    cpp_sources=row_mean_cpp_source,
    cuda_sources=row_mean_source,
    functions=["row_mean_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.row_mean = row_mean_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.row_mean.row_mean_cuda(x)
