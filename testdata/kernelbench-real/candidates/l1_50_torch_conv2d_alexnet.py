# kgate-problem: problems/level1/50_conv_standard_2D_square_input_square_kernel.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: convolution as im2col (F.unfold) and one matmul per chunk of 32 images, the weights from an nn.Conv2d built under the same seed as Model's.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super(ModelNew, self).__init__()
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = self.conv1.weight, self.conv1.bias
        n, _, h, wd = x.shape
        oh, ow = (h + 4 - 11) // 4 + 1, (wd + 4 - 11) // 4 + 1
        wf = w.reshape(w.shape[0], -1)
        outs = []
        for xc in x.split(32):
            cols = F.unfold(xc, kernel_size=11, padding=2, stride=4)  # (n, 3*121, oh*ow)
            outs.append((torch.matmul(wf, cols) + b.view(1, -1, 1)).view(xc.shape[0], -1, oh, ow))
        if not outs:
            return x.new_zeros(0, w.shape[0], oh, ow)
        return torch.cat(outs, 0)
