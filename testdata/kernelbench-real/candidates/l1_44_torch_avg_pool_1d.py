# kgate-problem: problems/level1/44_Average_Pooling_1D.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: average pooling as the sum of kernel_size strided views of the zero-padded input, divided by kernel_size (the padding counts, as by default).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super(ModelNew, self).__init__()
        self.k, self.s, self.p = kernel_size, stride, padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, s, p = self.k, self.s, self.p
        lo = (x.shape[2] + 2 * p - k) // s + 1
        xp = F.pad(x, (p, p))
        acc = torch.zeros(x.shape[0], x.shape[1], lo, dtype=x.dtype, device=x.device)
        for i in range(k):
            acc += xp[:, :, i:i + s * (lo - 1) + 1:s]
        return acc / k
