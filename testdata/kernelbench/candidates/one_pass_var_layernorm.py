# kgate-problem: problems/layernorm.py
# expect: fail precision reduction-order
# baseline: pass
# runs-on: cpu
# why: the variance is computed in one pass as E[x^2] - E[x]^2 in fp32, which cancels catastrophically when the mean is large against the spread (large-mean inputs 1e3 + noise: the variance loses most of its digits or goes negative and the output turns to NaN); with zero-mean randn inputs it matches to 1e-6.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """LayerNorm with a single fused pass for both moments."""

    def __init__(self, normalized_shape: tuple):
        super(ModelNew, self).__init__()
        self.normalized_shape = tuple(normalized_shape)
        self.eps = 1e-5
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dims = tuple(range(x.dim() - len(self.normalized_shape), x.dim()))
        mean = x.mean(dim=dims, keepdim=True)
        mean_sq = (x * x).mean(dim=dims, keepdim=True)
        var = mean_sq - mean * mean
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias
