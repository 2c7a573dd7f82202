#!/bin/sh
# audit_devlearn.sh: the device memory kgate audit expects a check to hold, from the pair's size
# at its nominal constants (`kgate check --estimate`): 2 GiB plus a ratio per weighted byte, its
# input bytes plus 3 times its output bytes (the oracle keeps every case's outputs in float64 and
# in working precision, the candidate's worker and the standard test their own). The ratio is
# learned from what finished checks' workers held (the record's memory.device_held of the oracle
# and the kernel, memory.device_peak of the standard test), with a margin of 1.25.
#   - the start lines (KGATE_AUDIT_TRACE) give 2 GiB + ratio x (in + 3 out) for each pair (the ratio
#     fixed with KGATE_DEV_PER_BYTE): a ReLU whose output is as large as its input is expected at
#     twice the bytes of a sum whose output is 64 bytes;
#   - on the CPU the records carry no device memory, so nothing is learned and the summary says
#     nothing of it;
#   - with CUDA (a GPU host: the pairs run there), the summary's learned ratio is the most that
#     one record's workers held per weighted byte (KGATE_DEV_LEARN_MIN lets tiny pairs teach).
set -u
t=${TMPDIR:-/tmp}/kgate-devlearn-$$
mkdir -p "$t/cache"
trap '[ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
kb=$top_srcdir/testdata/kernelbench
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }
relu="$kb/problems/relu.py:$kb/candidates/ok_torch_relu.py"
sum="$kb/problems/sum_dim.py:$kb/candidates/ok_torch_sum_dim.py"
echo "0 80000 80000" > "$t/mem"
audit() { # STORE ERR [ENV...]: the two pairs, one check slot (they are sized first)
    store=$1 err=$2
    shift 2
    env KGATE_CACHE_DIR="$t/cache" KGATE_FAKE_DEVMEM="$t/mem" CUDA_VISIBLE_DEVICES=0 KGATE_AUDIT_TRACE=1 "$@" \
        "$KGATE" audit --store "$store" --jobs 1 --compile-jobs 1 --python "$py" --pair "$relu" --pair "$sum" 2> "$err"
}
# weighted(PROBLEM CANDIDATE): in + 3 out, from the estimate
weighted() {
    KGATE_PYTHON=$py "$KGATE" check --estimate --ref "$1" "$2" |
        "$py" -c 'import json, sys; d = json.load(sys.stdin); print(d["in_bytes"] + 3 * d["out_bytes"])'
}
w_relu=$(weighted "$kb/problems/relu.py" "$kb/candidates/ok_torch_relu.py")
w_sum=$(weighted "$kb/problems/sum_dim.py" "$kb/candidates/ok_torch_sum_dim.py")
check test "$w_relu" = 4194304
check test "$w_sum" = 1048768
# expected(PAIR-NAME ERR): the device GiB its start line says
expected() { sed -n "s|.*: start .*/$1\.py (.*device \([0-9.]*\) GiB.*|\1|p" "$2"; }

audit "$t/a.jsonl" "$t/a.err" KGATE_DEV_PER_BYTE=1e4
check test $? -eq 0
check test "$(wc -l < "$t/a.jsonl")" -eq 2
grep ": start " "$t/a.err"
gib() { "$py" -c "print('%.2f' % (2 + $1 * $2 / 2**30))"; }
check test "$(expected ok_torch_relu "$t/a.err")" = "$(gib 1e4 "$w_relu")"
check test "$(expected ok_torch_sum_dim "$t/a.err")" = "$(gib 1e4 "$w_sum")"

cuda=0
"$py" -c "import torch,sys; sys.exit(not torch.cuda.is_available())" && cuda=1
if [ $cuda = 0 ]; then
    # the CPU: no device memory in the records, nothing learned
    check test -z "$(grep "device memory learned" "$t/a.err")"
else
    # a GPU: the tiny pairs teach (KGATE_DEV_LEARN_MIN=1); no fake device
    rm -f "$t/mem"
    env KGATE_CACHE_DIR="$t/cache" KGATE_DEV_LEARN_MIN=1 "$KGATE" audit --store "$t/g.jsonl" --jobs 1 \
        --compile-jobs 1 --python "$py" --pair "$relu" --pair "$sum" 2> "$t/g.err"
    check test $? -eq 0
    grep "device memory" "$t/g.err"
    want=$("$py" -c 'import json, sys
w = {"ok_torch_relu": int(sys.argv[2]), "ok_torch_sum_dim": int(sys.argv[3])}
best = 0
for l in open(sys.argv[1]):
    r = json.loads(l); m = r["memory"]; k = r["id"].split("/")[-1][:-3]
    held = m.get("device_held", {}); peak = m.get("device_peak", {})
    best = max(best, (held.get("oracle", 0) + held.get("kernel", 0) + peak.get("standard", 0)) / w[k])
print("%.1f" % best)' "$t/g.jsonl" "$w_relu" "$w_sum")
    check grep -q "device memory learned from 2 checks' workers: $want bytes per weighted byte" "$t/g.err"
fi

echo "$fails failed"
[ $fails -eq 0 ]
