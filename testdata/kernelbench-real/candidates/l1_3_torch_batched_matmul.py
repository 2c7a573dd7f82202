# kgate-problem: problems/level1/3_Batched_matrix_multiplication.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: batched product as einsum over chunks of 16 batch entries, concatenated.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        if A.shape[0] == 0:
            return A.new_zeros(0, A.shape[1], B.shape[2])
        return torch.cat([torch.einsum('bmk,bkn->bmn', a, b) for a, b in zip(A.split(16), B.split(16))], 0)
