# kgate-problem: problems/softmax.py
# expect: fail accuracy accuracy
# baseline: fail
# runs-on: cpu
# why: softmax normalised over dim=0 (the batch) instead of dim=1 (a transposed-index slip): every value is wrong and KernelBench's own test catches it too, a control for the baseline column.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = x.amax(dim=0, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=0, keepdim=True)
