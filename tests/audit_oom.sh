#!/bin/sh
# audit_oom.sh: a check that meets a full device (a worker that cannot load for "out of memory",
# as when another check's big case holds the GPU for a moment) is run again later, at most twice,
# instead of being recorded as not checked:
#   - a candidate whose first two loads fail that way passes, its record saying oom_retries 2;
#   - one that always fails so is recorded as not checked after two retries (a kernel that needs
#     more memory than the device has is not retried forever);
#   - a pair with another load error is not retried;
#   - with KGATE_TRACE=1 (trace lines first on the check's stderr) the same holds;
#   - a problem whose first forward (its description) meets a full device runs again too;
#   - a check killed by SIGKILL that the audit did not send (the host's OOM killer, simulated by
#     KGATE_TEST_KILL_ONCE) runs again, and its record passes with oom_retries 1;
#   - a worker the host's OOM killer took (simulated: the candidate's first forward raises the
#     oom_kill count of the file KGATE_TEST_VMSTAT names in /proc/vmstat's place, then dies of
#     SIGKILL) is no crash of the kernel: `kgate check` says the host ran out of memory, and
#     names no cause; the audit runs the pair again, and it passes with oom_retries 1 (in the audit
#     the standard test runs beside the gates, and its worker may be the one taken: its answer is
#     then no answer, and the pair runs again all the same);
#   - checks that together would not fit in the host's free memory run one after the other;
#   - a run whose out of memory says it asked more than the device has beside what the check's own
#     workers hold (torch's "Tried to allocate ... total capacity of ...") is the kernel's own: no
#     wait, no second run, the kernel's failure stands; one that asked little waits and passes.
# CPU pairs (Debian's python3-torch); the full device is simulated by the candidate's import.
set -u
t=${TMPDIR:-/tmp}/kgate-oom-$$
mkdir -p "$t/problems"
trap 'rm -rf "$t"' EXIT
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }
cp "$top_srcdir/testdata/kernelbench/problems/relu.py" "$t/problems/"
# candidate NAME FAILURES MESSAGE: its first FAILURES imports raise MESSAGE (counted in NAME.count)
candidate() {
    cat > "$t/$1.py" <<PY
# kgate-problem: problems/relu.py
import os
import torch

_count = os.path.join(os.path.dirname(os.path.abspath(__file__)), "$1.count")
with open(_count, "a+") as _f:
    _f.seek(0)
    _n = len(_f.read())
    _f.write("x")
if _n < $2:
    raise RuntimeError("$3")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
PY
}
candidate flaky 2 "CUDA error: out of memory (simulated)"
candidate full 1000 "CUDA error: out of memory (simulated)"
candidate broken 1 "an ordinary import error"
# the standard test after the gates (KGATE_STANDARD_BESIDE=0), as an audit runs it again after a
# full device: beside them its worker imports the candidate too as the check opens, racing the
# candidate's worker for the count of failing imports
KGATE_STANDARD_BESIDE=0 "$KGATE" audit --store "$t/s.jsonl" --jobs 2 --compile-jobs 0 --python "$py" --pair "$t/problems/relu.py:$t/flaky.py" \
    --pair "$t/problems/relu.py:$t/full.py" --pair "$t/problems/relu.py:$t/broken.py" 2> "$t/err"
cat "$t/err"
check test "$(wc -l < "$t/s.jsonl")" -eq 3
"$py" - "$t/s.jsonl" <<'PY' || fails=$((fails + 1))
import json, sys
recs = {json.loads(l)["id"].rsplit("/", 1)[-1]: json.loads(l) for l in open(sys.argv[1])}
want = {"flaky.py": ("pass", 2, None), "full.py": ("error", 2, "out of memory"),
        "broken.py": ("error", None, "ordinary import error")}
bad = 0
for name, (verdict, retries, err) in want.items():
    r = recs[name]
    ok = r["verdict"] == verdict and r.get("oom_retries") == retries and (err is None or err in (r.get("error") or ""))
    print("%s %s: verdict %s, oom_retries %s, error %s" % ("ok  " if ok else "FAIL", name, r["verdict"],
                                                           r.get("oom_retries"), (r.get("error") or "")[:120]))
    bad += not ok
sys.exit(bad)
PY
check grep -q "flaky.py: the device ran out of memory during its check; it runs again later" "$t/err"
# with KGATE_TRACE=1 a check's stderr starts with trace lines: the reason is read past them (seen on
# the H100: a full device at the oracle worker's first CUDA call, the pair recorded as one that
# could not be loaded because the first line, a trace line, said nothing of memory)
candidate traced 1 "CUDA error: out of memory (simulated)"
KGATE_STANDARD_BESIDE=0 KGATE_TRACE=1 "$KGATE" audit --store "$t/tr.jsonl" --jobs 2 --compile-jobs 0 --python "$py" \
    --pair "$t/problems/relu.py:$t/traced.py" 2> "$t/trerr"
check grep -q "traced.py: the device ran out of memory during its check; it runs again later" "$t/trerr"
check "$py" -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); sys.exit(not (r["verdict"] == "pass" and r.get("oom_retries") == 1))' "$t/tr.jsonl"
# the problem's own first forward (its description, before any gate) meets the full device: the
# check's first line names the exception, not the traceback's first or middle line (seen on the
# H100: a level-2 gemm's F.linear, recorded as a pair that could not be loaded), and it runs again
sed 's/        return torch.relu(x)/        return boom() if first() else torch.relu(x)/' "$t/problems/relu.py" > "$t/problems/relu_once.py"
cat >> "$t/problems/relu_once.py" <<'PY'


def first():
    import os
    mark = os.path.join(os.path.dirname(os.path.abspath(__file__)), "relu_once.mark")
    if os.path.exists(mark):
        return False
    open(mark, "w").close()
    return True


def boom():
    raise RuntimeError("CUDA out of memory. Tried to allocate 32.00 MiB (simulated)")
PY
check grep -q "boom() if first()" "$t/problems/relu_once.py"
candidate plain 0 ""
"$KGATE" audit --store "$t/d.jsonl" --jobs 2 --compile-jobs 0 --python "$py" \
    --pair "$t/problems/relu_once.py:$t/plain.py" 2> "$t/derr"
check grep -q "plain.py: the device ran out of memory during its check; it runs again later" "$t/derr"
check "$py" -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); sys.exit(not (r["verdict"] == "pass" and r.get("oom_retries") == 1))' "$t/d.jsonl"
# the host's OOM killer: the first check dies of SIGKILL; the pair runs again and passes
candidate fine 0 ""
KGATE_TEST_KILL_ONCE=$t/killed "$KGATE" audit --store "$t/k.jsonl" --jobs 2 --compile-jobs 0 --python "$py" \
    --pair "$t/problems/relu.py:$t/fine.py" 2> "$t/kerr"
cat "$t/kerr"
check test -e "$t/killed"
check grep -q "fine.py: its check was killed (SIGKILL" "$t/kerr"
# ... and its standard test ran after the gates that time, not beside them
check "$py" -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); sys.exit(not (r["verdict"] == "pass" and r.get("oom_retries") == 1 and r["baseline"]["beside"] is False))' "$t/k.jsonl"
# the host's OOM killer takes a worker: candidate NAME raises the count, then kills itself, once
oomkilled() {
    cat > "$t/$1.py" <<PY
# kgate-problem: problems/relu.py
import os
import signal
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        if not os.path.exists("$t/$1.killed"):
            open("$t/$1.killed", "w").close()
            with open("$t/vmstat", "w") as f:
                f.write("pgfault 1\noom_kill 8\n")
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.relu(x)
PY
}
oomkilled once
printf 'pgfault 1\noom_kill 7\n' > "$t/vmstat"
KGATE_TEST_VMSTAT=$t/vmstat "$KGATE" check --ref "$t/problems/relu.py" "$t/once.py" --python "$py" --json > "$t/o.json"
check test -e "$t/once.killed"
"$py" - "$t/o.json" <<'PY' || fails=$((fails + 1))
import json, sys
r = json.load(open(sys.argv[1]))
err = [g for g in r["gates"] if g["status"] == "error"]
others = [g["status"] for g in r["gates"] if g["status"] != "error"]
print("verdict %s; errors: %s; others: %s; causes %s" % (r["verdict"], [(g["id"], g["summary"][:100]) for g in err],
                                                       sorted(set(others)), r.get("causes")))
# no cause of the kernel's; on a GPU the decoy check runs and may say decoy (torch.relu is the
# reference's own kernel), which is no finding of the OOM's
ok = (r["verdict"] == "error" and len(err) == 1 and "the host ran out of memory" in err[0]["summary"]
      and set(others) <= {"pass", "skip"} and not [c for c in r.get("causes") or [] if c["id"] != "decoy"])
sys.exit(not ok)
PY
oomkilled again
printf 'pgfault 1\noom_kill 7\n' > "$t/vmstat"
KGATE_TEST_VMSTAT=$t/vmstat "$KGATE" audit --store "$t/h.jsonl" --jobs 2 --compile-jobs 0 --python "$py" \
    --pair "$t/problems/relu.py:$t/again.py" 2> "$t/herr"
cat "$t/herr"
check grep -q "again.py: the host ran out of memory during its check; it runs again later, with half" "$t/herr"
check "$py" -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); sys.exit(not (r["verdict"] == "pass" and r.get("oom_retries") == 1))' "$t/h.jsonl"
# the checks share the host's memory through the audit's ledger (src/base/ledger.h): with 3 GiB
# free (KGATE_FAKE_HOSTMEM, MiB), two checks that reserve 2 GiB and more each do not run together,
# the second waiting before its first gate until the first ends (its record's memory_wait, in the
# summary's "host memory wait"); with 100 GiB free neither waits
cp "$t/fine.py" "$t/fine2.py"
for free in 3072 102400; do
    printf '%s 131072\n' $free > "$t/hostmem"
    KGATE_FAKE_HOSTMEM=$t/hostmem "$KGATE" audit --store "$t/m$free.jsonl" --jobs 2 --compile-jobs 0 --python "$py" \
        --pair "$t/problems/relu.py:$t/fine.py" --pair "$t/problems/relu.py:$t/fine2.py" 2> "$t/merr$free"
    cat "$t/merr$free"
    [ $free = 3072 ] && check grep -q "host memory wait" "$t/merr$free"
    "$py" - "$t/m$free.jsonl" $free <<'PY' || fails=$((fails + 1))
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
waits = sorted(r["timing"]["memory_wait"] for r in recs)
print("free %s MiB: verdicts %s, memory waits %s" % (sys.argv[2], [r["verdict"] for r in recs], waits))
ok = len(recs) == 2 and all(r["verdict"] == "pass" for r in recs)
sys.exit(not (ok and (waits[0] < 0.19 and waits[1] >= 0.2 if sys.argv[2] == "3072" else waits[1] < 0.19)))
PY
done
# torch's own words of a full device: asking 100 GiB of an 80 GiB device is the kernel's doing (as on
# a device of its own: it fails), 2 GiB is another check's (a wait, then the run again passes)
runs_oom() {
    cat > "$t/$1.py" <<PY
# kgate-problem: problems/relu.py
import os
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        if not os.path.exists("$t/$1.$2"):
            open("$t/$1.$2", "w").close() if "$2" == "once" else None
            raise RuntimeError("CUDA out of memory. Tried to allocate $3 GiB. GPU 0 has a total capacity of "
                               "79.18 GiB of which 13.80 GiB is free. Including non-PyTorch memory, this process "
                               "has 1.50 GiB memory in use. (simulated)")
        return torch.relu(x)
PY
}
runs_oom huge always 100.00
runs_oom small once 2.00
mkdir -p "$t/logs"
KGATE_TRACE=1 KGATE_AUDIT_LOGS=$t/logs KGATE_DEVICE_WAIT=20 "$KGATE" audit --store "$t/f.jsonl" --jobs 2 --compile-jobs 0 --python "$py" \
    --pair "$t/problems/relu.py:$t/huge.py" --pair "$t/problems/relu.py:$t/small.py" 2> "$t/ferr"
cat "$t/ferr"
check grep -q "this check's workers alone need 101.5 GiB of its 79.2: not waited" "$t/logs/huge.py.err"
"$py" - "$t/f.jsonl" <<'PY' || fails=$((fails + 1))
import json, sys
recs = {json.loads(l)["id"].rsplit("/", 1)[-1]: json.loads(l) for l in open(sys.argv[1])}
h, s = recs["huge.py"], recs["small.py"]
hw, sw = h["timing"].get("device_wait", 0), s["timing"].get("device_wait", 0)
print("huge: verdict %s, oom_retries %s, device wait %s s; small: verdict %s, device wait %s s"
      % (h["verdict"], h.get("oom_retries"), hw, s["verdict"], sw))
sys.exit(not (h["verdict"] == "fail" and h.get("oom_retries") is None and hw == 0 and s["verdict"] == "pass" and sw > 0))
PY
echo "$fails failed"
[ $fails -eq 0 ]
