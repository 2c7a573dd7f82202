# kgate-problem: problems/level1/6_Matmul_with_large_K_dimension.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: split-K: the long reduction axis cut into 16 slices, one fp32 product each, the partial products summed.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        k = A.shape[1]
        step = max(1, (k + 15) // 16)
        parts = [torch.mm(A[:, s:s + step], B[s:s + step]) for s in range(0, k, step)]
        if not parts:
            return torch.zeros(A.shape[0], B.shape[1], dtype=A.dtype, device=A.device)
        return torch.stack(parts).sum(0)
