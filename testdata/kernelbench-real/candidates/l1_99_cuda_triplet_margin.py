# kgate-problem: problems/level1/99_TripletMarginLoss.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: load_inline per-row distances ||a - p + eps|| and ||a - n + eps|| (eps = 1e-6 as pairwise_distance adds it; fixed-order fp32 block sums), the hinge max(d_ap - d_an + margin, 0) keeping NaN; the mean with torch.
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

__global__ void triplet_kernel(const float* __restrict__ a, const float* __restrict__ p, const float* __restrict__ q,
                               float* __restrict__ out, int64_t d, float margin) {
    const int64_t row = blockIdx.x;
    float sp = 0.f, sn = 0.f;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
        const float av = a[row * d + j];
        const float u = av - p[row * d + j] + 1e-6f, v = av - q[row * d + j] + 1e-6f;
        sp += u * u;
        sn += v * v;
    }
    sp = block_reduce<false>(sp);
    sn = block_reduce<false>(sn);
    if (threadIdx.x == 0) {
        const float h = sqrtf(sp) - sqrtf(sn) + margin;
        out[row] = h != h ? h : (h > 0.f ? h : 0.f);
    }
}

torch::Tensor triplet_rows(torch::Tensor a, torch::Tensor p, torch::Tensor n, double margin) {
    TORCH_CHECK(a.is_cuda() && a.scalar_type() == at::kFloat && a.dim() == 2, "2-D float32 CUDA tensors expected");
    TORCH_CHECK(p.sizes() == a.sizes() && n.sizes() == a.sizes() && p.scalar_type() == at::kFloat && n.scalar_type() == at::kFloat, "one shape and dtype");
    const c10::cuda::CUDAGuard guard(a.device());
    auto ac = a.contiguous(), pc = p.contiguous(), nc = n.contiguous();
    const int64_t rows = ac.size(0), d = ac.size(1);
    auto out = torch::empty({rows}, ac.options());
    if (rows == 0) return out;
    triplet_kernel<<<(unsigned)rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(ac.data_ptr<float>(), pc.data_ptr<float>(), nc.data_ptr<float>(),
                                                                                out.data_ptr<float>(), d, (float)margin);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = """torch::Tensor triplet_rows(torch::Tensor a, torch::Tensor p, torch::Tensor n, double margin);"""

ext = load_inline(
    name="kgate_real_l1_99",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["triplet_rows"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, margin=1.0):
        super(ModelNew, self).__init__()
        self.margin = float(margin)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return ext.triplet_rows(anchor, positive, negative, self.margin).mean()
