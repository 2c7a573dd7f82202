import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs a single matrix multiplication C = A @ B."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """A: (M, K), B: (K, N) -> C: (M, N)."""
        return torch.matmul(A, B)


M = 256
K = 4096
N = 256


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]


def get_init_inputs():
    return []  # No special initialization inputs needed
