# kgate-problem: problems/relu.py
# why: a ReLU whose output is right but which then triples its input in place, and on every call
# overwrites the copies of its inputs the worker keeps on its device (through the garbage
# collector), so that each run is staged from shared memory. The judge writes a run's inputs into
# shared memory again unless the segment still holds them as sent: here the worker writes every
# input back changed, so every run must get the pristine inputs written again. Only aliasing may
# fail (input-mutated); a run staged from a tripled input would fail accuracy too.
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
        y = torch.relu(x)
        x.mul_(3.0)
        return y
