#!/bin/sh
# tui_repl.sh: the inspector's command language through the line REPL (standard input not a
# terminal): a planted bug shows its failing gate and the next command to type, the heatmap's
# worst cell is the planted position, replay shows where nondeterministic runs differ, sweep
# prints its table, every bad command says why, and the output is plain text.
set -u
. "$top_srcdir/tests/repl_lib.sh"
t=${TMPDIR:-/tmp}/kgate-tui-repl-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
HOME=$t
export HOME
repl() { # repl OUT ARGS...: the REPL with commands from standard input; exit status in OUT.rc
    out=$1
    shift
    timeout 25 "$KGATE" --repl "$@" > "$out" 2>&1
    echo $? > "$out.rc"
}
td=$top_srcdir/testdata

# ---- a planted NaN bug: the failing gate, its evidence, the heatmap, the case, save ----------
repl "$t/relu" "$td/bugs/relu_fmaxf.c" <<EOF
run all
heatmap y
explain nonfinite
show case
set N=1000
show case
resources
save $t/r.json
quit
gates
EOF
check "relu_fmaxf: quit exits 0" test "$(cat "$t/relu.rc")" -eq 0
check "relu_fmaxf: loaded" has "$t/relu" "loaded relu_fmaxf"
check "relu_fmaxf: nonfinite shown failing" grep -qE '^  nonfinite +fail ' "$t/relu"
check "relu_fmaxf: structure shown passing" grep -qE '^  structure +pass ' "$t/relu"
check "relu_fmaxf: the overall verdict" has "$t/relu" "verdict so far: fail (9 pass, 1 fail, 2 skip; 12 of 12 gates run)"
check "relu_fmaxf: the next command is suggested" has "$t/relu" "next: heatmap y"
check "relu_fmaxf: the replay command is printed" grep -q '^replay: kgate check .*--gates nonfinite' "$t/relu"
ev=$(sed -n 's/^evidence: \(y\[[0-9]*\]\) got .*/\1/p' "$t/relu" | head -n 1)
check "relu_fmaxf: evidence names an element" test -n "$ev"
check "relu_fmaxf: the heatmap uses the failing case" has "$t/relu" "dist=special (the case nonfinite failed)"
check "relu_fmaxf: the heatmap's worst is the evidence ($ev)" grep -qF "worst: $ev got 0, expected nan: NaN lost" "$t/relu"
check "relu_fmaxf: the heatmap marks the lost NaN" grep -qE '^ +[0-9]+ \|[^|]*N[^|]*\|$' "$t/relu"
check "relu_fmaxf: the heatmap has a legend" has "$t/relu" "N NaN expected, not produced"
check "relu_fmaxf: explain says what it catches" has "$t/relu" "Catches:"
check "relu_fmaxf: show case" has "$t/relu" "current case: N=100000 dtype=f32 seed=1 dist=normal"
check "relu_fmaxf: show case lists the args" grep -qE '^  y +out +f32\[100000\]' "$t/relu"
check "relu_fmaxf: set changes the case" has "$t/relu" "current case: N=1000 dtype=f32 seed=1 dist=normal"
check "relu_fmaxf: resources are N/A on the host" has "$t/relu" "registers/thread       N/A on the host runner"
check "relu_fmaxf: resources print no made-up zero" sh -c "! grep -qE '^  (registers|shared).* 0' '$t/relu'"
check "relu_fmaxf: save says so" has "$t/relu" "saved 12 verdicts of relu_fmaxf to $t/r.json (verdict fail)"
check "relu_fmaxf: the JSON exists" test -s "$t/r.json"
check "relu_fmaxf: the JSON names the kernel" grep -q '"kernel": "relu_fmaxf"' "$t/r.json"
check "relu_fmaxf: the JSON has the failing gate" sh -c "tr -d '\n ' < '$t/r.json' | grep -q '\"id\":\"nonfinite\",\"status\":\"fail\"'"
check "relu_fmaxf: nothing runs after quit" sh -c "! grep -q '^tf: tolerance-free' '$t/relu'"
check "relu_fmaxf: no escape codes" sh -c "! grep -q \"\$(printf '\\033')\" '$t/relu'"

# ---- one wrong element at a known place: the heatmap's worst cell is there -------------------
cat > "$t/one_wrong.c" <<'EOF'
/*@kgate
name:    relu_one_wrong
op:      relu
entry:   relu2d
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
shape:   M=8 N=12
*/
/* Planted bug: y[3,5] is off by one; every other element is exact. */
void relu2d(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M * N; i++) y[i] = x[i] > 0 ? x[i] : 0;
    if (M > 3 && N > 5) y[3 * N + 5] += 1.0f;
}
EOF
repl "$t/one" "$t/one_wrong.c" <<'EOF'
run accuracy
heatmap y
sweep N 1,7,255
sweep N 2..16*2
EOF
check "one_wrong: end of input exits 0" test "$(cat "$t/one.rc")" -eq 0
check "one_wrong: accuracy fails" grep -qE '^  accuracy +fail ' "$t/one"
check "one_wrong: the worst element is y[3,5]" grep -q '^worst: y\[3,5\] got ' "$t/one"
check "one_wrong: one cell per element" has "$t/one" "y [8,12]: 1 cell = 1x1 element"
check "one_wrong: row 3 is marked at column 5" grep -qx '    3 |     @      |' "$t/one"
check "one_wrong: the other rows are exact" test "$(grep -cE '^ +[0-9]+ \|            \|$' "$t/one")" -eq 7
check "one_wrong: sweep prints its header" grep -qE '^ +N dtype status +err/thr' "$t/one"
check "one_wrong: sweep passes at N=1" grep -qE '^ +1 f32 +pass ' "$t/one"
check "one_wrong: sweep fails at N=7" grep -qE '^ +7 f32 +fail ' "$t/one"
check "one_wrong: sweep fails at N=255" grep -qE '^ +255 f32 +fail .*\|?!+' "$t/one"
check "one_wrong: a geometric sweep" test "$(grep -cE '^ +(2|4|8|16) f32 +(pass|fail) ' "$t/one")" -eq 4

# ---- nondeterminism: replay shows the differing positions ------------------------------------
repl "$t/rot" "$td/bugs/sum_rotating_order.c" <<'EOF'
replay 1 2
run determinism
replay 1 2
replay 1 9
sweep N 1,7,255
sweep Q 1
sweep N 1..x
EOF
check "sum_rotating_order: replay before the gate says what to do" has "$t/rot" "no recorded runs: run the determinism gate first"
check "sum_rotating_order: determinism fails" grep -qE '^  determinism +fail ' "$t/rot"
check "sum_rotating_order: the next command is replay" has "$t/rot" "next: replay 1 2"
check "sum_rotating_order: replay header" has "$t/rot" "replay: run 1 vs run 2 of the determinism gate (M=128,N=1000"
n=$(sed -n 's/^  y: \([0-9]*\) of 128 positions differ.*/\1/p' "$t/rot")
check "sum_rotating_order: replay counts differing positions ($n)" test "${n:-0}" -gt 0
check "sum_rotating_order: replay names the largest difference" grep -q 'largest difference [0-9.e+-]* at y\[[0-9]*\]' "$t/rot"
check "sum_rotating_order: the map marks differing positions" grep -qE '^ +0 \|[.@]*@[.@]*\|$' "$t/rot"
check "sum_rotating_order: runs out of range" has "$t/rot" "runs are numbered 1..6"
check "sum_rotating_order: sweep has three rows" test "$(grep -cE '^ +(1|7|255) f32 +(pass|fail) ' "$t/rot")" -eq 3
check "sum_rotating_order: sweep of an unknown symbol" has "$t/rot" "has no shape symbol 'Q'"
check "sum_rotating_order: a bad sweep list" has "$t/rot" "sweep: expected A..B*F"

# ---- bad commands, a file that does not load, builtins, help ----------------------------------
repl "$t/bad" "$td/malformed/unknown_key.c" <<'EOF'
run all
frobnicate
load builtin:softmax_rows.c
run nosuch
run
set N
set Q=3
dtype f99
seed -1
dist weird
replay a b
heatmap nosuch
heatmap y 0
save
explain nosuch
show nonsense
next
help
EOF
check "bad: a load failure makes the REPL exit 2" test "$(cat "$t/bad.rc")" -eq 2
check "bad: the load error names FILE:LINE" grep -q "unknown_key.c:[0-9]*:" "$t/bad"
check "bad: commands need a kernel" has "$t/bad" "no kernel loaded: load FILE first"
check "bad: unknown command" has "$t/bad" "unknown command 'frobnicate' (help lists them)"
check "bad: load builtin" has "$t/bad" "loaded softmax_rows"
check "bad: unknown gate" has "$t/bad" "no gate 'nosuch' (gates lists them)"
check "bad: run without a gate" has "$t/bad" "usage: run GATE|all"
check "bad: set without a value" has "$t/bad" "usage: set SYMBOL=VALUE"
check "bad: set of an unknown symbol" has "$t/bad" "has no shape symbol 'Q'"
check "bad: unknown dtype" has "$t/bad" "usage: dtype f32|f16|bf16"
check "bad: negative seed" has "$t/bad" "usage: seed N"
check "bad: unknown distribution" has "$t/bad" "usage: dist normal|"
check "bad: replay of non-numbers" has "$t/bad" "usage: replay N M"
check "bad: unknown output" has "$t/bad" "no output 'nosuch' (outputs: y)"
check "bad: a slice of a matrix" has "$t/bad" "a slice takes 0 leading indices, not 1"
check "bad: save without a file" has "$t/bad" "usage: save FILE.json"
check "bad: explain of an unknown gate" has "$t/bad" "no gate 'nosuch'"
check "bad: show what" has "$t/bad" "usage: show case"
check "bad: next runs the first gate" grep -qE '^  structure +pass ' "$t/bad"
for c in load run next gates explain heatmap replay sweep show set dtype seed dist resources save help quit; do
    check "help lists $c" grep -qE "^  $c( |\$)" "$t/bad"
done
check "help lists the builtins" has "$t/bad" "builtin:softmax_rows.c"

echo "$fails failed"
test $fails -eq 0
