# kgate-problem: problems/sum_dim.py
# expect: fail determinism nondeterministic
# baseline: pass
# runs-on: gpu
# why: each row is split over 64 blocks whose partial sums are combined with atomicAdd into a zeroed output, so the float additions happen in scheduling order and repeated runs on identical inputs differ in the last bits (the standard "split the reduction, atomicAdd the partials" kernel); the values are within 1e-5 of the sum, far inside KernelBench's tolerance.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

row_sum_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256;

__global__ void row_sum_atomic_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t rows,
                                      int64_t cols) {
    __shared__ float warp_sums[THREADS / 32];
    const int64_t c = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    // rows in a grid-stride loop: gridDim.y stops at 65535 (the one defect here is the atomics)
    for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
        float v = c < cols ? x[row * cols + c] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
        __syncthreads();
        if (threadIdx.x < 32) {
            float w = threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0f;
            for (int off = 16; off > 0; off >>= 1) w += __shfl_down_sync(0xffffffffu, w, off);
            if (threadIdx.x == 0) atomicAdd(&out[row], w);
        }
        __syncthreads();
    }
}

torch::Tensor row_sum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "row_sum_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "row_sum_cuda: x must be 2-D");
    TORCH_CHECK(x.scalar_type() == at::kFloat, "row_sum_cuda: x must be float32");
    const c10::cuda::CUDAGuard device_guard(x.device());
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0);
    const int64_t cols = xc.size(1);
    auto out = torch::zeros({rows}, xc.options());
    if (rows == 0 || cols == 0) return out;
    dim3 grid((unsigned int)((cols + THREADS - 1) / THREADS), (unsigned int)(rows < 65535 ? rows : 65535));
    row_sum_atomic_kernel<<<grid, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

row_sum_cpp_source = "torch::Tensor row_sum_cuda(torch::Tensor x);"

row_sum_ext = load_inline(
    name="kgate_atomics_sum_dim",
    cpp_sources=row_sum_cpp_source,
    cuda_sources=row_sum_source,
    functions=["row_sum_cuda"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.row_sum = row_sum_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.row_sum.row_sum_cuda(x)
