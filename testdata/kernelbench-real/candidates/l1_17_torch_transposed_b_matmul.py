# kgate-problem: problems/level1/17_Matmul_with_transposed_B.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: B transposed into a contiguous copy first, then one product.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.mm(A, B.t().contiguous())
