# kgate-problem: problems/relu.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: ReLU as masked_fill of the negative entries, which keeps NaN (NaN < 0 is false) and maps -inf to 0 like torch.relu.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.masked_fill(x < 0, 0.0)
