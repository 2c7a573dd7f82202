# kgate-problem: problems/level1/8_Matmul_with_irregular_shapes.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: load_inline tiled SGEMM (64x64 tiles, 4x4 per thread, shared-memory K steps of 16, fp32 fmaf accumulation), every load and store bounds-checked, so sizes that are multiples of no tile work; 64-bit offsets, current stream.
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

// C = A (M x K) @ B (K x N), row-major, fp32 accumulation: 64x64 tiles of C per block of 256 threads,
// each thread a 4x4 patch; K in steps of 16 through shared memory; every load and store bounds-checked
constexpr int BM = 64, BN = 64, BK = 16;
template <bool TRIU>
__global__ void sgemm_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                             int64_t M, int64_t N, int64_t K) {
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int64_t row0 = (int64_t)blockIdx.y * BM, col0 = (int64_t)blockIdx.x * BN;
    float acc[4][4] = {{0.f}};
    for (int64_t k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += 256) {
            const int r = i / BK, c = i % BK;
            const int64_t gr = row0 + r, gc = k0 + c;
            As[c][r] = (gr < M && gc < K) ? A[gr * K + gc] : 0.f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += 256) {
            const int r = i / BN, c = i % BN;
            const int64_t gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[gr * N + gc] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int64_t r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
            if (r < M && c < N) C[r * N + c] = (TRIU && c < r) ? 0.f : acc[i][j];
        }
}

template <bool TRIU>
torch::Tensor sgemm(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat,
                "sgemm: float32 CUDA tensors expected");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "sgemm: (M, K) @ (K, N) expected");
    const c10::cuda::CUDAGuard guard(a.device());
    auto ac = a.contiguous(), bc = b.contiguous();
    const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);
    auto c = torch::empty({M, N}, ac.options());
    if (M == 0 || N == 0) return c;
    if (K == 0) return c.zero_();
    TORCH_CHECK((M + BM - 1) / BM <= 65535, "sgemm: M too large for the grid");
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
    sgemm_kernel<TRIU><<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(ac.data_ptr<float>(), bc.data_ptr<float>(),
                                                                           c.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) { return sgemm<false>(a, b); }
"""

cpp_source = """torch::Tensor matmul(torch::Tensor a, torch::Tensor b);"""

ext = load_inline(
    name="kgate_real_l1_8",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["matmul"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return ext.matmul(A, B)
