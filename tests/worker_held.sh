#!/bin/sh
# worker_held.sh: a KernelBench pair's workers give their caching allocators' slack back after each
# call (give_back_cache in the torch runner, GIVES_BACK), so that between calls they hold what they
# keep (the oracle its resident outputs, the candidate its staged inputs and their kept copies),
# not the peak of a call; the audit admits other checks by what the workers hold.
# 1. The oracle: real-size KernelBench problem 6 (large-K matmul: two 512 MB fp32 inputs, a 256 KB
#    output; its float64 reference peaks at GBs): memory.device_held.oracle is under a quarter of
#    its peak, and the peak is over 1 GiB (the case did reach the size that matters).
# 2. The candidate: a pair made here whose ModelNew goes through a 2 GiB temporary for a 256 MiB
#    input (x * 2 of one of eight repeats): memory.device_held.kernel is under half its peak, and
#    the peak is over 1.5 GiB. Before the candidate's RUN gave its slack back it held its peak.
# A GPU host only: the CPU has no caching allocator (77 without a CUDA torch).
set -u
. "$top_srcdir/tests/torch_python.sh"
need_cuda_torch
t=${TMPDIR:-/tmp}/kgate-worker-held-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
kb=$top_srcdir/testdata/kernelbench-real
c=$kb/candidates/l1_6_torch_large_k_matmul.py
p=$kb/$(sed -n 's/^# kgate-problem: *//p' "$c")
cat > "$t/problem.py" <<'PY'
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.0


N = 64 << 20


def get_inputs():
    return [torch.rand(N)]


def get_init_inputs():
    return []
PY
cat > "$t/candidate.py" <<'PY'
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        wide = x.repeat(8)  # 2 GiB the call frees before it returns
        return wide[: x.numel()] * 2.0
PY
# held SIDE PROBLEM CANDIDATE: the pair checked (accuracy alone); SIDE's worker held, after its
# replies, under the share of its peak asserted above, and that peak was reached
held() {
    "$KGATE" check --ref "$2" "$3" --python "$py" --gates accuracy --json > "$t/r.json" 2> "$t/err"
    rc=$?
    [ $rc = 0 ] || {
        echo "FAIL: $1: check exit $rc"
        tail -5 "$t/err"
        return 1
    }
    "$py" - "$t/r.json" "$1" <<'PY'
import json, sys
r, side = json.load(open(sys.argv[1])), sys.argv[2]
m = r.get("memory") or {}
peak, held = (m.get("device_peak") or {}).get(side, 0), (m.get("device_held") or {}).get(side, 0)
print("%s worker: peak %.2f GiB, held after its replies %.2f GiB" % (side, peak / 2**30, held / 2**30))
if side == "oracle":
    ok = peak > 2**30 and held * 4 < peak
else:
    ok = peak > 1.5 * 2**30 and held * 2 < peak
ok = ok and r["verdict"] == "pass"
print("%s: %s: verdict %s" % ("ok" if ok else "FAIL", side, r["verdict"]))
sys.exit(0 if ok else 1)
PY
}
fail=0
held oracle "$p" "$c" || fail=1
held kernel "$t/problem.py" "$t/candidate.py" || fail=1
exit $fail
