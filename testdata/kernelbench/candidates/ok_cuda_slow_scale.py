# kgate-problem: problems/scale.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control for a slow kernel: every block waits ~5 ms before it writes (a naive kernel, one block per 256 elements, on the caller's stream), so its pace at the nominal size projects a case past 2^31 elements to minutes; the limits gate skips that case at once and says why, instead of a sample that holds the GPU's turn for the other checks and then times out, which is not a failure of the kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

slow_scale_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void slow_scale_kernel(const float* __restrict__ x, float* __restrict__ y, float s, int64_t n) {
    const unsigned long long t0 = now_ns();
    while (now_ns() - t0 < 5000000ULL) {  // 5 ms of wall time per block, whatever the clock
    }
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * s;
}

torch::Tensor slow_scale_cuda(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "slow_scale_cuda: a float32 CUDA tensor expected");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return y;
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    slow_scale_kernel<<<(unsigned int)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), (float)scale, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

slow_scale_cpp_source = "torch::Tensor slow_scale_cuda(torch::Tensor x, double scale);"

slow_scale_ext = load_inline(
    name="kgate_ok_cuda_slow_scale",
    cpp_sources=slow_scale_cpp_source,
    cuda_sources=slow_scale_source,
    functions=["slow_scale_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, scale_factor: float):
        super(ModelNew, self).__init__()
        self.scale_factor = float(scale_factor)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return slow_scale_ext.slow_scale_cuda(x, self.scale_factor)
