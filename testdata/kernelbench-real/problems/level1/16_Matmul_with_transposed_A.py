import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A.T @ B with A stored (K, M)."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


M = 2048
K = 8192
N = 4096


def get_inputs():
    return [torch.rand(K, M), torch.rand(K, N)]


def get_init_inputs():
    return []
