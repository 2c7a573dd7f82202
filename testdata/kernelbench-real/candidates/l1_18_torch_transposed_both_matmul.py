# kgate-problem: problems/level1/18_Matmul_with_transposed_both.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: A.T @ B.T computed as (B @ A).T (an identity of the transpose, valid for every input), made contiguous.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.mm(B, A).t().contiguous()
