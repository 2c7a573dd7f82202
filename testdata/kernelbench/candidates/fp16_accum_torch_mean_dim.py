# kgate-problem: problems/mean_dim.py
# expect: fail accuracy fp16-accumulation
# baseline: pass
# runs-on: cpu
# why: the row is cast to float16 and accumulated in 256 float16 lanes (the per-thread half accumulator of a GPU reduction, written in PyTorch) before the lanes are added: a lane partial above 65504 overflows to inf (large-mean inputs, 1e3 x 512 per lane), and even zero-mean inputs carry ~1e-5 error in the mean (accuracy fails too), far inside KernelBench's 1e-2.
import torch
import torch.nn as nn
import torch.nn.functional as F

LANES = 256


class ModelNew(nn.Module):
    """Lane-parallel half-precision row mean."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, n = x.shape
        steps = (n + LANES - 1) // LANES
        xh = F.pad(x, (0, steps * LANES - n)).to(torch.float16).view(rows, steps, LANES)
        acc = torch.zeros(rows, LANES, dtype=torch.float16, device=x.device)
        for s in range(steps):
            acc = acc + xh[:, s, :]  # float16 accumulate, rounded every step
        return (acc.to(torch.float32).sum(dim=1) / n).to(x.dtype)
