# kgate-problem: problems/linear.py
# expect: pass decoy
# baseline: pass
# runs-on: cpu
# why: correct control for same-seed weight init: the constructor builds its own nn.Linear exactly as Model does, so under the same torch.manual_seed the weights are identical; forward is x @ W^T + b via addmm. Pure PyTorch launching the same kernels as the reference: on a GPU the decoy check finds no kernel of its own (expect: pass decoy), which is a finding about the work, not a defect of the result.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.linear.bias, x, self.linear.weight.t())
