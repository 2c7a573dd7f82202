# kgate-problem: problems/scale.py
# expect: fail bounds out-of-bounds-write
# baseline: pass
# runs-on: gpu
# why: the launcher uses blocks = n / threads + 1 and the kernel stores unconditionally, zero-filling the "padding" of the last tile: the read is guarded but the write is not, so up to 256 floats past the end of the torch::empty output are overwritten (n a multiple of 256 writes a whole extra tile); under KernelBench the bytes after the output belong to free space or to an earlier, no longer compared output, so all five trials pass.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

scale_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

__global__ void scale_tiled_kernel(const float* __restrict__ x, float* __restrict__ y, float s, int64_t n) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    // full-tile store: the padding lanes of the last tile write zeros
    y[i] = (i < n) ? x[i] * s : 0.0f;
}

torch::Tensor scale_cuda(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda(), "scale_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "scale_cuda: x must be float32");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return y;
    const int threads = 256;
    const int64_t blocks = n / threads + 1;
    scale_tiled_kernel<<<(unsigned int)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), (float)scale, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

scale_cpp_source = "torch::Tensor scale_cuda(torch::Tensor x, double scale);"

scale_ext = load_inline(
    name="kgate_oob_write_scale",
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
