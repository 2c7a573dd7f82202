# kgate-problem: problems/level1/16_Matmul_with_transposed_A.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: A transposed into a contiguous copy first, then one product.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.mm(A.t().contiguous(), B)
