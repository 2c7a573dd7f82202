# kgate-problem: problems/level2/45_Gemm_Sigmoid_LogSumExp.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: two addmm, a sigmoid between them, then a max-subtracted logsumexp over the features.
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
    def __init__(self, in_features, hidden_size, out_features):
        super(ModelNew, self).__init__()
        self.linear1 = nn.Linear(in_features, hidden_size)
        self.linear2 = nn.Linear(hidden_size, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.sigmoid(torch.addmm(self.linear1.bias, x, self.linear1.weight.t()))
        y = torch.addmm(self.linear2.bias, h, self.linear2.weight.t())
        return logsumexp_rows(y).squeeze(1)
