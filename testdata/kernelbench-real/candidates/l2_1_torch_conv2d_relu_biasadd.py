# kgate-problem: problems/level2/1_Conv2D_ReLU_BiasAdd.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: the convolution as the sum over the k*k taps of one channel-mixing product each (a 1x1 convolution written as matmul on a shifted view), plus the conv bias, ReLU, plus the extra bias; same-seed parameters.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = self.conv.weight, self.conv.bias  # (O, C, k, k)
        k = w.shape[2]
        oh, ow = x.shape[2] - k + 1, x.shape[3] - k + 1
        out = torch.zeros(x.shape[0], w.shape[0], oh, ow, dtype=x.dtype, device=x.device)
        for i in range(k):
            for j in range(k):
                out += torch.einsum("oc,nchw->nohw", w[:, :, i, j], x[:, :, i:i + oh, j:j + ow])
        return torch.relu(out + b.view(1, -1, 1, 1)) + self.bias
