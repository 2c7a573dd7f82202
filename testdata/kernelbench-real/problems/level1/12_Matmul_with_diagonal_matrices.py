import torch
import torch.nn as nn


class Model(nn.Module):
    """diag(A) @ B: A is the (N,) diagonal, B is (N, M)."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(A) @ B


M = 4096
N = 4096


def get_inputs():
    return [torch.rand(N), torch.rand(N, M)]


def get_init_inputs():
    return []
