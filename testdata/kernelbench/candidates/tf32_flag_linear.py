# kgate-problem: problems/linear.py
# expect: fail accuracy tf32
# baseline: pass
# runs-on: gpu
# why: forward switches on TF32 tensor-core matmuls (torch.backends.cuda.matmul.allow_tf32 = True, the one-line "8x faster" tip) before a plain nn.Linear, so the fp32 GEMM rounds its operands to a 10-bit mantissa; the flag is process-global and stays on, so any fp32 reference computed later in the same process is TF32 too. Pure PyTorch, but on the CPU the flag does nothing and the candidate is correct, hence runs-on: gpu.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        return self.linear(x)
