# kgate-problem: problems/level2/99_Matmul_GELU_Softmax.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: torch.addmm for the GEMM, then a load_inline row kernel (one block per row): exact GELU, the row max, the sum of exp(g - max) and the normalisation, fixed-order fp32 block reductions; same-seed nn.Linear; current stream.
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

__device__ __forceinline__ float gelu_erf(float v) { return 0.5f * v * (1.0f + erff(v * 0.7071067811865476f)); }

__global__ void gelu_softmax_rows(const float* __restrict__ y, float* __restrict__ out, int64_t n) {
    const int64_t row = blockIdx.x;
    const float* yr = y + row * n;
    float* orow = out + row * n;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const float g = gelu_erf(yr[j]);
        orow[j] = g;
        m = (g > m || g != g) ? g : m;
    }
    m = block_reduce<true>(m);
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const float e = expf(orow[j] - m);
        orow[j] = e;
        s += e;
    }
    s = block_reduce<false>(s);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) orow[j] = orow[j] / s;
}

torch::Tensor gelu_softmax(torch::Tensor y) {
    TORCH_CHECK(y.is_cuda() && y.scalar_type() == at::kFloat && y.dim() == 2, "2-D float32 CUDA tensor expected");
    const c10::cuda::CUDAGuard guard(y.device());
    auto yc = y.contiguous();
    auto out = torch::empty_like(yc);
    if (yc.numel() == 0) return out;
    gelu_softmax_rows<<<(unsigned)yc.size(0), 256, 0, at::cuda::getCurrentCUDAStream()>>>(yc.data_ptr<float>(), out.data_ptr<float>(), yc.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = """torch::Tensor gelu_softmax(torch::Tensor y);"""

ext = load_inline(
    name="kgate_real_l2_99",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["gelu_softmax"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.gelu_softmax(torch.addmm(self.linear.bias, x, self.linear.weight.t()))
