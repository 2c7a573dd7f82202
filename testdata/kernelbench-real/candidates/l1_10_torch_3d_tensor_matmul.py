# kgate-problem: problems/level1/10_3D_tensor_matrix_multiplication.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: the 3-D operand flattened to (N*M, K), one 2-D product, reshaped back.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        n, m, k = A.shape
        return torch.mm(A.reshape(n * m, k), B).view(n, m, B.shape[1])
