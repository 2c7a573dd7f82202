#!/bin/sh
# audit_devlearn.sh: kgate audit learns the device bytes per tensor byte from samples of the
# memory in use while checks run, but not while a check holds the limits gate's lock for the
# device (its case past 2^31 elements holds tens of GB for seconds, one check at a time: a ratio
# learned then would stand for every later check). Without a GPU: KGATE_FAKE_DEVMEM says half of
# an 80 GB device is in use, KGATE_DEV_LEARN_MIN lets two tiny CPU pairs teach a ratio, and
# flock(1) holds the lock as gates/limits.c does, for as long as that memory is in use.
set -u
t=${TMPDIR:-/tmp}/kgate-devlearn-$$
mkdir -p "$t/cache"
lockpid=
trap '[ -n "$lockpid" ] && kill "$lockpid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
kb=$top_srcdir/testdata/kernelbench
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
command -v flock > /dev/null || { echo "SKIP: no flock(1)"; exit 77; }
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }
set -- --pair "$kb/problems/relu.py:$kb/candidates/ok_torch_relu.py" \
    --pair "$kb/problems/scale.py:$kb/candidates/ok_torch_scale.py"
echo "0 40000 80000" > "$t/mem"
audit() { # STORE ERR PAIRS...: estimates on, learning from any tensor size
    store=$1 err=$2
    shift 2
    KGATE_CACHE_DIR="$t/cache" KGATE_LOCK_DIR="$t" KGATE_FAKE_DEVMEM="$t/mem" KGATE_DEV_LEARN_MIN=1 CUDA_VISIBLE_DEVICES=0 \
        "$KGATE" audit --store "$store" --jobs 1 --compile-jobs 1 --python "$py" "$@" 2> "$err"
}

# no check in the limits gate's huge case: the samples teach a ratio, and the summary gives it
# (one check slot for the two pairs: they are then sized first, which the learning needs)
audit "$t/a.jsonl" "$t/a.err" "$@"
check test $? -eq 0
check test "$(wc -l < "$t/a.jsonl")" -eq 2
grep "learned from samples" "$t/a.err"
check grep -q "kgate audit: device memory learned from samples: [0-9.]* bytes per tensor byte" "$t/a.err"

# the device's lock (host-wide: here in KGATE_LOCK_DIR) held for the checks' first seconds (as by a check in that case, whose memory
# is the 40 GB in use), then the device nearly empty: nothing is learned, the same verdicts (a
# check that reaches its own limits gate meanwhile waits for the lock)
flock "$t/kgate-limits-gpu-0.lock" sh -c "sleep 8; echo '0 79000 80000' > '$t/mem'" &
lockpid=$!
sleep 0.5
audit "$t/b.jsonl" "$t/b.err" "$@"
rc=$?
wait "$lockpid"
lockpid=
check test $rc -eq 0
check test "$(wc -l < "$t/b.jsonl")" -eq 2
check test -z "$(grep "learned from samples" "$t/b.err")"
verdicts() { "$py" -c 'import json, sys
print(sorted((json.loads(l)["id"], json.loads(l)["verdict"]) for l in open(sys.argv[1])))' "$1"; }
check test "$(verdicts "$t/b.jsonl")" = "$(verdicts "$t/a.jsonl")"

echo "$fails failed"
[ $fails -eq 0 ]
