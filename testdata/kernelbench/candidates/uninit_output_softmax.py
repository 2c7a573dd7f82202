# kgate-problem: problems/softmax.py
# expect: fail structure unwritten-output
# baseline: pass
# runs-on: gpu
# why: the launcher sizes the grid for 4 rows per block but the kernel handles one row per block (blockIdx.x), so rows 4.. of the torch::empty output are never written and keep whatever the caching allocator's freed block held. Whether KernelBench's test notices depends on that block: in its loop the free blocks of that size are the previous trial's inputs (N(0,1) values: fail) and reference output (softmax values below 1e-2: pass allclose). On the H200 (2026-11-30) the benchmark's sequential harness, which runs KernelBench's loop in a fresh process, accepted it. kgate's structure gate fills every free block with a sentinel first and sees the unwritten rows whatever the allocator does.
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
constexpr int ROWS_PER_BLOCK = 4;

__device__ __forceinline__ float warp_max(float v) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__global__ void softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float red[THREADS / 32];
    __shared__ float bcast;
    const int64_t row = blockIdx.x;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;

    float m = -INFINITY;
    for (int64_t c = tid; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
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
    for (int64_t c = tid; c < cols; c += THREADS) s += expf(xr[c] - m);
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

    for (int64_t c = tid; c < cols; c += THREADS) yr[c] = expf(xr[c] - m) / s;
}

torch::Tensor softmax_rows_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "softmax_rows_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "softmax_rows_cuda: x must be 2-D");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "softmax_rows_cuda: x must be float32");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.size(0);
    const int64_t cols = xc.size(1);
    if (rows == 0 || cols == 0) return y;
    // ROWS_PER_BLOCK rows per block
    const int64_t blocks = (rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    softmax_rows_kernel<<<(unsigned int)blocks, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

softmax_cpp_source = "torch::Tensor softmax_rows_cuda(torch::Tensor x);"

softmax_ext = load_inline(
    name="kgate_uninit_output_softmax",
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
