# kgate-problem: problems/scale.py
# expect: fail placement wrong-stream
# baseline: pass
# runs-on: gpu
# why: like side_stream_scale, the kernel runs on a non-blocking stream of its own and returns without an event or a synchronisation; here its blocks also spend ~10 ms before they write (standing in for a kernel at a real size, or one queued behind other work), so the caller's stream reads the output before it is written, every time, not only under load. Structure sees the prefill in the output and, with the whole device synchronised around the call, a complete one: wrong-stream, not an unwritten output; the gates after it run synchronised, and placement's side-stream run, the only one left unsynchronised, owns the cause. KernelBench calls torch.cuda.synchronize() before and after the candidate, which hides it.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

late_scale_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

static cudaStream_t g_own_stream = nullptr;

__global__ void late_scale_kernel(const float* __restrict__ x, float* __restrict__ y, float s, int64_t n) {
    const long long t0 = clock64();
    while (clock64() - t0 < 20000000LL) {  // ~10 ms at the H200's clock
    }
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * s;
}

torch::Tensor late_scale_cuda(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda(), "late_scale_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "late_scale_cuda: x must be float32");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return y;
    if (g_own_stream == nullptr) {
        C10_CUDA_CHECK(cudaStreamCreateWithFlags(&g_own_stream, cudaStreamNonBlocking));
    }
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    late_scale_kernel<<<(unsigned int)blocks, threads, 0, g_own_stream>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), (float)scale, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

late_scale_cpp_source = "torch::Tensor late_scale_cuda(torch::Tensor x, double scale);"

late_scale_ext = load_inline(
    name="kgate_side_stream_late_scale",
    cpp_sources=late_scale_cpp_source,
    cuda_sources=late_scale_source,
    functions=["late_scale_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, scale_factor: float):
        super(ModelNew, self).__init__()
        self.scale_factor = float(scale_factor)
        self.ext = late_scale_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.late_scale_cuda(x, self.scale_factor)
