# kgate-problem: problems/level2/70_Gemm_Sigmoid_Scaling_ResidualAdd.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: torch.mm for the GEMM, then a Triton epilogue: bias, then sigmoid(v) * s + v in fp32; same-seed nn.Linear; 64-bit offsets.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def epilogue_kernel(y_ptr, b_ptr, out_ptr, n, cols, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(b_ptr + offs % cols, mask=mask, other=0.0)
    v = tl.sigmoid(v) * scale + v
    tl.store(out_ptr + offs, v, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super(ModelNew, self).__init__()
        self.lin = nn.Linear(in_features, out_features)
        self.scale = float(scaling_factor)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.is_cuda and x.dtype == torch.float32
        w, b = self.lin.weight, self.lin.bias
        y = torch.mm(x, w.t()).contiguous()  # the GEMM by cuBLAS in fp32; bias and epilogue fused below
        out = torch.empty_like(y)
        n = y.numel()
        if n == 0:
            return out
        BLOCK = 1024
        epilogue_kernel[(triton.cdiv(n, BLOCK),)](y, b.contiguous(), out, n, y.shape[1], self.scale, BLOCK=BLOCK)
        return out
