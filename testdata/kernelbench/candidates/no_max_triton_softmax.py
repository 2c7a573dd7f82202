# kgate-problem: problems/softmax.py
# expect: fail precision reduction-order
# baseline: pass
# runs-on: gpu
# why: Triton softmax that skips the max pass ("saves a full read of the row"): exp(x) overflows to inf for entries above ~88 and the row turns to NaN/0 (mixed-magnitude inputs up to 1e4; large-mean inputs fail the same way), while randn inputs stay far from overflow.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_nomax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride

    s_acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        s_acc += tl.exp(x)
    s = tl.sum(s_acc, axis=0)

    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, tl.exp(x) / s, mask=mask)


def triton_softmax(x: torch.Tensor) -> torch.Tensor:
    assert x.is_cuda and x.dim() == 2 and x.dtype == torch.float32
    x = x.contiguous()
    y = torch.empty_like(x)
    rows, cols = x.shape
    if rows == 0 or cols == 0:
        return y
    BLOCK_SIZE = 1024
    softmax_nomax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_softmax(x)
