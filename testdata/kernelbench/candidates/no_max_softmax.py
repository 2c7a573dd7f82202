# kgate-problem: problems/softmax.py
# expect: fail precision reduction-order
# baseline: pass
# runs-on: cpu
# why: softmax as exp(x) / sum(exp(x)) without subtracting the row max: exp overflows to inf for entries above ~88 and the row becomes NaN (mixed-magnitude inputs up to 1e4; large-mean inputs fail the same way), while randn inputs never get near the overflow.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Two-pass softmax: exponentiate, then normalise by the row sum."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = torch.exp(x)
        return e / e.sum(dim=1, keepdim=True)
