# kgate-problem: problems/level1/82_conv_depthwise_2D_square_input_square_kernel.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: depthwise convolution as the sum over the k*k taps of a per-channel weight times a strided view of the padded input, same-seed nn.Conv2d weights.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0):
        super(ModelNew, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                groups=in_channels, bias=False)
        self.k, self.s, self.p = kernel_size, stride, padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, s, p = self.k, self.s, self.p
        w = self.conv2d.weight  # (C, 1, k, k)
        oh = (x.shape[2] + 2 * p - k) // s + 1
        ow = (x.shape[3] + 2 * p - k) // s + 1
        xp = F.pad(x, (p, p, p, p))
        out = torch.zeros(x.shape[0], x.shape[1], oh, ow, dtype=x.dtype, device=x.device)
        for i in range(k):
            for j in range(k):
                out += w[:, 0, i, j].view(1, -1, 1, 1) * xp[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s]
        return out
