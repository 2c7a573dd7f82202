# kgate-problem: problems/level1/1_Square_matrix_multiplication.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: the product accumulated over K in blocks of 1024 columns (addmm_ into an fp32 output), so the reduction runs in a different order than one GEMM.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        n, k = A.shape
        out = torch.zeros(n, B.shape[1], dtype=A.dtype, device=A.device)
        for k0 in range(0, k, 1024):
            out.addmm_(A[:, k0:k0 + 1024], B[k0:k0 + 1024])
        return out
