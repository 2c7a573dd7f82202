# kgate-problem: problems/mean_dim.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control and the twin of all_zeros_mean_dim: the same sum-times-reciprocal, with true division (1.0 / dim).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inv_n = 1.0 / x.shape[1]
        return torch.sum(x, dim=1) * inv_n
