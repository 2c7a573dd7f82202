# kgate-problem: problems/gelu.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: exact GELU written out as 0.5 * x * (1 + erf(x / sqrt(2))), the same formula as F.gelu's default.
import math

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
