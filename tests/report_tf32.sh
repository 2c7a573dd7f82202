#!/bin/sh
# report_tf32.sh: `kgate report` gives the per-gate and overall rates with and without the
# failures that are TF32's alone (a record whose every failure has the cause tf32). The store is
# built from real `kgate check --json` reports of host kernels: a TF32-like matmul (its only
# defect: inputs cut to 10 mantissa bits), a correct matmul, and a kernel with another defect
# that fails the structure gate. The tf32-only count must match what `--allow tf32` accepts.
set -u
t=${TMPDIR:-/tmp}/kgate-report-tf32-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
check() { if "$@"; then :; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }
bugs=$top_srcdir/testdata/bugs
ok=$top_srcdir/testdata/ok
store=$t/store.jsonl
# one store record per kernel: its check report with an id (the JSON's own newlines are layout)
add() { # $1: id, $2: kernel, rest: options
    id=$1
    k=$2
    shift 2
    "$KGATE" check "$k" --json "$t/$id.json" --quiet "$@" > /dev/null 2>&1
    [ -s "$t/$id.json" ] || { echo "FAIL: no report for $k"; exit 1; }
    tr -d '\n' < "$t/$id.json" | sed "s/^{/{\"id\": \"$id\", /" >> "$store"
    echo >> "$store"
}
add tf32 "$bugs/matmul_tf32_like.c"
add good "$ok/matmul.c"
add other "$bugs/relu_skips_last.c"
"$KGATE" report "$store" --out "$t/rep" > "$t/out" 2> "$t/err"
check test $? -eq 0
# no gnuplot (a machine without it: the shell's "not found" closes the pipe): the report is still
# written, saying why there are no plots, and kgate is not killed by SIGPIPE
"$KGATE" report "$store" --out "$t/rep2" --gnuplot "$t/no-such-gnuplot" > /dev/null 2> "$t/err2"
check test $? -eq 0
check test -s "$t/rep2/report.md"
check grep -q "plots not drawn" "$t/err2"
cat "$t/out" "$t/err"
j=$(tr -d '\n ' < "$t/rep/report.json")
# all three checked, two with a violation, one of them TF32's alone
check test "$(echo "$j" | grep -o '"with_violation":[0-9]*' | head -n 1)" = '"with_violation":2'
w=$(echo "$j" | grep -o '"without_tf32_only":{[^}]*}[^}]*}')
echo "without_tf32_only: $w"
check test -n "$w"
has() { case "$1" in *"$2"*) return 0 ;; esac; echo "FAIL: no '$2' in $1"; fails=$((fails + 1)); }
has "$w" '"tf32_only":1,'
has "$w" '"with_violation":1,'
# per gate: the TF32 kernel's failures are gone (accuracy, shapes, precision, reduction-order),
# the other kernel's stay (it fails those too, and structure)
has "$w" '"accuracy":1,'
has "$w" '"reduction-order":1,'
has "$w" '"structure":1,'
# ...while the rates with them count both kernels' failures
has "$j" '"id":"accuracy","tolerance_free":false,"fail":2,'
has "$j" '"id":"structure","tolerance_free":true,"fail":1,'
check grep -q "^| accuracy | 2 (66.7%) | 1 (33.3%) |" "$t/rep/report.md"
check grep -q "^| \*\*any gate\*\* | 2 (66.7%) | 1 (33.3%) |" "$t/rep/report.md"
check grep -q "1 of them TF32's alone" "$t/out"
# the record counted as TF32's alone is the one `--allow tf32` accepts
"$KGATE" check "$bugs/matmul_tf32_like.c" --allow tf32 --quiet > /dev/null 2>&1
check test $? -eq 0
"$KGATE" check "$bugs/relu_skips_last.c" --allow tf32 --quiet > /dev/null 2>&1
check test $? -eq 1
[ "$fails" -eq 0 ] || exit 1
echo "PASS"
