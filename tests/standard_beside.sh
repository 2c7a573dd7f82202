#!/bin/sh
# standard_beside.sh: a KernelBench pair's standard test (KernelBench's five trials, in a worker of
# its own) runs beside the gates, not after them: its worker is started and sent its request
# before the first gate, and its answer is taken after the last. At real sizes its trials draw
# KernelBench's inputs on the host, seconds each, which the check used to wait for at the end.
#   - a problem whose get_inputs() takes 0.6 s (3 s over the five trials): with the test beside
#     the gates the check waits for it (timing.standard) at least 0.8 s less than with it after
#     them (KGATE_STANDARD_BESIDE=0), whose wait is the whole 3 s;
#   - the answer is the same either way: a correct candidate passes, one off by a factor fails
#     with the same trial and element named;
#   - the oracle's and the candidate's workers have stopped while the trials run after the gates;
#   - with the test beside the gates its worker loads as the check opens, beside the oracle's and
#     the candidate's: a candidate whose import takes 2.5 s (imported by the candidate's worker and
#     by the standard test's) costs the check's start (timing.compile, the loads waited for)
#     less than 3.8 s, where one load after the other took 5 s and more;
#   - the trials' allclose runs over blocks of the output (standard_allclose: its temporaries a
#     block's, not 3.8x the output's bytes) and is still allclose: on a 786,437-element output
#     (three CPU blocks and 5 elements), a candidate off in only the last element fails naming
#     it, one off in only the first fails naming that, one off in the first by 1 and in the third
#     block by 3 names the third block's (the worst miss, found block by block), one within the
#     tolerance everywhere passes.
# CPU KernelBench pairs (Debian's python3-torch).
set -u
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
t=${TMPDIR:-/tmp}/kgate-standard-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }

cat > "$t/p.py" <<'PY'
import time
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return F.gelu(x)


batch_size = 16
dim = 4096


def get_inputs():
    time.sleep(0.6)
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
PY
for c in ok half; do
    expr=$([ $c = ok ] && echo "0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))" || echo "0.5 * x")
    cat > "$t/$c.py" <<PY
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        return $expr
PY
done

# field FILE EXPR: a Python expression over the check's JSON document d
field() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

for c in ok half; do
    for beside in 1 0; do
        KGATE_STANDARD_BESIDE=$beside "$KGATE" check --ref "$t/p.py" "$t/$c.py" --python "$py" --baseline kernelbench \
            --gates structure,accuracy,determinism,freshness,shapes --json "$t/$c$beside.json" > /dev/null 2> "$t/$c$beside.err"
        [ -s "$t/$c$beside.json" ] || { echo "FAIL: $c (beside=$beside): no report: $(tail -3 "$t/$c$beside.err")"; fails=$((fails + 1)); }
    done
    [ -s "$t/${c}1.json" ] && [ -s "$t/${c}0.json" ] || continue
    # the same answer both ways; the record says which way it ran (baseline.beside)
    b1=$(field "$t/${c}1.json" "(d['baseline']['kernelbench'], d['baseline']['detail'])")
    b0=$(field "$t/${c}0.json" "(d['baseline']['kernelbench'], d['baseline']['detail'])")
    check test "$b1" = "$b0"
    check test "$(field "$t/${c}1.json" "d['baseline']['beside']") $(field "$t/${c}0.json" "d['baseline']['beside']")" = \
        "True False"
    w1=$(field "$t/${c}1.json" "d['timing']['standard']")
    w0=$(field "$t/${c}0.json" "d['timing']['standard']")
    echo "$c: waited for the standard test $w1 s beside the gates, $w0 s after them; $b1"
    # the failing one stops at its first trial: only the passing one's five trials take 3 s
    [ $c = ok ] && check "$py" -c "import sys; sys.exit(not (float('$w0') >= 3.0 and float('$w1') <= float('$w0') - 0.8))"
done
check test "$(field "$t/ok1.json" "d['baseline']['kernelbench']")" = pass
check test "$(field "$t/half1.json" "d['baseline']['kernelbench']")" = fail
check grep -q "trial 1: out0\[" "$t/half1.json"

# the three loads at once: a candidate whose import takes 2.5 s, imported by two of them
{
    echo "import time"
    echo "time.sleep(2.5)"
    cat "$t/ok.py"
} > "$t/slow.py"
"$KGATE" check --ref "$t/p.py" "$t/slow.py" --python "$py" --baseline kernelbench --gates structure --json "$t/slow.json" \
    > /dev/null 2> "$t/slow.err"
check test "$(field "$t/slow.json" "d['baseline']['kernelbench']")" = pass
ws=$(field "$t/slow.json" "d['timing']['compile']")
echo "a candidate whose import takes 2.5 s: its loads waited for $ws s in all"
check "$py" -c "import sys; sys.exit(not float('$ws') < 3.8)"

# the judge's own workers (the oracle's, the candidate's) have stopped when the standard test's
# answer is awaited (kg_session_workers_done), so that what they hold is back while trials that
# run after the gates go on alone: every worker that imports the problem registers its pid, and
# each get_inputs() call writes down which registered workers are alive (the workers share the
# zygote's PID namespace); the last five calls are the standard test's trials
mkdir -p "$t/reg"
# the problem above, its get_inputs() replaced (no sleep) by one that notes the live workers
{
    cat "$t/p.py"
    cat <<'PY'

import os

REG = os.environ["KG_TEST_REG"]
open(os.path.join(REG, "w-%d" % os.getpid()), "w").close()


def get_inputs():
    alive = [f[2:] for f in os.listdir(REG) if f.startswith("w-") and os.path.exists("/proc/" + f[2:])]
    with open(os.path.join(REG, "log"), "a") as f:
        f.write("%d %s\n" % (os.getpid(), " ".join(sorted(alive))))
    return [torch.randn(batch_size, dim)]
PY
} > "$t/preg.py"
KG_TEST_REG=$t/reg KGATE_STANDARD_BESIDE=0 "$KGATE" check --ref "$t/preg.py" "$t/ok.py" --python "$py" --baseline kernelbench \
    --gates structure,accuracy,determinism > "$t/reg.out" 2>&1
check test $? -eq 0
check test "$(ls "$t/reg" | grep -c '^w-')" -ge 3 # the oracle's, the candidate's, the standard test's
tail -n 5 "$t/reg/log" > "$t/reg/std"
check test "$(wc -l < "$t/reg/std")" -eq 5
while read -r pid alive; do
    [ "$alive" = "$pid" ] || { echo "FAIL: standard test (worker $pid): workers still alive: $alive"; fails=$((fails + 1)); }
done < "$t/reg/std"

# allclose over blocks: the last element, the first, and a pass within the tolerance
cat > "$t/pb.py" <<'PY'
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return x * 2.0


n = 3 * 262144 + 5


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
PY
for c in last first two near; do
    case $c in
    last) body="y = x * 2.0
        y[-1] += 1.0" ;;
    first) body="y = x * 2.0
        y[0] += 1.0" ;;
    two) body="y = x * 2.0
        y[0] += 1.0
        y[600000] += 3.0" ;;
    near) body="y = x * 2.0 + 0.001" ;;
    esac
    cat > "$t/b$c.py" <<PY
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        $body
        return y
PY
    "$KGATE" check --ref "$t/pb.py" "$t/b$c.py" --python "$py" --baseline kernelbench --gates structure \
        --json "$t/b$c.json" > /dev/null 2> "$t/b$c.err"
    [ -s "$t/b$c.json" ] || { echo "FAIL: blocks, $c: no report: $(tail -3 "$t/b$c.err")"; fails=$((fails + 1)); continue; }
    echo "blocks, $c: $(field "$t/b$c.json" "(d['baseline']['kernelbench'], d['baseline']['detail'])")"
done
check test "$(field "$t/blast.json" "d['baseline']['kernelbench']")" = fail
check grep -q "trial 1: out0\[786436\]" "$t/blast.json"
check test "$(field "$t/bfirst.json" "d['baseline']['kernelbench']")" = fail
check grep -q "trial 1: out0\[0\]" "$t/bfirst.json"
check grep -q "trial 1: out0\\[600000\\]" "$t/btwo.json"
check test "$(field "$t/bnear.json" "d['baseline']['kernelbench']")" = pass

[ $fails -eq 0 ] || exit 1
echo "PASS: the standard test ran beside the gates, with the same answers; the judge's workers stop before its answer; its allclose over blocks is allclose"
