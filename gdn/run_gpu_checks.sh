#!/bin/sh
# run_gpu_checks.sh: the gdn GPU checks, for an sm_90 (H100/H200) host, run from a build tree made
# elsewhere by `make gdn` (nothing is compiled here): the correctness test tests/gpu/test_gdn_cuda
# (libgdn vs the fp64 oracle, determinism, NaN positions) and the benchmark gdn/bench_gdn. Full
# logs go to LOG_DIR; compact tables are printed at the end. Exit status: 0 only if both passed.
#   sh gdn/run_gpu_checks.sh [BUILD_DIR [LOG_DIR]]     (defaults: . and BUILD_DIR/gdn-gpu-logs)
set -u
build=${1:-.}
log=${2:-$build/gdn-gpu-logs}
test_bin=$build/tests/gpu/test_gdn_cuda
bench_bin=$build/gdn/bench_gdn
for f in "$test_bin" "$bench_bin" "$build/gdn/libgdn.so"; do
    if [ ! -x "$f" ] && [ ! -f "$f" ]; then
        echo "run_gpu_checks: $f missing: run make gdn (configured with nvcc) first" >&2
        exit 2
    fi
done
mkdir -p "$log" || exit 2

# The benchmark links libcublas dynamically (rpath: the toolkit it was built with); if this
# host keeps the toolkit elsewhere, its nvcc says where.
if command -v nvcc >/dev/null 2>&1; then
    cudalib=$(dirname "$(command -v nvcc)")/../lib64
    LD_LIBRARY_PATH=$cudalib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
fi

{
    date -u '+%Y-%m-%d %H:%M:%S UTC'
    uname -n
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1
} > "$log/host.txt"

t0=$(date +%s)
"$test_bin" > "$log/test_gdn_cuda.log" 2>&1
test_rc=$?
t1=$(date +%s)
"$bench_bin" > "$log/bench_gdn.log" 2>&1
bench_rc=$?
t2=$(date +%s)

verdict() {
    case $1 in
    0) echo "pass" ;;
    77) echo "SKIPPED (no usable GPU)" ;;
    *) echo "FAIL (exit $1)" ;;
    esac
}

echo "==== host"
cat "$log/host.txt"
echo
echo "==== tests/gpu/test_gdn_cuda: $(verdict $test_rc), $((t1 - t0)) s (log: $log/test_gdn_cuda.log)"
# the device line, then the table and the summary (everything from the table's title on)
grep -m1 '^device\|^SKIP' "$log/test_gdn_cuda.log"
sed -n '/^relative RMS error/,$p' "$log/test_gdn_cuda.log"
[ $test_rc -ne 0 ] && [ $test_rc -ne 77 ] && tail -n 5 "$log/test_gdn_cuda.log"
echo
echo "==== gdn/bench_gdn: $(verdict $bench_rc), $((t2 - t1)) s (log: $log/bench_gdn.log)"
cat "$log/bench_gdn.log"
echo
echo "==== summary: test $(verdict $test_rc); bench $(verdict $bench_rc)"
[ $test_rc -eq 0 ] && [ $bench_rc -eq 0 ]
