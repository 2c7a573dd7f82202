# kgate-problem: problems/scale.py
# expect: pass decoy
# baseline: pass
# runs-on: cpu
# why: correct control: torch.mul with the Python float from the constructor (float init input). Pure PyTorch launching the same kernels as the reference: on a GPU the decoy check finds no kernel of its own (expect: pass decoy), which is a finding about the work, not a defect of the result.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale_factor: float):
        super(ModelNew, self).__init__()
        self.scale_factor = float(scale_factor)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mul(x, self.scale_factor)
