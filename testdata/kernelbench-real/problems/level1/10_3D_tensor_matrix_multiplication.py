import torch
import torch.nn as nn


class Model(nn.Module):
    """A (N, M, K) times B (K, L) along A's last axis."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 16
M = 1024
K = 2048
L = 768


def get_inputs():
    return [torch.rand(N, M, K), torch.rand(K, L)]


def get_init_inputs():
    return []
