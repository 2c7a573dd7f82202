# kgate-problem: problems/conv2d.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: convolution as im2col (F.unfold) followed by one matmul with the flattened weights; the weights come from an nn.Conv2d built under the same seed as Model's.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super(ModelNew, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.conv2d.weight
        b = self.conv2d.bias
        n, _, h, wd = x.shape
        kh, kw = w.shape[2], w.shape[3]
        oh, ow = h - kh + 1, wd - kw + 1
        cols = F.unfold(x, kernel_size=(kh, kw))  # (n, C*kh*kw, oh*ow)
        out = torch.matmul(w.reshape(w.shape[0], -1), cols)  # (n, out_channels, oh*ow)
        out = out + b.view(1, -1, 1)
        return out.view(n, w.shape[0], oh, ow)
