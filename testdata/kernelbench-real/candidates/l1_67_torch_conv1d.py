# kgate-problem: problems/level1/67_conv_standard_1D.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: 1-D convolution as the sum over kernel taps of one channel-mixing product each (W[:, :, t] applied to the shifted input), same-seed nn.Conv1d weights.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super(ModelNew, self).__init__()
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.conv1d.weight  # (out, in, k)
        k = w.shape[2]
        lo = x.shape[2] - k + 1
        out = torch.zeros(x.shape[0], w.shape[0], lo, dtype=x.dtype, device=x.device)
        for t in range(k):
            out += torch.matmul(w[:, :, t], x[:, :, t:t + lo])
        return out
