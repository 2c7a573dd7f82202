# kgate-problem: problems/conv2d.py
# expect: fail shapes tf32
# baseline: pass
# runs-on: gpu
# why: the same nn.Conv2d as the reference, with torch.backends.cudnn.allow_tf32 = True, which is PyTorch's own default: cuDNN may then round the fp32 operands to TF32's 10-bit mantissa, ~1e-3 relative per product instead of fp32's 1e-7, well inside allclose(1e-2); on the CPU the flag does nothing, hence runs-on: gpu. cuDNN picks a TF32 algorithm only for some shapes: at the nominal 3 input channels (H200, 2026-12-01) its choice is exact-fp32 and the accuracy gate passes; at 31 channels in the shapes gate it is TF32 (758x the reference's error, 0.85x with TF32 off).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super(ModelNew, self).__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch.backends.cudnn.allow_tf32 = True  # PyTorch's default, set explicitly
        torch.backends.cudnn.benchmark = True  # lets cuDNN pick its fastest (tensor-core) algorithm
        return self.conv2d(x)
