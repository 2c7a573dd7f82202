# kgate-problem: problems/cross_entropy.py
# expect: fail shapes shape-specific
# baseline: pass
# runs-on: cpu
# why: the batch mean is folded into a multiply by 1/512, the problem's batch_size copied in as a literal, so every other batch size silently returns the wrong loss (no error, no shape mismatch); KernelBench only ever runs the problem's own constants.
import torch
import torch.nn as nn

BATCH_SIZE = 512  # from the problem definition
INV_BATCH = 1.0 / BATCH_SIZE


class ModelNew(nn.Module):
    """Fused log-softmax + NLL + mean, with the mean folded into a constant multiply."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        m = predictions.amax(dim=1, keepdim=True)
        log_z = torch.log(torch.exp(predictions - m).sum(dim=1))
        picked = predictions.gather(1, targets.unsqueeze(1)).squeeze(1)
        per_sample = (m.squeeze(1) - picked) + log_z
        return per_sample.sum() * INV_BATCH
