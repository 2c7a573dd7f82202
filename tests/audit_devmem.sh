#!/bin/sh
# audit_devmem.sh: kgate audit starts a check on a device only while the device has room for one
# more check of the size seen there, testable without a GPU (KGATE_FAKE_DEVMEM: each device's
# free and total MiB, as NVML would say them; the CPU pairs ignore the devices):
#   - a device with room: all 4 checks at once, no wait (and the log's progress lines: rate, ETA);
#   - a pair too large for the device with the standard test beside its gates runs it after them;
#   - a device almost full (what one check holds leaves 1 GiB of 80): one check at a time, and
#     the summary says the checks waited;
#   - --gpus 2 with one device full: the checks go to the one with room, the full one still
#     takes a check whenever it is idle;
#   - the host's memory the same way (KGATE_FAKE_HOSTMEM: its free and total MiB): a host with
#     room takes all 4 at once, an almost full one one check at a time, saying so.
# Four tiny CPU KernelBench pairs (Debian's python3-torch).
set -u
t=${TMPDIR:-/tmp}/kgate-devmem-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
kb=$top_srcdir/testdata/kernelbench
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }
set -- --pair "$kb/problems/relu.py:$kb/candidates/ok_torch_relu.py" \
    --pair "$kb/problems/scale.py:$kb/candidates/ok_torch_scale.py" \
    --pair "$kb/problems/relu.py:$kb/candidates/ok_torch_clamp_relu.py" \
    --pair "$kb/problems/sum_dim.py:$kb/candidates/ok_torch_sum_dim.py"
export KGATE_FAKE_DEVMEM="$t/mem"

echo "0 79000 80000" > "$t/mem"
CUDA_VISIBLE_DEVICES=0 "$KGATE" audit --store "$t/a.jsonl" --jobs 4 --compile-jobs 0 --python "$py" "$@" 2> "$t/a.err"
check test $? -eq 0
check test "$(wc -l < "$t/a.jsonl")" -eq 4
grep "device 0 memory" "$t/a.err"
check grep -q "device 0 memory: at most 1.0 of 78.1 GiB in use, .* 4 checks at once at most" "$t/a.err"
check test "$(grep -c "waited for device memory" "$t/a.err")" -eq 0
# a log's progress lines (stderr is not a terminal): count, rate and ETA per finished pair
check grep -q '^\[1/4\] [0-9]*/h, ETA [0-9]*:[0-9][0-9]  ' "$t/a.err"
check grep -q '^\[4/4\] [0-9]*/h, ETA 0:00  ' "$t/a.err"

# every check's standard test ran beside its gates
beside() { # STORE: each record's baseline.beside, in one line
    "$py" -c 'import json, sys
print(" ".join(str(json.loads(l)["baseline"]["beside"]) for l in open(sys.argv[1])))' "$1"
}
check test "$(beside "$t/a.jsonl")" = "True True True True"

# a pair whose expected device memory with the standard test beside the gates is more than the
# device holds (here each, at a fixed 10^6 device bytes per tensor byte; estimates on: more pairs
# than check slots) runs it after them, and says so; the verdicts are the same
echo "0 79000 80000" > "$t/mem"
KGATE_DEV_PER_BYTE=1e6 KGATE_AUDIT_TRACE=1 CUDA_VISIBLE_DEVICES=0 "$KGATE" audit --store "$t/s.jsonl" --jobs 2 \
    --compile-jobs 1 --python "$py" "$@" 2> "$t/s.err"
check test $? -eq 0
check test "$(beside "$t/s.jsonl")" = "False False False False"
check test "$(grep -c "start .*; the standard test after the gates)" "$t/s.err")" -eq 4
check grep -q "kgate audit: 4 checks ran the standard test after the gates, not beside them" "$t/s.err"
verdicts() { "$py" -c 'import json, sys
print(sorted((json.loads(l)["id"], json.loads(l)["verdict"], json.loads(l)["baseline"]["kernelbench"]) for l in open(sys.argv[1])))' "$1"; }
check test "$(verdicts "$t/s.jsonl")" = "$(verdicts "$t/a.jsonl")"

echo "0 1024 80000" > "$t/mem"
CUDA_VISIBLE_DEVICES=0 "$KGATE" audit --store "$t/b.jsonl" --jobs 4 --compile-jobs 0 --python "$py" "$@" 2> "$t/b.err"
check test $? -eq 0
check test "$(wc -l < "$t/b.jsonl")" -eq 4
grep "device 0 memory\|waited" "$t/b.err"
check grep -q "device 0 memory: .* 1 check at once at most" "$t/b.err"
check grep -q "kgate audit: [1-9][0-9]* times\? a check waited for device memory to start" "$t/b.err"

printf '3 1024 80000\n7 79000 80000\n' > "$t/mem"
CUDA_VISIBLE_DEVICES=3,7 "$KGATE" audit --store "$t/c.jsonl" --gpus 2 --jobs 4 --compile-jobs 0 --python "$py" "$@" \
    2> "$t/c.err"
check test $? -eq 0
grep "memory\|per GPU" "$t/c.err"
check grep -q "device 3 memory: .* 1 check at once at most" "$t/c.err"
check grep -q "device 7 memory: .* [23] checks at once at most" "$t/c.err"
# the host's memory: room for all (and the summary's line), then almost none (1 GiB free of 78:
# less than the 1/64 of the host a check is given at least)
echo "0 79000 80000" > "$t/mem"
echo "79000 80000" > "$t/host"
KGATE_FAKE_HOSTMEM=$t/host CUDA_VISIBLE_DEVICES=0 "$KGATE" audit --store "$t/h.jsonl" --jobs 4 --compile-jobs 0 \
    --python "$py" "$@" 2> "$t/h.err"
check test $? -eq 0
grep "host memory" "$t/h.err"
check grep -q "host memory: at most 0.0 of 78.1 GiB in use by the checks, .* 4 checks at once at most" "$t/h.err"
check test "$(grep -c "waited for host memory" "$t/h.err")" -eq 0
echo "1024 80000" > "$t/host"
KGATE_FAKE_HOSTMEM=$t/host CUDA_VISIBLE_DEVICES=0 "$KGATE" audit --store "$t/i.jsonl" --jobs 4 --compile-jobs 0 \
    --python "$py" "$@" 2> "$t/i.err"
check test $? -eq 0
check test "$(wc -l < "$t/i.jsonl")" -eq 4
grep "host memory\|waited" "$t/i.err"
check grep -q "host memory: .* 1 check at once at most" "$t/i.err"
check grep -q "kgate audit: [1-9][0-9]* times\? a check waited for host memory to start" "$t/i.err"
check test "$(grep -c "waited for device memory" "$t/i.err")" -eq 0
echo "$fails failed"
test $fails -eq 0
