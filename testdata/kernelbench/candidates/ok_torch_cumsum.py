# kgate-problem: problems/cumsum.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: a two-level blocked scan (scan inside blocks of 256, exclusive scan of the block totals by shifting the inclusive scan, add the carries), padding the last block so any length works; the twin of nan_exclusive_sub_cumsum.
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
        carry = F.pad(torch.cumsum(totals, dim=1)[:, :-1], (1, 0))  # exclusive scan of block totals
        out = (local + carry.unsqueeze(2)).view(rows, nblk * BLOCK)
        return out[:, :n].contiguous()
