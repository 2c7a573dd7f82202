#!/bin/sh
# limits_pace.sh: the limits gate's case past 2^31 elements is skipped at once, saying why, where
# the candidate's own pace at the nominal size projects it past half of what a sample may take
# (KG_SAMPLE_LIMIT, 120 s): ok_cuda_slow_scale's blocks each wait 5 ms, so its nominal run of 256
# blocks takes ~5 ms and the case of 2^31 elements, 32768 times the nominal, projects to ~160 s
# (it would run ~40 s on an H200, holding the GPU's turn at that size for every other check, and
# a slower kernel would time out: a failure that says nothing about its indexing). The gate
# takes seconds, not the case's minute; accuracy passes. A GPU host only (77 without a CUDA
# torch: limits needs a GPU).
set -u
. "$top_srcdir/tests/torch_python.sh"
need_cuda_torch
t=${TMPDIR:-/tmp}/kgate-limits-pace-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
kb=$top_srcdir/testdata/kernelbench
"$KGATE" check --ref "$kb/problems/scale.py" "$kb/candidates/ok_cuda_slow_scale.py" --python "$py" \
    --gates accuracy,limits --json > "$t/r.json" 2> "$t/err"
rc=$?
[ $rc = 0 ] || {
    echo "FAIL: check exit $rc"
    tail -5 "$t/err"
    exit 1
}
"$py" - "$t/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
g = {x["id"]: x for x in r["gates"]}
lim, acc = g["limits"], g["accuracy"]
proj = (lim.get("evidence") or {}).get("projected_seconds", 0)
print("accuracy %s; limits %s in %.1f s, projected %.0f s: %s" % (acc["status"], lim["status"], lim["seconds"], proj, lim["summary"]))
ok = (acc["status"] == "pass" and lim["status"] == "skip" and "would run about" in lim["summary"]
      and proj > 120 and lim["seconds"] < 10)
print("ok" if ok else "FAIL: limits should skip the case at once, by the candidate's pace")
sys.exit(0 if ok else 1)
PY
