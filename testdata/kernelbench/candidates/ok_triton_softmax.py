# kgate-problem: problems/softmax.py
# expect: pass
# baseline: pass
# runs-on: gpu
# why: correct control: Triton row softmax, one program per row looping over the row in BLOCK_SIZE chunks (any row length), three passes: max, sum of exp(x - max), normalise; masked lanes load -inf and are excluded from the sum.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride

    m_acc = tl.full((BLOCK_SIZE,), -float("inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        m_acc = tl.maximum(m_acc, x)
    m = tl.max(m_acc, axis=0)

    s_acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf"))
        s_acc += tl.where(mask, tl.exp(x - m), 0.0)
    s = tl.sum(s_acc, axis=0)

    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, tl.exp(x - m) / s, mask=mask)


def triton_softmax(x: torch.Tensor) -> torch.Tensor:
    assert x.is_cuda and x.dim() == 2 and x.dtype == torch.float32
    x = x.contiguous()
    y = torch.empty_like(x)
    rows, cols = x.shape
    if rows == 0 or cols == 0:
        return y
    BLOCK_SIZE = 1024
    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_softmax(x)
