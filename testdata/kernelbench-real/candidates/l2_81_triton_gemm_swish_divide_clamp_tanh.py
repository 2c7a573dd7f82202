# kgate-problem: problems/level2/81_Gemm_Swish_Divide_Clamp_Tanh_Clamp.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: torch.mm for the GEMM, then a Triton epilogue: bias, Swish, halving, a NaN-keeping clamp to [-1, 1], libdevice's tanh (the same tanhf as torch.tanh; the once-used 1 - 2 / (exp(2v) + 1) cancels near 0, and kgate's shapes gate caught it at in_features=2: 5.6x the reference's error), the second clamp; same-seed nn.Linear; 64-bit offsets.
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def epilogue_kernel(y_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(b_ptr + offs % cols, mask=mask, other=0.0)
    v = v * tl.sigmoid(v)
    v = v / 2.0
    v = tl.where(v != v, v, tl.where(v < -1.0, -1.0, tl.where(v > 1.0, 1.0, v)))
    v = libdevice.tanh(v)
    v = tl.where(v != v, v, tl.where(v < -1.0, -1.0, tl.where(v > 1.0, 1.0, v)))
    tl.store(out_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.lin = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.is_cuda and x.dtype == torch.float32
        w, b = self.lin.weight, self.lin.bias
        y = torch.mm(x, w.t()).contiguous()  # the GEMM by cuBLAS in fp32; bias and epilogue fused below
        out = torch.empty_like(y)
        n = y.numel()
        if n == 0:
            return out
        BLOCK = 1024
        epilogue_kernel[(triton.cdiv(n, BLOCK),)](y, b.contiguous(), out, n, y.shape[1], BLOCK=BLOCK)
        return out
