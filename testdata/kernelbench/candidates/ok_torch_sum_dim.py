# kgate-problem: problems/sum_dim.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: row sum as a matrix-vector product with a ones vector (a BLAS reformulation with its own summation order).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ones = torch.ones(x.shape[1], dtype=x.dtype, device=x.device)
        return torch.mv(x, ones)
