# kgate-problem: problems/softmax.py
# expect: fail precision reduction-order
# baseline: pass
# runs-on: cpu
# why: softmax as exp(x - logsumexp(x)), stable against overflow but not against cancellation: at 1e3 + N(0,1) the subtraction of two numbers near 1000 leaves an absolute error of ulp(1000) ~ 6e-5 in the exponent, 69x the max-shifted reference's error; right on N(0,1). Its precision and reduction-order failures were two causes (approximation, then reduction-order): an approximation now has to show on N(0,1) inputs too.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x - torch.logsumexp(x, dim=1, keepdim=True))
