# kgate-problem: problems/relu.py
# why: a correct ReLU that, on every call, overwrites the copies of its inputs the worker keeps on
# its device between runs (found through the garbage collector, as a kernel writing outside its
# buffers would hit them). The worker must notice (the checksum of a kept copy) and stage from
# shared memory: every gate passes, and no run uses a kept copy.
import gc

import torch
import torch.nn as nn


def clobber():
    for o in gc.get_objects():
        kept = getattr(o, "kept", None) if type(o).__name__ == "Worker" else None
        if isinstance(kept, dict):
            for k in kept.values():
                k[1].fill_(0x3F)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        clobber()
        return torch.relu(x)
