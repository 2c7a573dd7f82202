# kgate-problem: problems/level2/22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: torch.addmm for the GEMM, then a load_inline row kernel: 2 * scale (the x + x residual), a NaN-keeping clamp, a max-subtracted logsumexp (fixed-order fp32 block reductions, an infinite max replaced by 0 as torch.logsumexp does), then v * mish(v) with softplus' threshold of 20; same-seed nn.Linear; current stream.
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

__global__ void lse_mish_rows(const float* __restrict__ y, float* __restrict__ out, int64_t n, float scale, float lo, float hi) {
    const int64_t row = blockIdx.x;
    const float* yr = y + row * n;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        float v = yr[j] * scale;
        v = v + v;
        v = v != v ? v : (v < lo ? lo : (v > hi ? hi : v));
        m = (v > m || v != v) ? v : m;
    }
    m = block_reduce<true>(m);
    const float shift = isinf(m) ? 0.f : m;
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        float v = yr[j] * scale;
        v = v + v;
        v = v != v ? v : (v < lo ? lo : (v > hi ? hi : v));
        s += expf(v - shift);
    }
    s = block_reduce<false>(s);
    if (threadIdx.x == 0) {
        const float l = shift + logf(s);
        const float sp = l > 20.f ? l : log1pf(expf(l));
        out[row] = l * (l * tanhf(sp));
    }
}

torch::Tensor lse_mish(torch::Tensor y, double scale, double lo, double hi) {
    TORCH_CHECK(y.is_cuda() && y.scalar_type() == at::kFloat && y.dim() == 2, "2-D float32 CUDA tensor expected");
    const c10::cuda::CUDAGuard guard(y.device());
    auto yc = y.contiguous();
    auto out = torch::empty({yc.size(0), 1}, yc.options());
    if (yc.size(0) == 0) return out;
    lse_mish_rows<<<(unsigned)yc.size(0), 256, 0, at::cuda::getCurrentCUDAStream()>>>(yc.data_ptr<float>(), out.data_ptr<float>(), yc.size(1),
                                                                                      (float)scale, (float)lo, (float)hi);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = """torch::Tensor lse_mish(torch::Tensor y, double scale, double lo, double hi);"""

ext = load_inline(
    name="kgate_real_l2_22",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["lse_mish"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale_factor, clamp_min, clamp_max):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scale, self.lo, self.hi = float(scale_factor), float(clamp_min), float(clamp_max)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.addmm(self.matmul.bias, x, self.matmul.weight.t())
        return ext.lse_mish(y, self.scale, self.lo, self.hi)
