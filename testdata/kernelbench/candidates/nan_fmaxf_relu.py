# kgate-problem: problems/relu.py
# expect: fail nonfinite nan-swallowed
# baseline: pass
# runs-on: gpu
# why: the load_inline ReLU computes fmaxf(x, 0.0f), which returns the non-NaN operand, so NaN inputs come out as 0 while torch.relu propagates them (the most common ReLU in generated CUDA); randn inputs never contain NaN.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_fmaxf_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_fmaxf_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

torch::Tensor relu_fmaxf_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "relu_fmaxf_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "relu_fmaxf_cuda: x must be float32");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return y;
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    relu_fmaxf_kernel<<<(unsigned int)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

relu_fmaxf_cpp_source = "torch::Tensor relu_fmaxf_cuda(torch::Tensor x);"

relu_fmaxf_ext = load_inline(
    name="kgate_nan_fmaxf_relu",
    cpp_sources=relu_fmaxf_cpp_source,
    cuda_sources=relu_fmaxf_source,
    functions=["relu_fmaxf_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.relu = relu_fmaxf_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu.relu_fmaxf_cuda(x)
