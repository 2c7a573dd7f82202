#!/bin/sh
# fuzz.sh: builds the contract parser's libFuzzer harness (tests/fuzz/fuzz_contract.c) with clang,
# AddressSanitizer and UBSan into the build tree, runs every input of tests/fuzz/regressions once
# (a finding that was fixed stays fixed), then fuzzes for KG_FUZZ_SECONDS (default 5) from the
# seed corpus tests/fuzz/corpus.sh gathers. A crash, leak, timeout or sanitizer report fails it
# and leaves the input as tests/fuzz/crash-* (leak-*, timeout-*) in the build tree. Skips
# (exit 77) where clang or its libFuzzer runtime is missing. `make fuzz` is the long run
# (tests/fuzz/README).
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
b=${top_builddir:-.}
secs=${KG_FUZZ_SECONDS:-5}
out=$b/tests/fuzz
mkdir -p "$out"

cc=${KG_FUZZ_CC:-}
if [ -z "$cc" ]; then
    for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
        command -v "$c" >/dev/null 2>&1 && { cc=$c; break; }
    done
fi
[ -n "$cc" ] || { echo "SKIP: no clang (the fuzzer needs clang and its libFuzzer runtime, libclang-rt-dev)"; exit 77; }
SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' > "$out/probe.c"
if ! "$cc" $SAN "$out/probe.c" -o "$out/probe" > "$out/probe.log" 2>&1; then
    echo "SKIP: $cc cannot link -fsanitize=fuzzer (install libclang-rt-dev):"
    head -n 3 "$out/probe.log"
    rm -f "$out/probe.c" "$out/probe" "$out/probe.log"
    exit 77
fi
rm -f "$out/probe.c" "$out/probe" "$out/probe.log"

# the contract parser and what it calls: base, the op registry (oracle/, gdn/) for op: checks
SRCS="src/contract/contract.c src/contract/parse.c src/contract/args.c src/contract/signature.c src/contract/case.c
 src/base/util.c src/base/expr.c src/base/dtype.c src/base/tensor.c src/base/parallel.c src/oracle/oracle.c src/oracle/elementwise.c
 src/oracle/reduce.c src/oracle/norm.c src/oracle/linalg.c src/oracle/gdn_ops.c gdn/oracle.c gdn/chunk_host.c"
files=
for s in $SRCS; do files="$files $top/$s"; done
fz=$out/fuzz_contract
# shellcheck disable=SC2086
if ! "$cc" $SAN -g -O1 -std=gnu11 -ffp-contract=off -include "$b/config.h" -I"$top/src" -I"$top" -I"$b/src" \
    "$top/tests/fuzz/fuzz_contract.c" $files -lm -o "$fz"; then
    echo "FAIL: the harness does not build with $cc"
    exit 1
fi

regs=$(ls "$top"/tests/fuzz/regressions/* 2>/dev/null)
if [ -n "$regs" ]; then
    # shellcheck disable=SC2086
    "$fz" $regs > "$out/regressions.log" 2>&1 || {
        cat "$out/regressions.log"
        echo "FAIL: an input of tests/fuzz/regressions fails again"
        exit 1
    }
    echo "ok: $(echo "$regs" | wc -l) regression inputs"
fi

sh "$top/tests/fuzz/corpus.sh" "$top" "$out/corpus" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/kgate-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
"$fz" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -dict="$top/tests/fuzz/contract.dict" -artifact_prefix="$out/" "$work" "$out/corpus" > "$out/fuzz.log" 2>&1
rc=$?
grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$out/fuzz.log"
if [ $rc -ne 0 ]; then
    tail -n 60 "$out/fuzz.log"
    echo "FAIL: the fuzzer found something (exit $rc); the input is in $out (crash-*, leak-*, timeout-*)"
    exit 1
fi
echo "PASS: $secs s of fuzzing, nothing found"
