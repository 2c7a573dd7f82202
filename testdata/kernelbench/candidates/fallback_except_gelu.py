# kgate-problem: problems/gelu.py
# expect: decoy
# baseline: pass
# runs-on: gpu
# why: the custom half2 kernel's launcher takes x.data_ptr<at::Half>(), which throws for the problem's float32 input on every call, and forward catches the RuntimeError and returns F.gelu(x) (the try/except fallback to the reference op): the answers are PyTorch's own, so no numeric gate fails; only the launch record (no kernel of the candidate's own ran) exposes it.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

gelu_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

__global__ void gelu_half2_kernel(const __half2* __restrict__ x, __half2* __restrict__ y, int64_t n2) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        float2 v = __half22float2(x[i]);
        v.x = 0.5f * v.x * (1.0f + erff(v.x * 0.70710678118654752f));
        v.y = 0.5f * v.y * (1.0f + erff(v.y * 0.70710678118654752f));
        y[i] = __float22half2_rn(v);
    }
}

torch::Tensor gelu_half2_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "gelu_half2_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.is_contiguous(), "gelu_half2_cuda: x must be contiguous");
    TORCH_CHECK(x.numel() % 2 == 0, "gelu_half2_cuda: numel must be even");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto y = torch::empty_like(x);
    const int64_t n2 = x.numel() / 2;
    const __half2* xp = reinterpret_cast<const __half2*>(x.data_ptr<at::Half>());
    __half2* yp = reinterpret_cast<__half2*>(y.data_ptr<at::Half>());
    if (n2 == 0) return y;
    const int threads = 256;
    const int64_t blocks = (n2 + threads - 1) / threads;
    gelu_half2_kernel<<<(unsigned int)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(xp, yp, n2);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

gelu_cpp_source = "torch::Tensor gelu_half2_cuda(torch::Tensor x);"

gelu_ext = load_inline(
    name="kgate_fallback_except_gelu",
    cpp_sources=gelu_cpp_source,
    cuda_sources=gelu_source,
    functions=["gelu_half2_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.gelu = gelu_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        try:
            return self.gelu.gelu_half2_cuda(x)
        except RuntimeError:
            # fall back to PyTorch if the custom kernel cannot handle this input
            return F.gelu(x)
