# kgate-problem: problems/kl_div.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: each term xlogy(t, t) - t * log(p) as one fused multiply-add (the product unrounded, as nvcc contracts it in a CUDA kernel), the rows summed, then the batch. Shifted by 1e3, these inputs leave torch's own fp32 reference off by 100% (a row of 16384 probabilities near 6e-5 becomes 1000 and 1000 + one ulp): the precision gate must not fail it for being 20x further off
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        xlogy = torch.xlogy(targets, targets)
        # fma(-t, log p, xlogy): the product is exact in float64, then one rounding to float32
        term = (xlogy.double() - targets.double() * torch.log(predictions).double()).float()
        return term.sum(dim=1).sum() / predictions.shape[0]
