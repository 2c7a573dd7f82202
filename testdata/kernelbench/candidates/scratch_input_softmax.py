# kgate-problem: problems/softmax.py
# expect: fail aliasing input-mutated
# baseline: pass
# runs-on: gpu
# why: the kernel stores exp(x - max) back into the input buffer to avoid recomputing it (input used as scratch), so the caller's x is overwritten although the returned softmax is right; KernelBench computes the reference before calling the candidate and never looks at the inputs again.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cmath>

constexpr int THREADS = 256;

__device__ __forceinline__ float nan_max(float a, float b) {
    return (a > b || a != a) ? a : b;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int off = 16; off > 0; off >>= 1) v = nan_max(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// x is read and then overwritten with exp(x - max): saves one expf per element in the last pass
__global__ void softmax_inplace_scratch_kernel(float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float red[THREADS / 32];
    __shared__ float bcast;
    const int64_t row = blockIdx.x;
    float* xr = x + row * cols;
    float* yr = y + row * cols;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;

    float m = -INFINITY;
    for (int64_t c = tid; c < cols; c += THREADS) m = nan_max(m, xr[c]);
    m = warp_max(m);
    if (lane == 0) red[warp] = m;
    __syncthreads();
    if (warp == 0) {
        float v = lane < THREADS / 32 ? red[lane] : -INFINITY;
        v = warp_max(v);
        if (lane == 0) bcast = v;
    }
    __syncthreads();
    m = bcast;
    __syncthreads();

    float s = 0.0f;
    for (int64_t c = tid; c < cols; c += THREADS) {
        const float e = expf(xr[c] - m);
        xr[c] = e;
        s += e;
    }
    s = warp_sum(s);
    if (lane == 0) red[warp] = s;
    __syncthreads();
    if (warp == 0) {
        float v = lane < THREADS / 32 ? red[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) bcast = v;
    }
    __syncthreads();
    s = bcast;

    for (int64_t c = tid; c < cols; c += THREADS) yr[c] = xr[c] / s;
}

torch::Tensor softmax_rows_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "softmax_rows_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "softmax_rows_cuda: x must be 2-D");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "softmax_rows_cuda: x must be float32");
    TORCH_CHECK(x.is_contiguous(), "softmax_rows_cuda: x must be contiguous");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto y = torch::empty_like(x);
    const int64_t rows = x.size(0);
    const int64_t cols = x.size(1);
    if (rows == 0 || cols == 0) return y;
    softmax_inplace_scratch_kernel<<<(unsigned int)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

softmax_cpp_source = "torch::Tensor softmax_rows_cuda(torch::Tensor x);"

softmax_ext = load_inline(
    name="kgate_scratch_input_softmax",
    cpp_sources=softmax_cpp_source,
    cuda_sources=softmax_source,
    functions=["softmax_rows_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.softmax = softmax_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.softmax.softmax_rows_cuda(x)
