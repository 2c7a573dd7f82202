# kgate-problem: problems/level1/95_CrossEntropyLoss.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: load_inline per-row loss (one block per row: max, then the sum of exp(x - max), fixed-order block reductions in fp32) minus the target's logit; the mean over the rows with torch; an out-of-range target gives NaN instead of reading out of bounds.
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

__global__ void ce_rows(const float* __restrict__ x, const int64_t* __restrict__ t, float* __restrict__ loss, int64_t c) {
    const int64_t row = blockIdx.x;
    const float* xr = x + row * c;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) m = (xr[j] > m || xr[j] != xr[j]) ? xr[j] : m;
    m = block_reduce<true>(m);
    const float shift = m;  // as log_softmax: an infinite max gives NaN, as there
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) s += expf(xr[j] - shift);
    s = block_reduce<false>(s);
    if (threadIdx.x == 0) {
        const int64_t k = t[row];
        loss[row] = (k >= 0 && k < c) ? shift + logf(s) - xr[k] : __int_as_float(0x7fc00000);
    }
}

torch::Tensor row_losses(torch::Tensor logits, torch::Tensor targets) {
    TORCH_CHECK(logits.is_cuda() && logits.scalar_type() == at::kFloat && logits.dim() == 2, "logits: 2-D float32 CUDA");
    TORCH_CHECK(targets.is_cuda() && targets.scalar_type() == at::kLong && targets.numel() == logits.size(0), "targets: int64, one per row");
    const c10::cuda::CUDAGuard guard(logits.device());
    auto x = logits.contiguous();
    auto t = targets.contiguous();
    const int64_t rows = x.size(0), c = x.size(1);
    auto loss = torch::empty({rows}, x.options());
    if (rows == 0) return loss;
    TORCH_CHECK(rows <= 2147483647LL, "too many rows");
    ce_rows<<<(unsigned)rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), t.data_ptr<int64_t>(), loss.data_ptr<float>(), c);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return loss;
}
"""

cpp_source = """torch::Tensor row_losses(torch::Tensor logits, torch::Tensor targets);"""

ext = load_inline(
    name="kgate_real_l1_95",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["row_losses"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return ext.row_losses(predictions, targets).mean()
