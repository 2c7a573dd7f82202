#!/bin/sh
# device_wait.sh: under kgate audit (KGATE_CHECKS_AT_ONCE > 1) a worker call that meets a full
# device (torch's CUDA out of memory: another check's big case) is sent again after a wait,
# instead of the whole check erroring and being run again at the audit's end; alone, the same
# reply stands as the error it was.
#   - a candidate whose worker raises "CUDA out of memory" on its first call (an
#     OutOfMemoryError, as torch's, once per worker process) and is a correct ReLU after it:
#     with KGATE_CHECKS_AT_ONCE=3 every gate passes, so does the standard test (KernelBench's
#     trials, whose worker met the same), and the record counts the waits (timing.device_waits
#     >= 1, timing.device_wait >= 1 s);
#   - with KGATE_CHECKS_AT_ONCE unset nothing waits and the kernel's exception stands (the first
#     gate fails: it raised; KernelBench's test fails: ModelNew raised), as before;
#   - kgate audit's summary counts the waits its checks made;
#   - one that is out of memory on every call waits KGATE_DEVICE_WAIT (6 s here) in all and then its
#     gate errs, saying the device ran out of memory (what kgate audit runs again later), rather
#     than failing the kernel for another check's memory; the standard test has no answer
#     (baseline error) for the same reason.
# CPU KernelBench pairs (Debian's python3-torch).
set -u
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
t=${TMPDIR:-/tmp}/kgate-devwait-$$
mkdir -p "$t"
trap '[ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }

p=$top_srcdir/testdata/kernelbench/problems/relu.py
# once: full on the first call of each worker process; always: on every call
for c in once always; do
    cat > "$t/$c.py" <<PY
import torch
import torch.nn as nn


class OutOfMemoryError(RuntimeError):
    pass


calls = [0]


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        calls[0] += 1
        if "$c" == "always" or calls[0] == 1:
            raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (test)")
        return torch.relu(x)
PY
done

# field FILE EXPR: a Python expression over the check's JSON document d
field() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
gates=structure,accuracy,determinism,freshness

KGATE_CHECKS_AT_ONCE=3 "$KGATE" check --ref "$p" "$t/once.py" --python "$py" --gates $gates --baseline kernelbench \
    --json "$t/shared.json" > /dev/null 2> "$t/shared.err"
if [ -s "$t/shared.json" ]; then
    echo "shared device: $(field "$t/shared.json" "d['verdict'], d['timing']['device_waits'], round(d['timing']['device_wait'], 1)")"
    check test "$(field "$t/shared.json" "d['verdict']")" = pass
    check test "$(field "$t/shared.json" "d['timing']['device_waits'] >= 1 and d['timing']['device_wait'] >= 1")" = True
    check test "$(field "$t/shared.json" "d['baseline']['kernelbench']")" = pass
else
    echo "FAIL: no report with KGATE_CHECKS_AT_ONCE=3: $(tail -3 "$t/shared.err")"
    fails=$((fails + 1))
fi

env -u KGATE_CHECKS_AT_ONCE "$KGATE" check --ref "$p" "$t/once.py" --python "$py" --gates $gates --baseline kernelbench \
    --json "$t/alone.json" > /dev/null 2> "$t/alone.err"
if [ -s "$t/alone.json" ]; then
    first=$(field "$t/alone.json" "d['gates'][0]['status'], 'raised an exception' in d['gates'][0]['summary']")
    echo "alone: $(field "$t/alone.json" "d['verdict'], d['timing']['device_waits']"); first gate $first"
    check test "$first" = "fail True"
    check test "$(field "$t/alone.json" "d['timing']['device_waits']")" = 0
    check test "$(field "$t/alone.json" "d['baseline']['kernelbench'], 'ModelNew raised OutOfMemoryError' in d['baseline']['detail']")" = "fail True"
else
    echo "FAIL: no report alone: $(tail -3 "$t/alone.err")"
    fails=$((fails + 1))
fi

start=$(date +%s)
KGATE_CHECKS_AT_ONCE=3 KGATE_DEVICE_WAIT=6 "$KGATE" check --ref "$p" "$t/always.py" --python "$py" --gates structure --baseline kernelbench \
    --json "$t/always.json" > /dev/null 2> "$t/always.err"
took=$(($(date +%s) - start))
if [ -s "$t/always.json" ]; then
    w=$(field "$t/always.json" "round(d['timing']['device_wait'])")
    echo "always full: $(field "$t/always.json" "d['gates'][0]['status']") after waiting $w s ($took s in all)"
    check test "$(field "$t/always.json" "d['gates'][0]['status']")" = error
    check test "$(field "$t/always.json" "'the device ran out of memory' in d['gates'][0]['summary']")" = True
    check test "$(field "$t/always.json" "d['baseline']['kernelbench'], 'the device ran out of memory' in d['baseline']['detail']")" = "error True"
    check test "$w" -ge 5
    check test "$w" -le 6
else
    echo "FAIL: no report for the always-full candidate: $(tail -3 "$t/always.err")"
    fails=$((fails + 1))
fi

# kgate audit (--jobs 2: KGATE_CHECKS_AT_ONCE=2 for its checks): the pair passes, the record
# keeps its waits and the summary counts them
"$KGATE" audit --store "$t/a.jsonl" --jobs 2 --compile-jobs 0 --python "$py" --pair "$p:$t/once.py" \
    > /dev/null 2> "$t/a.err"
check test $? -eq 0
check test "$(field "$t/a.jsonl" "d['verdict'], d['timing']['device_waits'] >= 1")" = "pass True"
grep "met a full device" "$t/a.err" || { echo "FAIL: the audit's summary does not count the waits: $(tail -5 "$t/a.err")"; fails=$((fails + 1)); }

[ $fails -eq 0 ] || exit 1
echo "PASS: a full device is waited for under an audit, and only there"
