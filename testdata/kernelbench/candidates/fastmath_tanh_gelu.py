# kgate-problem: problems/gelu.py
# expect: fail accuracy approximation
# baseline: pass
# runs-on: cpu
# why: the exact erf GELU is replaced by the tanh approximation (F.gelu(approximate="tanh"), the "fast GELU"), whose error of up to ~5e-4 is far below KernelBench's 1e-2 tolerance but thousands of times fp32's rounding error.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Fast GELU: tanh formulation instead of erf."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")
