#!/bin/sh
# audit_bench.sh: kgate audit's throughput (twelve gates per kernel, plus the standard test and
# the decoy check) against a sequential KernelBench-style evaluation (compile, then 5 trials, one
# kernel at a time) over the same KernelBench-format pairs, in the same run, both from empty
# compile caches. Usage: audit_bench.sh KGATE SRCDIR [JOBS [COMPILE_JOBS]] (GPU host: every
# candidate of testdata/$KB_CORPUS, default kernelbench-real, the 42 pairs at KernelBench's own
# sizes; KB_CORPUS=kernelbench: the small controls; KB_CPU_ONLY=1: the runs-on: cpu ones;
# KB_LIST="a b": those). Prints both rates and their ratio, the peak GPU memory of each side
# (nvidia-smi sampled every second, the whole device) and the mean time of the twelve gates of a
# level-1 pair (the store's gate seconds, so compile excluded). Without a GPU it skips (exit 77).
set -u
kgate=$1
src=$2
jobs=${3:-}  # default: kgate audit's own (3/8 and 5/8 of the cores: 6 and 10 on the H200)
cjobs=${4:-}
py=${KGATE_PYTHON:-python3}
t=${TMPDIR:-/tmp}/kgate-auditbench-$$
mkdir -p "$t"
kb=$src/testdata/${KB_CORPUS:-kernelbench-real}
if [ "${KB_CPU_ONLY:-0}" != 1 ] && ! nvidia-smi -L > /dev/null 2>&1; then
    echo "bench-audit: no NVIDIA GPU here (nvidia-smi -L fails): skipped; KB_CPU_ONLY=1 runs the CPU pairs"
    exit 77
fi
# peak device memory in use while a side runs: nvidia-smi sampled every second into FILE
sample_start() {
    ( while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2> /dev/null | head -n 1; sleep 1; done ) > "$1" &
    sampler=$!
}
sample_stop() {
    kill "$sampler" 2> /dev/null
    wait "$sampler" 2> /dev/null
    m=$(sort -n "$1" | tail -n 1)
    echo "${m:-n/a}"
}
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
# it; its rate is the sum of the pairs' wall times. Nor may the kgate side: KGATE_STORE=FILE is
# its audit store, continued with --resume, and FILE.walls the wall seconds and pairs of each
# sitting; its rate is the store's pairs over the sittings' summed wall time (a sitting cut by a
# time limit counts its whole wall time, the checks it killed included). With BENCH_SIDE=kgate and
# SEQ_STORE, the speedup is against the store's rate once it is complete.
side=${BENCH_SIDE:-both}
seq_rate=""
# SEQ_SAMPLE=N: the sequential side measures a random N of the pairs (drawn with SEQ_SEED, default
# 20261207, the same N whatever the order of the corpus's files), as the rate of the whole; the
# kgate side still audits every pair. The 42 real-size pairs take ~20 minutes one at a time (14
# load_inline builds of about a minute each), past one device call.
seq_pairs() {
    if [ -n "${SEQ_SAMPLE:-}" ]; then
        "$py" -c '
import random, sys
n, seed, pairs = int(sys.argv[1]), int(sys.argv[2]), sorted(sys.argv[3:])
print("\n".join(sorted(random.Random(seed).sample(pairs, min(n, len(pairs))))))
' "$SEQ_SAMPLE" "${SEQ_SEED:-20261207}" "$@"
    else
        printf '%s\n' "$@"
    fi
}
if [ "$side" != kgate ]; then
    # each side starts from empty compile caches: load_inline's and Triton's
    seq_pairs "$@" > "$t/seq.list"
    [ -n "${SEQ_SAMPLE:-}" ] && echo "sequential side: a random $(wc -l < "$t/seq.list") of the $# pairs (SEQ_SAMPLE, seed ${SEQ_SEED:-20261207}), standing for all"
    sample_start "$t/seq.mem"
    # shellcheck disable=SC2046
    TORCH_EXTENSIONS_DIR=$t/seq-ext TRITON_CACHE_DIR=$t/seq-triton "$py" "$src/src/bench/kernelbench_seq.py" \
        --store "${SEQ_STORE:-$t/seq.jsonl}" $(cat "$t/seq.list") > "$t/seq.txt" 2>&1
    echo "sequential side: peak GPU memory in use $(sample_stop "$t/seq.mem") MiB (nvidia-smi)"
elif [ -n "${SEQ_STORE:-}" ]; then
    # the sequential side measured in earlier sittings of this session: its rate, if complete
    # shellcheck disable=SC2046
    "$py" "$src/src/bench/kernelbench_seq.py" --store "$SEQ_STORE" --summary $(seq_pairs "$@") > "$t/seq.txt" 2>&1
fi
if [ -f "$t/seq.txt" ]; then
    tail -n 2 "$t/seq.txt"
    grep -q 'not measured yet' "$t/seq.txt" || seq_rate=$(sed -n 's/.* = \([0-9]*\) kernels\/hour/\1/p' "$t/seq.txt")
fi
if [ "$side" != seq ]; then
    pairs=""
    for pc in "$@"; do pairs="$pairs --pair $pc"; done
    store=${KGATE_STORE:-$t/a.jsonl}
    start=$(date +%s.%N)
    sample_start "$t/kgate.mem"
    cut() { # a time limit (TERM) ends the sitting: its wall time noted, the audit stopped (its
        # store keeps the pairs done), what it wrote kept
        awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }' >> "$store.walls"
        kill "$apid" 2> /dev/null
        wait "$apid" 2> /dev/null
        sample_stop "$t/kgate.mem" > /dev/null
        cp "$store" "$t/audit.err" "${OUT:-$t}/" 2> /dev/null
        echo "kgate side: cut by a time limit; $(wc -l < "$store") pairs in the store $store"
        rm -rf "$t"
        exit 124
    }
    trap cut TERM
    # shellcheck disable=SC2086
    KGATE_CACHE_DIR=$t/kgate-cache TRITON_CACHE_DIR=$t/kgate-triton "$kgate" audit --store "$store" $slots \
        ${KGATE_STORE:+--resume} --gpus 1 --python "$py" $pairs 2> "$t/audit.err" &
    apid=$!
    wait "$apid"
    end=$(date +%s.%N)
    trap - TERM
    awk -v s="$start" -v e="$end" 'BEGIN { print e - s }' >> "$store.walls"
    [ "$store" = "$t/a.jsonl" ] || cp "$store" "$t/a.jsonl" 2>/dev/null
    echo "kgate side: peak GPU memory in use $(sample_stop "$t/kgate.mem") MiB (nvidia-smi)"
    # its summary: the rate, where the time went, the device's memory (not the progress lines)
    grep '^kgate audit: [0-9]* pairs\|^kgate audit: device\|waited for device memory' "$t/audit.err"
    # the twelve gates of each level-1 pair after compile: the store's per-gate seconds
    "$py" -c '
import json, sys
ts = []
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if "/level1/" in r.get("problem", "") and r.get("gates"):
        ts.append(sum(g.get("seconds", 0) for g in r["gates"]))
if ts:
    print("12-gate check of a level-1 pair after compile: mean %.1f s over %d pairs (max %.1f s)" % (sum(ts) / len(ts), len(ts), max(ts)))
' "$t/a.jsonl"
    # over every sitting of the store: its pairs, the sittings' summed wall time
    n=$(wc -l < "$store")
    w=$(awk '{ w += $1 } END { print w }' "$store.walls")
    sittings=$(wc -l < "$store.walls")
    [ "$sittings" -gt 1 ] && echo "kgate side: $n pairs in the store after $sittings sittings of $w s in all"
    awk -v n="$n" -v w="$w" -v q="${seq_rate:-0}" 'BEGIN {
        r = n / w * 3600
        printf "kgate audit: %d kernels in %.1f s = %.0f kernels/hour", n, w, r
        if (q > 0) printf "; sequential KernelBench-style %s kernels/hour; speedup %.2fx", q, r / q
        printf "\n" }'
fi
cp "$t/seq.txt" "$t/a.jsonl" "$t/audit.err" "${OUT:-$t}/" 2>/dev/null
rm -rf "$t"
