#!/bin/sh
# repl_limits.sh: sizes the inspector cannot hold are refused before anything is allocated
# (issue 12: `sweep N 1..9223372036854775807*2` overflowed to N=-2^63 and allocated until the
# OOM killer ended kgate). A range stops at its bound; a sweep, a `set` or a `dtype` whose case
# would not fit in memory is refused at once, naming the value, its size, the budget and a value
# that fits; kgate stays small and takes the next command. Each run is under `ulimit -v` (where
# the build allows it) so that a kgate without the limits fails here instead of eating the host.
set -u
. "$top_srcdir/tests/repl_lib.sh"
t=${TMPDIR:-/tmp}/kgate-repl-limits-$$
mkdir -p "$t"
trap '[ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
HOME=$t
export HOME
td=$top_srcdir/testdata

# 4 GiB of address space: plenty for these kernels, far too little for the sizes below. An
# AddressSanitizer build reserves terabytes of shadow memory and cannot start under it.
guard="ulimit -v 4194304;"
(eval "$guard" "$KGATE" --repl < /dev/null > /dev/null 2>&1) || guard=""
[ -n "$guard" ] || echo "note: no ulimit -v guard (this build cannot start under it)"
timed=""
[ -x /usr/bin/time ] && timed="/usr/bin/time -f %M -o"
repl() { # repl OUT ARGS...: the REPL with commands from standard input; max RSS (KiB) in OUT.rss
    out=$1
    shift
    : > "$out.rss"
    sh -c "$guard exec $timed ${timed:+$out.rss} timeout 30 \"\$@\"" sh "$KGATE" --repl "$@" > "$out" 2>&1
    echo $? > "$out.rc"
}
small() { # small OUT: the REPL's max RSS stayed under 400 MiB (or could not be measured)
    rss=$(tail -n 1 "$1.rss" 2> /dev/null)
    case $rss in '' | *[!0-9]*) return 0 ;; esac
    echo "  (max RSS $rss KiB)"
    test "$rss" -lt 409600
}

# ---- the overflowing range of issue 12, and other huge sweeps ---------------------------------
repl "$t/sweep" "$td/ok/relu.c" <<'EOF2'
sweep N 1..9223372036854775807*2
sweep N 9223372036854775800..9223372036854775807+5
sweep N 1..9223372036854775808*2
sweep N 1,99999999999999999999
sweep N 1..4096*8
show case
EOF2
check "sweep: a refused command makes the REPL exit 1" test "$(cat "$t/sweep.rc")" -eq 1
check "sweep: the doubling range is refused as a whole" grep -qE "^sweep refused, nothing was run: [0-9]+ of its 63 values (is|are) too large: N=[0-9]+ \(f32\) needs about [0-9.]* [KMGTPE]iB for one case" "$t/sweep"
check "sweep: the message names the budget" grep -q "over the inspector's budget of [0-9.]* [KMGT]iB (half the memory available to kgate)" "$t/sweep"
check "sweep: the message says which values fit" grep -q "use a smaller value: N <= [0-9]* fits" "$t/sweep"
check "sweep: no value wrapped to a negative N" sh -c "! grep -q -- '-9223372036854775808' '$t/sweep'"
check "sweep: a range at INT64_MAX is refused too" has "$t/sweep" "sweep refused, nothing was run: 2 of its 2 values are too large: N=9223372036854775800 (f32) needs more than 16 EiB"
check "sweep: a bound past INT64_MAX is an error" has "$t/sweep" "sweep: expected A..B*F (F >= 2) or A..B+S with 1 <= A <= B <= 9223372036854775807, got '1..9223372036854775808*2'"
check "sweep: a list value past INT64_MAX is an error" has "$t/sweep" "sweep: '99999999999999999999' is not a non-negative integer"
check "sweep: a sweep that fits still runs" test "$(grep -cE '^ +(1|8|64|512|4096) f32 +pass ' "$t/sweep")" -eq 5
check "sweep: the next command runs" has "$t/sweep" "current case: N=100000 dtype=f32 seed=1 dist=normal"
check "sweep: kgate stayed small" small "$t/sweep"

# ---- set SYM=V, then run and heatmap: the same budget ------------------------------------------
repl "$t/set" "$td/ok/relu.c" <<'EOF2'
set N=4000000000
show case
heatmap y
run structure
set N=9223372036854775807
set N=1000
show case
EOF2
check "set: a refused command makes the REPL exit 1" test "$(cat "$t/set.rc")" -eq 1
check "set: a huge N is refused with its size" has "$t/set" "set N=4000000000 refused: N=4000000000 (f32) needs about"
check "set: and how to go on" grep -q "use a smaller value: N <= [0-9]* fits; N stays 100000" "$t/set"
check "set: the case is unchanged" test "$(grep -c '^current case: N=100000 dtype=f32' "$t/set")" -ge 1
check "set: the shape is not pinned by a refused set" has "$t/set" "gates run at: the nominal shape"
check "set: heatmap runs the unchanged case" has "$t/set" "heatmap of y: one run of N=100000 dtype=f32 seed=1 dist=normal (current case)"
check "set: run runs the unchanged case" grep -qE '^  structure +pass ' "$t/set"
check "set: INT64_MAX is refused" has "$t/set" "set N=9223372036854775807 refused: N=9223372036854775807 (f32) needs more than 16 EiB"
check "set: a small N is taken" has "$t/set" "current case: N=1000 dtype=f32 seed=1 dist=normal"
check "set: kgate stayed small" small "$t/set"

# ---- several dtypes, and values an `int` symbol cannot take --------------------------------
repl "$t/dt" "$td/ok/scale_multi.c" <<'EOF2'
sweep N 1..99999999999*10
sweep N 1..64*4
EOF2
check "dtypes: a refused command makes the REPL exit 1" test "$(cat "$t/dt.rc")" -eq 1
check "dtypes: the sweep is refused at its first value too large" grep -qE "sweep refused, nothing was run: [0-9]+ of its 11 values (is|are) too large: N=[0-9]+ \(f32\) needs about" "$t/dt"
check "dtypes: a sweep that fits runs every dtype" test "$(grep -cE '^ +(1|4|16|64) (f32|bf16|f16) +pass ' "$t/dt")" -eq 12
check "dtypes: kgate stayed small" small "$t/dt"

echo "$fails failed"
test $fails -eq 0
