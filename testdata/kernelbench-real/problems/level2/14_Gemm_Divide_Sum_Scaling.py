import torch
import torch.nn as nn


class Model(nn.Module):
    """x @ W.T (W a randn parameter), halved, summed over features, scaled: shape (batch, 1)."""

    def __init__(self, in_features, out_features, scaling_factor):
        super(Model, self).__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features))
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.matmul(x, self.weight.T)
        x = x / 2
        x = torch.sum(x, dim=1, keepdim=True)
        x = x * self.scaling_factor
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
scaling_factor = 1.5


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
