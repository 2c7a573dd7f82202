# kgate-problem: problems/relu.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: a ReLU that processes pairs of elements and raises ValueError for a row of odd length (the shape check a vectorised kernel's launcher makes); a refusal at a shape other than the nominal one is legitimate in every gate.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] % 2:
            raise ValueError("relu_pairs: the last dimension must be even, got %d" % x.shape[-1])
        pairs = x.reshape(*x.shape[:-1], x.shape[-1] // 2, 2)
        return pairs.masked_fill(pairs < 0, 0.0).reshape(x.shape)
