# kgate-problem: problems/level2/29_Matmul_Mish_Mish.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: addmm with the same-seed nn.Linear weights, then Mish written out twice as x * tanh(softplus(x)).
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
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        y = y * torch.tanh(torch.nn.functional.softplus(y))
        return y * torch.tanh(torch.nn.functional.softplus(y))
