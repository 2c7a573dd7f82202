# kgate-problem: problems/relu.py
# why: the candidate does not parse; kgate must name the file and line and exit 2.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor
        return torch.relu(x)
