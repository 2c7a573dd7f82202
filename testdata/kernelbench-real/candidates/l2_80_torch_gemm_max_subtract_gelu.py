# kgate-problem: problems/level2/80_Gemm_Max_Subtract_GELU.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: addmm, the row maximum (amax, NaN-propagating), minus its mean over the size-1 axis, erf GELU.
import math

import torch
import torch.nn as nn


def gelu_erf(x):
    return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))


def logsumexp_rows(x):
    m = x.amax(dim=1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    return m + torch.log(torch.exp(x - m).sum(dim=1, keepdim=True))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.addmm(self.gemm.bias, x, self.gemm.weight.t()).amax(dim=1, keepdim=True)
        return gelu_erf(y - y.mean(dim=1, keepdim=True))
