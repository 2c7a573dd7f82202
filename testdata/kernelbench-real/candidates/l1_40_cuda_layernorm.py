# kgate-problem: problems/level1/40_LayerNorm.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: load_inline LayerNorm over 4M-element rows split across many blocks: per-chunk fp32 partial sums (fixed-order block reductions), the chunks combined in order per row for the mean, the same again for the centred squares (two-pass variance), then the affine normalisation; same-seed nn.LayerNorm parameters; 64-bit offsets, current stream.
import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

// fixed-order block reduction (warp shuffles, then the warps in order): deterministic
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_down_sync(0xffffffffu, v, o);
        v = (u > v || u != u) ? u : v;  // NaN wins, as in torch.max
    }
    return v;
}
template <bool MAX> __device__ float block_reduce(float v) {
    __shared__ float part[32];
    __shared__ float result;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = part[0];
        for (int w = 1; w < nw; w++) r = MAX ? ((part[w] > r || part[w] != part[w]) ? part[w] : r) : r + part[w];
        result = r;
    }
    __syncthreads();
    return result;
}

constexpr int64_t CHUNK = 16384;

// MODE 0: sum of x; MODE 1: sum of (x - mean)^2, over chunk blockIdx.x % chunks of row blockIdx.x / chunks
template <int MODE>
__global__ void partial_sums(const float* __restrict__ x, const float* __restrict__ mean, float* __restrict__ part,
                             int64_t n, int64_t chunks) {
    const int64_t row = blockIdx.x / chunks, c = blockIdx.x % chunks;
    const float* xr = x + row * n;
    const int64_t lo = c * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
    const float mu = MODE ? mean[row] : 0.f;
    float s = 0.f;
    for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) {
        const float v = xr[j] - mu;
        s += MODE ? v * v : v;
    }
    s = block_reduce<false>(s);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// MODE 0: mean = sum / n; MODE 1: rstd = 1 / sqrt(sum / n + eps); the chunks of a row in order
template <int MODE>
__global__ void combine(const float* __restrict__ part, float* __restrict__ out, int64_t rows, int64_t chunks, int64_t n, float eps) {
    const int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float s = 0.f;
    for (int64_t c = 0; c < chunks; c++) s += part[row * chunks + c];
    out[row] = MODE ? 1.0f / sqrtf(s / (float)n + eps) : s / (float)n;
}

__global__ void normalise(const float* __restrict__ x, const float* __restrict__ mean, const float* __restrict__ rstd,
                          const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int64_t rows, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows * n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / n, j = i % n;
        y[i] = (x[i] - mean[r]) * rstd[r] * w[j] + b[j];
    }
}

torch::Tensor layernorm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "layernorm: float32 CUDA input expected");
    const c10::cuda::CUDAGuard guard(x.device());
    const int64_t n = w.numel();
    TORCH_CHECK(n > 0 && x.numel() % n == 0, "layernorm: trailing shape does not match the weights");
    auto xc = x.contiguous();
    auto wc = w.contiguous(), bc = b.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.numel() / n;
    if (rows == 0) return y;
    const int64_t chunks = (n + CHUNK - 1) / CHUNK;
    TORCH_CHECK(rows * chunks <= 2147483647LL, "layernorm: too many rows");
    auto opts = xc.options();
    auto part = torch::empty({rows * chunks}, opts);
    auto mean = torch::empty({rows}, opts), rstd = torch::empty({rows}, opts);
    auto stream = at::cuda::getCurrentCUDAStream();
    const unsigned nb = (unsigned)(rows * chunks), rb = (unsigned)((rows + 127) / 128);
    partial_sums<0><<<nb, 256, 0, stream>>>(xc.data_ptr<float>(), nullptr, part.data_ptr<float>(), n, chunks);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    combine<0><<<rb, 128, 0, stream>>>(part.data_ptr<float>(), mean.data_ptr<float>(), rows, chunks, n, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    partial_sums<1><<<nb, 256, 0, stream>>>(xc.data_ptr<float>(), mean.data_ptr<float>(), part.data_ptr<float>(), n, chunks);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    combine<1><<<rb, 128, 0, stream>>>(part.data_ptr<float>(), rstd.data_ptr<float>(), rows, chunks, n, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const int64_t blocks = std::min<int64_t>((rows * n + 255) / 256, 65535LL * 8);
    normalise<<<(unsigned)blocks, 256, 0, stream>>>(xc.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(),
                                                     wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), rows, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = """torch::Tensor layernorm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"""

ext = load_inline(
    name="kgate_real_l1_40",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["layernorm"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super(ModelNew, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.layernorm(x, self.ln.weight, self.ln.bias, self.ln.eps)
