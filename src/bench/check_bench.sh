#!/bin/sh
# check_bench.sh: wall time of a full `kgate check` (all twelve gates) of a 1M-element
# elementwise kernel and of a 512x1000 row softmax, split into compile, oracle and kernel runs
# as kgate's own JSON report measures them; host runner always, CUDA runner where it can run.
# Each kernel is checked twice: a cold compile cache, then a warm one. Usage: check_bench.sh KGATE SRCDIR
set -u
kgate=$1
src=$2
t=${TMPDIR:-/tmp}/kgate-bench-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
printf '%-26s %-6s %-5s %8s %8s %8s %8s %8s %8s %6s\n' kernel runner cache wall total compile inputs oracle runs nruns
for k in "$src/src/bench/relu_1m.c" "$src/testdata/builtin/softmax_rows.c" "$src/src/bench/relu_1m_cuda.cu" "$src/testdata/builtin/softmax_rows_cuda.cu"; do
    rm -rf "$t/cache"
    for cache in cold warm; do
        start=$(date +%s.%N)
        KGATE_CACHE_DIR=$t/cache "$kgate" check "$k" --json "$t/r.json" --quiet > /dev/null 2> "$t/err"
        rc=$?
        end=$(date +%s.%N)
        if [ $rc -eq 3 ]; then
            printf '%-26s %-6s %-5s %s\n' "$(basename "$k")" cuda "$cache" "skipped: $(head -c 120 "$t/err")"
            break
        fi
        tr -d '\n ' < "$t/r.json" > "$t/flat"
        field() { sed -n "s/.*\"timing\":{[^}]*\"$1\":\([0-9.e+-]*\).*/\1/p" "$t/flat"; }
        runner=$(sed -n 's/.*"runner":"\([a-z]*\)".*/\1/p' "$t/flat")
        printf '%-26s %-6s %-5s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %6s\n' "$(basename "$k")" "$runner" "$cache" \
            "$(awk "BEGIN { print $end - $start }")" "$(field total)" "$(field compile)" "$(field inputs)" "$(field oracle)" "$(field runs)" \
            "$(field kernel_runs)"
    done
done
