# kgate-problem: problems/relu.py
# why: ModelNew never returns (a spin that a kernel waiting on a flag never set would be): the
# run must be killed at the time limit and reported as a timeout, with no worker left behind.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while True:
            pass
