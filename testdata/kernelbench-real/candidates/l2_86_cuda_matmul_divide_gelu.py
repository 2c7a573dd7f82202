# kgate-problem: problems/level2/86_Matmul_Divide_GELU.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: torch.mm for the GEMM, then a load_inline epilogue: bias, division by the divisor, exact GELU with erff; same-seed nn.Linear; 64-bit indices, current stream.
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

// y[r, c] = f(mm[r, c] + bias[c]) over a contiguous (rows, cols) product, in place, grid-stride, 64-bit indices; F a functor (no extended lambdas needed)
template <typename F>
__global__ void epilogue(float* __restrict__ y, const float* __restrict__ bias, int64_t rows, int64_t cols, F f) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < rows * cols; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = f(y[i] + bias[i % cols], i % cols);
}

__device__ __forceinline__ float nan_keep_clamp(float v, float lo, float hi) { return v != v ? v : (v < lo ? lo : (v > hi ? hi : v)); }
__device__ __forceinline__ float gelu_erf(float v) { return 0.5f * v * (1.0f + erff(v * 0.7071067811865476f)); }
__device__ __forceinline__ float sigmoidf(float v) { return 1.0f / (1.0f + expf(-v)); }

template <typename F>
torch::Tensor gemm_epilogue(torch::Tensor x, torch::Tensor w, torch::Tensor bias, F f) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat, "float32 CUDA tensors expected");
    const c10::cuda::CUDAGuard guard(x.device());
    auto y = torch::mm(x, w.t()).contiguous();  // the GEMM by cuBLAS (fp32), the epilogue fused below
    auto bc = bias.contiguous();
    const int64_t rows = y.size(0), cols = y.size(1);
    if (rows * cols == 0) return y;
    const int64_t blocks = std::min<int64_t>((rows * cols + 255) / 256, 65535LL * 8);
    epilogue<<<(unsigned)blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), bc.data_ptr<float>(), rows, cols, f);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

struct DivGelu {
    float divisor;
    __device__ float operator()(float v, int64_t) const { return gelu_erf(v / divisor); }
};

torch::Tensor forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double divisor) {
    return gemm_epilogue(x, w, b, DivGelu{(float)divisor});
}
"""

cpp_source = """torch::Tensor forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double divisor);"""

ext = load_inline(
    name="kgate_real_l2_86",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["forward"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = float(divisor)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.forward(x, self.linear.weight, self.linear.bias, self.divisor)
