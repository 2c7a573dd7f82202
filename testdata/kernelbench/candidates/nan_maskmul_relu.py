# kgate-problem: problems/relu.py
# expect: fail nonfinite spurious-nonfinite
# baseline: pass
# runs-on: cpu
# why: ReLU as a multiply by the positive mask, x * (x > 0): for x = -inf the product is -inf * 0 = NaN where relu gives 0 (NaN created rather than swallowed); a branch-free idiom common in generated code, invisible with finite randn inputs.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Branch-free ReLU: multiply by the 0/1 mask of positive entries."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * (x > 0).to(x.dtype)
