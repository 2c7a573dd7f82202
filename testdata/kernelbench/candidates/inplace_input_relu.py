# kgate-problem: problems/relu.py
# expect: fail aliasing input-mutated
# baseline: pass
# runs-on: cpu
# why: ReLU is applied in place on the input and the input tensor itself is returned (the "inplace=True saves memory" habit); KernelBench computes the reference before calling the candidate, so the overwritten input goes unnoticed, but the caller's input is destroyed and the output shares its storage.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """In-place ReLU: no output allocation at all."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu_(x)
