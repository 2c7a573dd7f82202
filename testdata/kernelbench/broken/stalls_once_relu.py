# kgate-problem: problems/relu.py
# why: correct, but its first run in a check waits 5 s before it starts (as a launch queued
# behind other processes' work on a shared GPU waits) when $KGATE_TEST_STALL_MARK names a file
# that does not exist yet. On a GPU, a run that times out once runs again in a fresh worker, and
# this one then passes, saying so; on the CPU runner a timeout is a hang at once.
import os
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mark = os.environ.get("KGATE_TEST_STALL_MARK")
        if mark and not os.path.exists(mark):
            open(mark, "w").close()
            time.sleep(5)
        return torch.relu(x)
