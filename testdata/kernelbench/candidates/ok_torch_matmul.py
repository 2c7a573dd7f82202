# kgate-problem: problems/matmul.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: the K dimension is split into chunks of 512 whose partial products are accumulated in the input dtype (a split-K reformulation; any K, including K not a multiple of 512).
import torch
import torch.nn as nn

K_CHUNK = 512


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        k = A.shape[1]
        out = torch.zeros(A.shape[0], B.shape[1], dtype=A.dtype, device=A.device)
        for k0 in range(0, k, K_CHUNK):
            k1 = min(k0 + K_CHUNK, k)
            out += A[:, k0:k1] @ B[k0:k1, :]
        return out
