# kgate-problem: problems/gelu.py
# expect: fail accuracy bf16-compute
# baseline: pass
# runs-on: cpu
# why: GELU computed on a bfloat16 copy of the input and widened back (x.bfloat16() ... .float(), the shape of an autocast region): ~2^-9 relative error, far inside KernelBench's allclose(1e-2), and every output value a bf16 number. Was called "approximation" (a systematic error with no reduction), which sends the reader to the formula instead of the dtype.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x.to(torch.bfloat16)).float()
