# kgate-problem: problems/cumsum.py
# expect: fail nonfinite spurious-nonfinite
# baseline: pass
# runs-on: cpu
# why: a two-level blocked scan whose exclusive scan of the block totals is taken as inclusive-scan minus totals: a block holding an inf gets inf - inf = NaN as its own carry (and a NaN poisons the entries before it in its block), so non-finite inputs give NaN where cumsum gives +-inf or finite prefixes; exact enough for finite randn inputs.
import torch
import torch.nn as nn
import torch.nn.functional as F

BLOCK = 256


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, n = x.shape
        nblk = (n + BLOCK - 1) // BLOCK
        xp = F.pad(x, (0, nblk * BLOCK - n)).view(rows, nblk, BLOCK)
        local = torch.cumsum(xp, dim=2)
        totals = local[:, :, -1]
        carry = torch.cumsum(totals, dim=1) - totals  # exclusive scan of block totals
        out = (local + carry.unsqueeze(2)).view(rows, nblk * BLOCK)
        return out[:, :n].contiguous()
