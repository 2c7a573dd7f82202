# kgate-problem: problems/relu.py
# expect: fail limits index-overflow
# baseline: pass
# runs-on: gpu
# why: element count, grid size and thread index are all 32-bit int and the launch is unchecked (the usual generated-kernel boilerplate): from 2^31 elements on, numel wraps negative, the launch fails with an invalid configuration that nobody reads, and the output is left unwritten; every KernelBench-sized input is far below that.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* x, float* y, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        float v = x[idx];
        y[idx] = v < 0.0f ? 0.0f : v;
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    const int threads = 256;
    int blocks = (n + threads - 1) / threads;
    relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

relu_cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu_ext = load_inline(
    name="kgate_int32_index_relu",
    cpp_sources=relu_cpp_source,
    cuda_sources=relu_source,
    functions=["relu_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.relu = relu_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu.relu_cuda(x.contiguous())
