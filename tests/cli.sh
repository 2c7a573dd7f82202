#!/bin/sh
# cli.sh: the kgate command line as a user meets it: help and version, the gate list and
# explanations, exit codes, the JSON report, and replay commands that reproduce a failure.
set -u
t=${TMPDIR:-/tmp}/kgate-cli-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
check() { # check DESCRIPTION COMMAND...: the command must succeed
    d=$1
    shift
    if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}
td=$top_srcdir/testdata

"$KGATE" --help > "$t/help" 2>&1
check "--help exits 0" test $? -eq 0
for o in --gates --seed --json --runner --baseline --shape --dtype --dist --timeout; do
    check "--help lists $o" grep -q -- "$o" "$t/help"
done
check "--version" sh -c "'$KGATE' --version | grep -q '^kgate [0-9]'"

"$KGATE" --list-gates > "$t/gates"
check "twelve gates listed" test "$(grep -c -E '^[a-z-]+ +(tf|cal) ' "$t/gates")" -eq 12
for g in structure accuracy nonfinite determinism freshness aliasing placement shapes precision reduction-order bounds limits; do
    check "gate $g listed" grep -q "^$g " "$t/gates"
    "$KGATE" explain "$g" > "$t/explain" 2>&1
    check "explain $g says what it catches" grep -q "Catches" "$t/explain"
done
"$KGATE" explain nonsense > /dev/null 2>&1
check "explain of an unknown gate exits 2" test $? -eq 2

"$KGATE" check > /dev/null 2>&1
check "check without a file exits 2" test $? -eq 2
"$KGATE" check "$td/ok/relu.c" --gates nosuchgate > /dev/null 2>&1
check "an unknown gate exits 2" test $? -eq 2
"$KGATE" check "$td/ok/relu.c" --runner cuda > /dev/null 2>&1
check "a .c file on the cuda runner exits 2" test $? -eq 2
"$KGATE" check "$t/does-not-exist.c" 2> "$t/err"
check "a missing file exits 2" test $? -eq 2
check "  and says so" grep -q "cannot open" "$t/err"
"$KGATE" check "$td/ok/relu.c" --shape Q=3 > /dev/null 2> "$t/err"
check "--shape with an unknown symbol exits 2" test $? -eq 2
# a pinned shape: the shapes gate judges that one case (it once freed oracle values it never
# asked for, and kgate crashed: builtin:gla_bwd.c at this shape did every time)
"$KGATE" check builtin:gla_bwd.c --shape B=1,T=130,H=2,K=64,V=64 --no-color > "$t/out" 2>&1
check "a check with --shape ends with its verdict (exit 0)" test $? -eq 0
check "  and the shapes gate judged the pinned case" grep -q '^  shapes  *pass' "$t/out"
# k is bounded as in a contract's tolerance: (an infinite k passes every kernel)
for k in inf nan 1e308 1000001 0.5 ""; do
    "$KGATE" check "$td/ok/relu.c" --gates accuracy --tolerance "$k" > /dev/null 2> "$t/err"
    check "--tolerance '$k' exits 2" test $? -eq 2
    check "  and says the range" grep -q "from 1 to 1e6" "$t/err"
done
"$KGATE" audit --store "$t/s.jsonl" --pair a.py:b.py --tolerance inf > /dev/null 2> "$t/err"
check "audit --tolerance inf exits 2" test $? -eq 2
check "  and says the range" grep -q "from 1 to 1e6" "$t/err"
test ! -e "$t/s.jsonl"
check "  before the store is created" test $? -eq 0

# `kgate check FILE --json` alone: one JSON document on stdout, the text report on stderr
"$KGATE" check "$td/ok/relu.c" --gates accuracy --json > "$t/stdout.json" 2> "$t/stderr.txt"
check "bare --json exits 0" test $? -eq 0
check "  stdout is the JSON report" sh -c "tr -d '\n ' < '$t/stdout.json' | grep -q '^{.*\"verdict\":\"pass\".*}\$'"
check "  the text went to stderr" grep -q "^verdict: pass" "$t/stderr.txt"
"$KGATE" check --json "$td/ok/relu.c" --gates accuracy 2> /dev/null | grep -q '"kernel": "relu"'
check "--json before the file is bare too" test $? -eq 0

# JSON report of a failing kernel
"$KGATE" check "$td/bugs/relu_fmaxf.c" --json "$t/r.json" --baseline kernelbench > "$t/out" 2>&1
check "a failing kernel exits 1" test $? -eq 1
j=$(tr -d '\n ' < "$t/r.json")
check "json: kernel" sh -c "echo '$j' | grep -q '\"kernel\":\"relu_fmaxf\"'"
check "json: runner" sh -c "echo '$j' | grep -q '\"runner\":\"host\"'"
check "json: verdict fail" sh -c "echo '$j' | grep -q '\"verdict\":\"fail\"'"
check "json: twelve gates" test "$(echo "$j" | grep -o '"tolerance_free":' | wc -l)" -eq 12
check "json: nonfinite failed" sh -c "echo '$j' | grep -q '\"id\":\"nonfinite\",\"status\":\"fail\"'"
check "json: a replay command" sh -c "echo '$j' | grep -q '\"replay\":\"kgatecheck'"
check "json: the standard test passed this bug" sh -c "echo '$j' | grep -q '\"kernelbench\":\"pass\"'"
check "text: the standard test line" grep -q "standard test (kernelbench" "$t/out"

# the replay command printed for a failure reproduces it
replay=$(sed -n 's/^ *replay: //p' "$t/out" | head -n 1)
check "a replay command is printed" test -n "$replay"
# shellcheck disable=SC2086
set -- $replay
shift
"$KGATE" "$@" --json "$t/replay.json" > /dev/null 2>&1
check "the replay exits 1" test $? -eq 1
check "the replay fails the same gate" sh -c "tr -d '\n ' < '$t/replay.json' | grep -q '\"status\":\"fail\"'"

# a correct kernel exits 0; --gates restricts; --quiet prints one line
"$KGATE" check "$td/ok/relu.c" --gates structure,accuracy > "$t/out" 2>&1
check "a correct kernel exits 0" test $? -eq 0
check "--gates runs only those" test "$(grep -c -E '^  [a-z-]+ +(pass|fail|skip|error)' "$t/out")" -eq 2
check "--quiet" sh -c "'$KGATE' check '$td/ok/relu.c' --gates structure --quiet | grep -qx 'relu pass'"

# the demo: the README's first command
"$KGATE" demo > "$t/demo" 2>&1
rc=$?
check "kgate demo exits 0" test $rc -eq 0
[ $rc -eq 0 ] || { echo "kgate demo (exit $rc) said:"; cat "$t/demo"; }
check "kgate demo checks softmax_rows" grep -q "^softmax_rows" "$t/demo"

# the same seed gives the same report; another seed changes the inputs
"$KGATE" check "$td/ok/sum_rows.c" --gates accuracy --json "$t/a.json" > /dev/null 2>&1
"$KGATE" check "$td/ok/sum_rows.c" --gates accuracy --json "$t/b.json" > /dev/null 2>&1
"$KGATE" check "$td/ok/sum_rows.c" --gates accuracy --seed 9 --json "$t/c.json" > /dev/null 2>&1
sed '/seconds\|timing\|"total\|"runs\|"oracle\|"compile\|"inputs\|"compare\|"compiler\|kernel_runs\|"host_/d' "$t/a.json" > "$t/a2"
sed '/seconds\|timing\|"total\|"runs\|"oracle\|"compile\|"inputs\|"compare\|"compiler\|kernel_runs\|"host_/d' "$t/b.json" > "$t/b2"
sed '/seconds\|timing\|"total\|"runs\|"oracle\|"compile\|"inputs\|"compare\|"compiler\|kernel_runs\|"host_/d' "$t/c.json" > "$t/c2"
check "same seed, same report" cmp -s "$t/a2" "$t/b2"
check "another seed, another report" sh -c "! cmp -s '$t/a2' '$t/c2'"

# every gate skipped: nothing was checked, and every face says so (text, JSON, exit 3)
"$KGATE" check "$td/ok/relu.c" --gates placement,limits --no-color --json "$t/nc.json" > "$t/nc" 2>&1
check "all gates skipped: exit 3" test $? -eq 3
check "all gates skipped: verdict not-checked" grep -q "^verdict: not-checked" "$t/nc"
check "all gates skipped: JSON not-checked" grep -q '"verdict": "not-checked"' "$t/nc.json"

# a hang is timed out once: the gates after it do not run the kernel again (relu_hangs spins on
# every input; ten gates would time out ten times)
start=$(date +%s.%N)
"$KGATE" check "$td/bugs/relu_hangs.c" --timeout 2 --no-color --json "$t/hang.json" > "$t/hang" 2>&1
check "a hang: exit 1" test $? -eq 1
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') # no bc on the H200
check "a hang: verdict error" grep -q '"verdict": "error"' "$t/hang.json"
check "a hang: one timeout" test "$(grep -c 'the run was killed' "$t/hang")" -eq 1
check "a hang: under 2x the timeout ($took s)" awk -v t="$took" 'BEGIN { exit !(t < 4) }'
check "a hang: one cause" test "$(tr -d '\n' < "$t/hang.json" | grep -o '"gate": "' | wc -l)" -eq 1
check "a hang: the others say so" test "$(grep -c '(same cause as structure)' "$t/hang")" -ge 9

# a crash names the signal and, for a host kernel (built with -g), the source line
"$KGATE" check "$td/bugs/relu_segfault.c" --gates structure --no-color > "$t/crash" 2>&1
check "a crash: the signal" grep -q "signal 11" "$t/crash"
check "a crash: the line" grep -q "relu_segfault.c:[0-9]" "$t/crash"

# explain names causes as well as gates
"$KGATE" explain output-depends-on-prior-contents > "$t/ex" 2>&1
check "explain CAUSE" grep -q "accumulates into its output" "$t/ex"

echo "$fails failed"
test $fails -eq 0
