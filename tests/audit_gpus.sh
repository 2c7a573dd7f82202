#!/bin/sh
# audit_gpus.sh: where `kgate audit --gpus N` puts its checks, testable without a GPU (the
# devices are only names in CUDA_VISIBLE_DEVICES; the CPU pairs ignore them):
#   - an inherited CUDA_VISIBLE_DEVICES=3,7 with --gpus 2 runs checks on devices 3 and 7, both used,
#     every record saying its device, and the summary counting checks per device;
#   - --gpus 3 with only two devices named is refused (exit 2, naming the variable);
#   - without the variable, --gpus 2 means devices 0 and 1.
# Four tiny CPU KernelBench pairs (Debian's python3-torch).
set -u
t=${TMPDIR:-/tmp}/kgate-gpus-$$
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
# the records' devices, sorted and counted: "2 3 2 7"
devices() { "$py" -c 'import json, sys, collections
c = collections.Counter(json.loads(l).get("gpu") for l in open(sys.argv[1]))
print(" ".join("%d %s" % (n, d) for d, n in sorted(c.items(), key=lambda x: str(x[0]))))' "$1"; }

# the shared (GPU-free) cache and zygote make each check a few seconds
CUDA_VISIBLE_DEVICES=3,7 "$KGATE" audit --store "$t/a.jsonl" --gpus 2 --jobs 2 --compile-jobs 0 --python "$py" "$@" \
    2> "$t/a.err"
check test $? -eq 0
got=$(devices "$t/a.jsonl")
echo "CUDA_VISIBLE_DEVICES=3,7 --gpus 2: records per device: $got"
check test "$(wc -l < "$t/a.jsonl")" -eq 4
echo "$got" | grep -Eq '^[0-9]+ 3 [0-9]+ 7$' || { echo "FAIL: devices $got, wanted both 3 and 7 only"; fails=$((fails + 1)); }
check grep -q "checks per GPU: device 3: [0-9]* (.*), device 7: [0-9]* (" "$t/a.err"
grep "checks per GPU" "$t/a.err"

CUDA_VISIBLE_DEVICES=3,7 "$KGATE" audit --store "$t/b.jsonl" --gpus 3 --python "$py" "$@" 2> "$t/b.err"
check test $? -eq 2
check grep -q "CUDA_VISIBLE_DEVICES=3,7 names 2 devices" "$t/b.err"
check test ! -s "$t/b.jsonl"
head -n 1 "$t/b.err"

env -u CUDA_VISIBLE_DEVICES "$KGATE" audit --store "$t/c.jsonl" --gpus 2 --jobs 2 --compile-jobs 0 --python "$py" \
    --pair "$kb/problems/relu.py:$kb/candidates/ok_torch_relu.py" \
    --pair "$kb/problems/scale.py:$kb/candidates/ok_torch_scale.py" 2> /dev/null
check test $? -eq 0
got=$(devices "$t/c.jsonl")
echo "no CUDA_VISIBLE_DEVICES, --gpus 2: $got"
check test "$got" = "1 0 1 1"
echo "$fails failed"
test $fails -eq 0
