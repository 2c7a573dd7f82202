import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, sigmoid, Linear, logsumexp over features: shape (batch,)."""

    def __init__(self, in_features, hidden_size, out_features):
        super(Model, self).__init__()
        self.linear1 = nn.Linear(in_features, hidden_size)
        self.linear2 = nn.Linear(hidden_size, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear1(x)
        x = torch.sigmoid(x)
        x = self.linear2(x)
        x = torch.logsumexp(x, dim=1)
        return x


batch_size = 16384
in_features = 2048
hidden_size = 4096
out_features = 1024


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden_size, out_features]
