# kgate-problem: problems/scale.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: torch.mul with the Python float from the constructor (float init input).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale_factor: float):
        super(ModelNew, self).__init__()
        self.scale_factor = float(scale_factor)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mul(x, self.scale_factor)
