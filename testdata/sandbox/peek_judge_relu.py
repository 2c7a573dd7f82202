# kgate-problem: ../kernelbench/problems/relu.py
# expect: pass
# why: a hostile candidate for tests/sandbox.sh: a correct ReLU, except that when its import can read the memory of the kgate judge or the oracle worker (found through /proc) it returns NaN, standing for a candidate that copies the expected outputs it found there. Under kgate's sandbox the read must fail.
import os

import torch
import torch.nn as nn


def peek():
    """True if 16 bytes of a readable mapping of a `kgate check` process (the judge) or of a
    torch_runner process (the oracle worker among them) could be read."""
    me = os.readlink("/proc/self")  # this process as /proc numbers it (its PID namespace may differ)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read()
            if not (b"kgate" in cmd and b"check" in cmd) and b"torch_runner" not in cmd:
                continue
            with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb") as mem:
                for line in maps:
                    lo, perm = line.split()[0].split("-")[0], line.split()[1]
                    if perm.startswith("r"):
                        mem.seek(int(lo, 16))
                        if len(mem.read(16)) == 16:
                            return True
        except (OSError, ValueError):
            continue
    return False


PEEKED = peek()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.where(x < 0, torch.zeros_like(x), x)
        return torch.full_like(x, float("nan")) if PEEKED else y
