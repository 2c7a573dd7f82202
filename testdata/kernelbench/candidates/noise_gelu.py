# kgate-problem: problems/gelu.py
# expect: fail determinism nondeterministic
# baseline: pass
# runs-on: cpu
# why: GELU plus a little fresh noise on every call (1e-6 * randn_like, the shape of a dropout or stochastic-rounding path left on in eval): the outputs differ run to run, far inside KernelBench's allclose. One defect: accuracy's error is the noise (not repeatable, so not an approximation), and aliasing's prefilled runs differ from the zero-prefilled one by no more than two zero-prefilled runs differ from each other. Drew three causes before (approximation, nondeterministic, unwritten-output).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x) + 1e-6 * torch.randn_like(x)
