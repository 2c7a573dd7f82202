# kgate-problem: problems/level1/42_Max_Pooling_2D.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: max pooling as the elementwise maximum of kernel_size^2 strided, dilated views of the input padded with -inf (NaN propagates as in nn.MaxPool2d).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super(ModelNew, self).__init__()
        self.k, self.s, self.p, self.d = kernel_size, stride, padding, dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, s, p, d = self.k, self.s, self.p, self.d
        h, w = x.shape[2], x.shape[3]
        oh = (h + 2 * p - d * (k - 1) - 1) // s + 1
        ow = (w + 2 * p - d * (k - 1) - 1) // s + 1
        xp = F.pad(x, (p, p, p, p), value=float("-inf"))
        out = None
        for i in range(k):
            for j in range(k):
                v = xp[:, :, i * d:i * d + s * (oh - 1) + 1:s, j * d:j * d + s * (ow - 1) + 1:s]
                # torch.maximum propagates NaN, like the reference's max
                out = v.clone() if out is None else torch.maximum(out, v)
        return out
