# kgate-problem: problems/gemm_swish_tanh.py
# expect: pass decoy
# baseline: pass
# runs-on: cpu
# why: correct control for cancel_tanh_gemm_swish: the same chain with torch.tanh, whose small results are exact to the dtype; at in_features=2 too (no false "formula that cancels").
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x * torch.sigmoid(x) / 2.0
        x = torch.clamp(x, min=-1.0, max=1.0)
        x = torch.tanh(x)
        return torch.clamp(x, min=-1.0, max=1.0)
