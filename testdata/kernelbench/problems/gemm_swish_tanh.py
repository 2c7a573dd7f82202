import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2 problem 81 at a small size: Linear, Swish, halve, clamp to [-1, 1], tanh,
    clamp to [-1, 1]."""

    def __init__(self, in_features, out_features):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x * torch.sigmoid(x)
        x = x / 2.0
        x = torch.clamp(x, min=-1.0, max=1.0)
        x = torch.tanh(x)
        x = torch.clamp(x, min=-1.0, max=1.0)
        return x


batch_size = 64
in_features = 256
out_features = 256


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
