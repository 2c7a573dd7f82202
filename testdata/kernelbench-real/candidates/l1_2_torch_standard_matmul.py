# kgate-problem: problems/level1/2_Standard_matrix_multiplication.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: rows of A in blocks of 512, each block one torch.mm written into a preallocated output.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        out = torch.empty(A.shape[0], B.shape[1], dtype=A.dtype, device=A.device)
        for r in range(0, A.shape[0], 512):
            torch.mm(A[r:r + 512], B, out=out[r:r + 512])
        return out
