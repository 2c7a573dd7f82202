# kgate-problem: problems/gemm_swish_tanh.py
# expect: fail shapes approximation
# baseline: pass
# runs-on: cpu
# why: tanh written as 1 - 2/(exp(2x) + 1), as our own Triton control of KernelBench's problem 81 had it: right for large |x|, but near 0 both terms are about 1 and their difference keeps only the digits of 1. At the nominal size the outputs are large enough to pass; at in_features=2 (the shapes gate's boundary) the pre-activations are small, results of 1e-3 err by fp32's rounding of 1 (1e-7), 7x the reference's error. kgate names it: a formula that cancels (cause approximation), not an undiagnosed shapes failure. torch.tanh is exact to the dtype.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x * torch.sigmoid(x) / 2.0
        x = torch.clamp(x, min=-1.0, max=1.0)
        x = 1.0 - 2.0 / (torch.exp(2.0 * x) + 1.0)
        return torch.clamp(x, min=-1.0, max=1.0)
