# kgate-problem: problems/relu.py
# expect: pass decoy
# baseline: pass
# runs-on: cpu
# why: correct control and a trap for the judge: torch.clamp(x, min=0) looks like fmaxf but propagates NaN in PyTorch (>= 1.13 and 2.x), so unlike nan_fmax_relu it must pass the nonfinite gate. Pure PyTorch launching the same kernels as the reference: on a GPU the decoy check finds no kernel of its own (expect: pass decoy), which is a finding about the work, not a defect of the result.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=0.0)
