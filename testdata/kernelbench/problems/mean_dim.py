import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean of a (batch_size, dim) input over a long dim=1.

    The inputs are zero-mean normals, so every output is within a few 1e-3 of zero:
    a candidate that returns zeros passes allclose(atol=rtol=1e-2).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=1)


batch_size = 16
dim = 131072


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []  # No special initialization inputs needed
