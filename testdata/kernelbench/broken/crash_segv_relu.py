# kgate-problem: problems/relu.py
# why: ModelNew dereferences a null pointer (as a kernel launcher with a bad pointer would crash
# the process): the worker dies with SIGSEGV; kgate must report the crash per gate and go on.
import ctypes

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ctypes.string_at(0)
        return torch.relu(x)
