# kgate-problem: problems/level2/53_Gemm_Scaling_Hardtanh_GELU.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: addmm, scale, clamp to [min, max], GELU from its erf formula.
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
    def __init__(self, in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.s, self.lo, self.hi = scaling_factor, hardtanh_min, hardtanh_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.addmm(self.gemm.bias, x, self.gemm.weight.t()) * self.s
        return gelu_erf(torch.clamp(y, self.lo, self.hi))
