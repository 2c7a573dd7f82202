# kgate-problem: problems/cross_entropy.py
# expect: pass
# baseline: pass
# runs-on: cpu
# why: correct control: per-sample loss (max - x[target]) + log(sum(exp(x - max))), gathered with the int64 targets and averaged over the actual batch size.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        m = predictions.amax(dim=1, keepdim=True)
        log_z = torch.log(torch.exp(predictions - m).sum(dim=1))
        picked = predictions.gather(1, targets.unsqueeze(1)).squeeze(1)
        per_sample = (m.squeeze(1) - picked) + log_z
        return per_sample.mean()
