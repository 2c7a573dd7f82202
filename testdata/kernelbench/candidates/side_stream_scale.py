# kgate-problem: problems/scale.py
# expect: fail placement wrong-stream
# baseline: pass
# runs-on: gpu
# why: the load_inline kernel runs on its own non-blocking stream ("so it can overlap with other work") and the function returns without an event or a synchronisation, so the caller's stream may read the output before it is written and the kernel may read x before its producer finished; KernelBench calls torch.cuda.synchronize() before and after the candidate, which hides both races.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

scale_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

static cudaStream_t g_side_stream = nullptr;

__global__ void scale_kernel(const float* __restrict__ x, float* __restrict__ y, float s, int64_t n) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * s;
}

torch::Tensor scale_cuda(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda(), "scale_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "scale_cuda: x must be float32");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return y;
    if (g_side_stream == nullptr) {
        C10_CUDA_CHECK(cudaStreamCreateWithFlags(&g_side_stream, cudaStreamNonBlocking));
    }
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    scale_kernel<<<(unsigned int)blocks, threads, 0, g_side_stream>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), (float)scale, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

scale_cpp_source = "torch::Tensor scale_cuda(torch::Tensor x, double scale);"

scale_ext = load_inline(
    name="kgate_side_stream_scale",
    cpp_sources=scale_cpp_source,
    cuda_sources=scale_source,
    functions=["scale_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, scale_factor: float):
        super(ModelNew, self).__init__()
        self.scale_factor = float(scale_factor)
        self.ext = scale_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.scale_cuda(x, self.scale_factor)
