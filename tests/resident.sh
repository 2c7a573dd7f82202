#!/bin/sh
# resident.sh: a KernelBench pair's oracle values stay in its worker and runs are compared there
# (struct kg_resident); the same checks with the values sent to the judge and compared here
# (KGATE_RESIDENT=0) give the same report: verdicts, causes, evidence, every error and worst
# position, gate by gate (only timings, measured memory and rms_rel, whose sums go in another
# order, may differ).
# On the CPU the worker's comparison runs on PyTorch's CPU tensors; on a GPU host, on the GPU.
set -u
t=${TMPDIR:-/tmp}/kgate-resident-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
kb=$top_srcdir/testdata/kernelbench
fails=0
# a pass, an accuracy failure with its diagnosis (fp16 accumulation), NaN and Inf handling (a
# softmax without its max: non-finite outputs whose NaN sign is printed), a spurious NaN, a NaN
# swallowed (fmax)
for c in ok_torch_clamp_relu fp16_accum_torch_mean_dim no_max_softmax nan_maskmul_relu nan_fmax_relu; do
    f=$kb/candidates/$c.py
    p=$kb/$(sed -n 's/^# kgate-problem: *//p' "$f")
    for r in 0 1; do # (the memo's debug lines say where the values are)
        KGATE_TRACE=1 KGATE_DEBUG_MEMO=1 KGATE_RESIDENT=$r "$KGATE" check --ref "$p" "$f" --python "$py" --json > "$t/$c.$r.json" 2> "$t/$c.$r.err"
    done
    if "$py" - "$t/$c.0.json" "$t/$c.1.json" <<'PY'; then echo "ok: $c: the same report either way"; else echo "FAIL: $c"; fails=$((fails + 1)); fi
import json, sys
DROP = {"timing", "memo", "memory", "rms_rel", "lock_wait"}
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in DROP and "seconds" not in k}
    return [strip(v) for v in o] if isinstance(o, list) else o
a, b = (strip(json.load(open(f))) for f in sys.argv[1:3])
if not a.get("gates"):
    print("no gates in the report"); sys.exit(1)
def diff(x, y, path):
    if type(x) != type(y) or (not isinstance(x, (dict, list)) and x != y):
        print("  %s: %r (judge) vs %r (worker)" % (path, x, y)); return 1
    if isinstance(x, dict):
        return sum(diff(x.get(k), y.get(k), path + "." + k) for k in sorted(set(x) | set(y)))
    if isinstance(x, list):
        if len(x) != len(y):
            print("  %s: %d vs %d entries" % (path, len(x), len(y))); return 1
        return sum(diff(p, q, "%s[%d]" % (path, i)) for i, (p, q) in enumerate(zip(x, y)))
    return 0
sys.exit(1 if diff(a, b, "") else 0)
PY
    # and the two paths were the two: values kept in the worker with 1, never with 0
    if grep -q "kept in the oracle worker" "$t/$c.1.err" && ! grep -q "kept in the oracle worker" "$t/$c.0.err"; then
        echo "ok: $c: values kept in the worker only when resident"
    else
        echo "FAIL: $c: KGATE_RESIDENT did not choose the path"
        fails=$((fails + 1))
    fi
    # the nonfinite gate compares classes in the worker (resident operation 5) and fetches the
    # values (3) only to diagnose a mismatch: a kernel that passes it never fetches there
    fetched=$(grep -c "oracle resident 3  nonfinite" "$t/$c.1.err")
    classes=$(grep -c "oracle resident 5  nonfinite" "$t/$c.1.err")
    "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(g['id']=='nonfinite' and g['status']=='fail' for g in d['gates']) else 1)" "$t/$c.1.json" && nf_fail=1 || nf_fail=0
    if [ "$classes" -gt 0 ] && { { [ $nf_fail = 1 ] && [ "$fetched" -gt 0 ]; } || { [ $nf_fail = 0 ] && [ "$fetched" = 0 ]; }; }; then
        echo "ok: $c: nonfinite compared classes in the worker ($classes), fetched $fetched times (gate failed: $nf_fail)"
    else
        echo "FAIL: $c: nonfinite classes $classes, fetches $fetched, gate failed $nf_fail"
        fails=$((fails + 1))
    fi
done
[ $fails -eq 0 ] && echo PASS || { echo "$fails failed"; exit 1; }
