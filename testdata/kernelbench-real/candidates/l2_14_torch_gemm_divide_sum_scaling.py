# kgate-problem: problems/level2/14_Gemm_Divide_Sum_Scaling.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: one torch.mm with the same-seed randn weight, the row sum, then the two scalings folded into one factor 0.5 * s.
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
    def __init__(self, in_features, out_features, scaling_factor):
        super(ModelNew, self).__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features))
        self.factor = 0.5 * scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mm(x, self.weight.t()).sum(dim=1, keepdim=True) * self.factor
