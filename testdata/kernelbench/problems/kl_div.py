import torch
import torch.nn as nn


class Model(nn.Module):
    """KL divergence of two row distributions, reduction batchmean (KernelBench level 1 #98)."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction="batchmean")


batch_size = 16
features = 16384


def get_inputs():
    scale = torch.rand(())
    return [(torch.rand(batch_size, features) * scale).softmax(dim=-1), torch.rand(batch_size, features).softmax(dim=-1)]


def get_init_inputs():
    return []
