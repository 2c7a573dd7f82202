# kgate-problem: problems/sum_dim.py
# expect: fail structure structure
# baseline: fail
# runs-on: cpu
# why: the row sums are right but returned with keepdim=True, shape (batch_size, 1) instead of (batch_size,); KernelBench's shape check rejects it too, a control for a structure failure that the baseline also sees.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1, keepdim=True)
