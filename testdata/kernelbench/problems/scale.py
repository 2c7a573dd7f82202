import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies the input by a constant given to the constructor as a Python float."""

    def __init__(self, scale_factor: float):
        super(Model, self).__init__()
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale_factor


batch_size = 16
dim = 4096
scale_factor = 1.7  # a float, not a shape symbol


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [scale_factor]
