# kgate-problem: problems/gelu.py
# expect: fail freshness stale-result
# baseline: fail
# runs-on: cpu
# why: a result cache keyed by the input's shape ("the model is called with the same shapes every step"): every later call with new values of that shape gets the first call's answer. KernelBench's trials use one shape, so its test fails it from trial 2; kgate names the cause once (freshness: stale-result), and the other gates whose new inputs of a seen shape get old answers (accuracy, nonfinite, precision, reduction-order) report the same cause.
import torch
import torch.nn as nn
import torch.nn.functional as F

_cache = {}


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = tuple(x.shape)
        if key not in _cache:
            _cache[key] = F.gelu(x)
        return _cache[key]
