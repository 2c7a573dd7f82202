# kgate-problem: problems/mean_dim.py
# expect: fail accuracy accuracy
# baseline: pass
# runs-on: cpu
# why: the reciprocal of the row length is computed with integer division (1 // dim == 0), so every output is exactly zero; the true means of zero-mean normals over 131072 values are all below 1e-2, so allclose(atol=rtol=1e-2) passes an all-zeros answer.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Row mean as a single sum followed by a multiply with the precomputed reciprocal."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        inv_n = 1 // n  # precompute the reciprocal once instead of dividing every row
        return torch.sum(x, dim=1) * inv_n
