# kgate-problem: ../kernelbench/problems/relu.py
# why: a hostile KernelBench-format candidate for tests/hostile.sh: a correct ReLU whose import leaves a detached process behind (a child that starts a session of its own, and its child, named kgate-stray). Nothing it starts may outlive the check.
import ctypes
import os
import time

import torch
import torch.nn as nn

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b"kgate-stray", 0, 0, 0)  # PR_SET_NAME
        while True:
            time.sleep(1000)
    os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
