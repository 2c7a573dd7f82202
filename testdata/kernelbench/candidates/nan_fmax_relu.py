# kgate-problem: problems/relu.py
# expect: fail nonfinite nan-swallowed
# baseline: pass
# runs-on: cpu
# why: ReLU written as torch.fmax(x, 0), the PyTorch twin of CUDA's fmaxf: fmax returns the non-NaN operand, so NaN inputs come out as 0 while torch.relu propagates them; KernelBench's randn inputs never contain NaN.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ReLU as an elementwise max against a zero scalar tensor."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        zero = torch.zeros((), dtype=x.dtype, device=x.device)
        return torch.fmax(x, zero)
