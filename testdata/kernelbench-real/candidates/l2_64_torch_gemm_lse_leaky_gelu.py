# kgate-problem: problems/level2/64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: addmm, a max-subtracted logsumexp, the two LeakyReLUs as where(), two erf GELUs.
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
        y = logsumexp_rows(torch.addmm(self.linear.bias, x, self.linear.weight.t()))
        y = torch.where(y >= 0, y, y * 0.01)
        y = torch.where(y >= 0, y, y * 0.01)
        return gelu_erf(gelu_erf(y))
