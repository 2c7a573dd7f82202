#!/bin/sh
# repl_exit.sh: the REPL's exit status says whether its commands did their job (0), a load
# failed (2) or another command failed (1), so that a script piping commands into
# `kgate --repl` can tell; a failing gate is a command that worked. And a case with zero
# elements is never judged "exact" with nothing compared.
set -u
t=${TMPDIR:-/tmp}/kgate-repl-exit-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
HOME=$t
export HOME
. "$top_srcdir/tests/repl_lib.sh"
td=$top_srcdir/testdata
repl() { # repl OUT ARGS...: the REPL with commands from standard input; exit status in OUT.rc
    out=$1
    shift
    timeout 60 "$KGATE" --repl "$@" > "$out" 2>&1
    echo $? > "$out.rc"
}

repl "$t/ok" "$td/ok/relu.c" <<'EOF2'
show case
run structure
gates
EOF2
check "commands that work: exit 0" test "$(cat "$t/ok.rc")" -eq 0

repl "$t/gatefail" "$td/bugs/relu_fmaxf.c" <<'EOF2'
run nonfinite
EOF2
check "a failing gate is a command that worked: exit 0" test "$(cat "$t/gatefail.rc")" -eq 0
check "  (the gate did fail)" grep -qE '^  nonfinite +fail ' "$t/gatefail"

repl "$t/unknown" "$td/ok/relu.c" <<'EOF2'
frobnicate
show case
quit
EOF2
check "an unknown command: exit 1, also after later commands and quit" test "$(cat "$t/unknown.rc")" -eq 1

repl "$t/badfile" "$td/malformed/unknown_key.c" <<'EOF2'
gates
EOF2
check "a FILE that does not load: exit 2" test "$(cat "$t/badfile.rc")" -eq 2
check "  and says FILE:LINE" grep -q "unknown_key.c:[0-9]*:" "$t/badfile"

repl "$t/loads" <<EOF2
load $t/nope.c
load $td/ok/relu.c
show case
EOF2
check "a failed load, then one that works: still exit 2" test "$(cat "$t/loads.rc")" -eq 2
check "  the second load worked" grep -q "^current case: N=100000" "$t/loads"

"$KGATE" "$td/ok/relu.c" > "$t/pipe" 2>&1 <<'EOF2'
set N=
EOF2
check "kgate FILE with piped commands: the same status (a bad set: 1)" test $? -eq 1

# ---- zero elements: refused, never "exact" with nothing compared ------------------------------
repl "$t/empty" "$td/ok/relu.c" <<'EOF2'
set N=0
run accuracy
run structure
sweep N 0,4
EOF2
check "N=0: accuracy is refused" grep -qE '^  accuracy +refused the case N=0 has no output elements: nothing to compare' "$t/empty"
check "  structure too" grep -qE '^  structure +refused the case N=0 has no output elements' "$t/empty"
check "  nothing says exact" sh -c "! grep -q 'exact' '$t/empty'"
check "  a sweep's N=0 row is refused" grep -qE '^ +0 f32 +refused the case N=0 has no output elements' "$t/empty"
check "  and its N=4 row still runs" grep -qE '^ +4 f32 +pass ' "$t/empty"
check "  the commands worked: exit 0" test "$(cat "$t/empty.rc")" -eq 0

"$KGATE" check "$td/ok/relu.c" --shape N=0 --gates accuracy,structure,shapes --no-color > "$t/check0" 2>&1
check "kgate check --shape N=0: nothing was checked, exit 3" test $? -eq 3
check "  every gate refused" test "$(grep -cE '^  [a-z-]+ +refused the case N=0 has no output elements' "$t/check0")" -eq 3
check "  nothing says exact" sh -c "! grep -q 'exact' '$t/check0'"

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "PASS"
