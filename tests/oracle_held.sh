#!/bin/sh
# oracle_held.sh: a KernelBench pair's oracle worker gives its caching allocator's slack back after
# each call (give_back_cache in the torch runner), so that between calls it holds its resident
# outputs, not the peak of its float64 reference. Real-size KernelBench problem 6 (large-K matmul:
# two 512 MB fp32 inputs, a 256 KB output; its float64 reference peaks at GBs): the worker's memory
# held after its replies (memory.device_held.oracle) is under a quarter of its peak, and the peak
# is over 1 GiB (the case did reach the size that matters). A GPU host only: the CPU has no
# caching allocator (77 without a CUDA torch).
set -u
. "$top_srcdir/tests/torch_python.sh"
need_cuda_torch
t=${TMPDIR:-/tmp}/kgate-oracle-held-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
kb=$top_srcdir/testdata/kernelbench-real
c=$kb/candidates/l1_6_torch_large_k_matmul.py
p=$kb/$(sed -n 's/^# kgate-problem: *//p' "$c")
"$KGATE" check --ref "$p" "$c" --python "$py" --gates accuracy --json > "$t/r.json" 2> "$t/err"
rc=$?
[ $rc = 0 ] || {
    echo "FAIL: check exit $rc"
    tail -5 "$t/err"
    exit 1
}
"$py" - "$t/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = r.get("memory") or {}
peak, held = (m.get("device_peak") or {}).get("oracle", 0), (m.get("device_held") or {}).get("oracle", 0)
print("oracle worker: peak %.2f GiB, held after its replies %.2f GiB" % (peak / 2**30, held / 2**30))
ok = r["verdict"] == "pass" and peak > 2**30 and held * 4 < peak
print("%s: verdict %s" % ("ok" if ok else "FAIL", r["verdict"]))
sys.exit(0 if ok else 1)
PY
