#!/bin/sh
# audit_bench.sh: kgate audit's throughput (twelve gates per kernel, plus the standard test and
# the decoy check) against a sequential KernelBench-style evaluation (compile, then 5 trials, one
# kernel at a time) over the same KernelBench-format pairs, in the same run, both from empty
# compile caches. Usage: audit_bench.sh KGATE SRCDIR [JOBS [COMPILE_JOBS]] (GPU host: all
# testdata/kernelbench candidates; KB_CPU_ONLY=1: the runs-on: cpu ones; KB_LIST="a b": those).
set -u
kgate=$1
src=$2
jobs=${3:-}  # default: kgate audit's own (3/8 and 5/8 of the cores: 6 and 10 on the H200)
cjobs=${4:-}
py=${KGATE_PYTHON:-python3}
t=${TMPDIR:-/tmp}/kgate-auditbench-$$
mkdir -p "$t"
kb=$src/testdata/kernelbench
set --
for c in "$kb"/candidates/*.py; do
    if [ "${KB_CPU_ONLY:-0}" = 1 ]; then grep -q '^# runs-on: cpu' "$c" || continue; fi
    if [ -n "${KB_LIST:-}" ]; then echo " $KB_LIST " | grep -q " $(basename "$c" .py) " || continue; fi
    set -- "$@" "$kb/$(sed -n 's/^# kgate-problem: *//p' "$c"):$c"
done
slots="${jobs:+--jobs $jobs}${cjobs:+ --compile-jobs $cjobs}"
echo "$# pairs; kgate audit ${slots:-with its default slots}"
# BENCH_SIDE=seq|kgate|both (default both). The sequential side of a large set does not fit one
# 10-minute device call: SEQ_STORE=FILE keeps its per-pair results, so that later calls continue
# it; its rate is the sum of the pairs' wall times. The kgate side runs in one go; with
# BENCH_SIDE=kgate and SEQ_STORE, the speedup is against the store's rate once it is complete.
side=${BENCH_SIDE:-both}
seq_rate=""
if [ "$side" != kgate ]; then
    # each side starts from empty compile caches: load_inline's and Triton's
    TORCH_EXTENSIONS_DIR=$t/seq-ext TRITON_CACHE_DIR=$t/seq-triton "$py" "$src/src/bench/kernelbench_seq.py" \
        --store "${SEQ_STORE:-$t/seq.jsonl}" "$@" > "$t/seq.txt" 2>&1
elif [ -n "${SEQ_STORE:-}" ]; then
    # the sequential side measured in earlier sittings of this session: its rate, if complete
    "$py" "$src/src/bench/kernelbench_seq.py" --store "$SEQ_STORE" --summary "$@" > "$t/seq.txt" 2>&1
fi
if [ -f "$t/seq.txt" ]; then
    tail -n 2 "$t/seq.txt"
    grep -q 'not measured yet' "$t/seq.txt" || seq_rate=$(sed -n 's/.* = \([0-9]*\) kernels\/hour/\1/p' "$t/seq.txt")
fi
if [ "$side" != seq ]; then
    pairs=""
    for pc in "$@"; do pairs="$pairs --pair $pc"; done
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    KGATE_CACHE_DIR=$t/kgate-cache TRITON_CACHE_DIR=$t/kgate-triton "$kgate" audit --store "$t/a.jsonl" $slots \
        --gpus 1 --python "$py" $pairs 2> "$t/audit.err"
    end=$(date +%s.%N)
    tail -n 1 "$t/audit.err"
    awk -v n=$# -v s="$start" -v e="$end" -v q="${seq_rate:-0}" 'BEGIN {
        r = n / (e - s) * 3600
        printf "kgate audit: %d kernels in %.1f s = %.0f kernels/hour", n, e - s, r
        if (q > 0) printf "; sequential KernelBench-style %s kernels/hour; speedup %.2fx", q, r / q
        printf "\n" }'
fi
cp "$t/seq.txt" "$t/a.jsonl" "${OUT:-$t}/" 2>/dev/null
rm -rf "$t"
