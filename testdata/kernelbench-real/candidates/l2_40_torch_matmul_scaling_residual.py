# kgate-problem: problems/level2/40_Matmul_Scaling_ResidualAdd.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: addmm, then x * s + x folded into one multiplication by (1 + s).
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
        self.matmul = nn.Linear(in_features, out_features)
        self.factor = 1.0 + scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.matmul.bias, x, self.matmul.weight.t()) * self.factor
