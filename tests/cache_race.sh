#!/bin/sh
# cache_race.sh: checks that start at once and compile the same kernel into one empty cache all
# load it (the host runner's .so, the kernel text); each worker runs as pid 1 of its own PID
# namespace, and temporaries named by pid alone were one file written by several compilers at
# once. Eight checks of one kernel, the structure gate only, three rounds of a fresh cache.
set -u
t=${TMPDIR:-/tmp}/kgate-cache-race-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
for round in 1 2 3; do
    export KGATE_CACHE_DIR="$t/cache$round"
    pids=""
    for i in 1 2 3 4 5 6 7 8; do
        "$KGATE" check "$top_srcdir/testdata/ok/matmul.c" --gates structure --no-color > "$t/out$round.$i" 2>&1 &
        pids="$pids $!"
    done
    n=0
    for p in $pids; do
        n=$((n + 1))
        wait "$p" || { echo "FAIL: round $round, check $n (exit $?):"; cat "$t/out$round.$n"; fails=$((fails + 1)); }
    done
    left=$(find "$t/cache$round" -name '*.tmp' | wc -l)
    [ "$left" -eq 0 ] || { echo "FAIL: round $round left $left temporaries in the cache"; fails=$((fails + 1)); }
done
echo "$fails failed"
test $fails -eq 0
