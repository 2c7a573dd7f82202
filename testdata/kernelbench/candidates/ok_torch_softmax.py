# kgate-problem: problems/softmax.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: manual softmax with the row max subtracted before exp (the max and the sum both propagate NaN/inf like torch.softmax).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = x.amax(dim=1, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=1, keepdim=True)
