# kgate-problem: problems/matmul.py
# expect: fail accuracy fp16-compute
# baseline: pass
# runs-on: cpu
# why: the operands are cast to float16 "for the tensor cores" and the product taken in float32 (x.half().float() @ w.half().float(), what autocast does to a matmul's inputs): 10-bit mantissas like TF32's, so the error looks like TF32, but fp16's range ends at 65504, which TF32's does not; with torch.rand inputs the result stays far inside allclose(1e-2).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A.half().float() @ B.half().float()
