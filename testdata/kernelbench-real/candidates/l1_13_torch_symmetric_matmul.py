# kgate-problem: problems/level1/13_Matmul_for_symmetric_matrices.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: a general product (no use of the symmetry: the gates feed non-symmetric inputs too) in 4 column blocks of B.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.cat([torch.mm(A, b) for b in B.split(max(1, (B.shape[1] + 3) // 4), dim=1)], 1)
