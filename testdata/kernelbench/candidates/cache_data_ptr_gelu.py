# kgate-problem: problems/gelu.py
# expect: fail freshness stale-result
# baseline: pass
# runs-on: cpu
# why: a one-entry memo keyed by the input's data_ptr/shape/stride returns the previous output whenever it is called again on the same buffer, so the same storage rewritten with new values gets the stale result (the "skip recomputation for the same activation buffer" shortcut); the memo keeps the last input alive, so KernelBench's next trial can never land at the same address and all five trials recompute.
import math

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Exact GELU with a one-entry result cache for repeated calls on the same activation buffer."""

    def __init__(self):
        super(ModelNew, self).__init__()
        self._last_input = None
        self._last_output = None

    def _same_buffer(self, x):
        y = self._last_input
        return (y is not None and y.data_ptr() == x.data_ptr() and y.shape == x.shape
                and y.stride() == x.stride() and y.dtype == x.dtype and y.device == x.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._same_buffer(x):
            return self._last_output
        out = 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
        self._last_input = x
        self._last_output = out
        return out
