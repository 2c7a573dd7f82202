# kgate-problem: problems/layernorm.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: two-pass LayerNorm (mean, then the mean of the centred squares), parameters initialised like nn.LayerNorm (ones and zeros).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super(ModelNew, self).__init__()
        self.normalized_shape = tuple(normalized_shape)
        self.eps = 1e-5
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dims = tuple(range(x.dim() - len(self.normalized_shape), x.dim()))
        mean = x.mean(dim=dims, keepdim=True)
        xc = x - mean
        var = (xc * xc).mean(dim=dims, keepdim=True)
        return xc * torch.rsqrt(var + self.eps) * self.weight + self.bias
