#!/bin/sh
# hostile.sh: kernels that attack the judge (testdata/hostile/) cannot hang it, kill it, outlive
# it or take the machine's memory: a constructor that never returns, a kernel (and a
# constructor) that kills its parent, a kernel that leaves detached processes behind, one that
# allocates without bound. Each must end in bounded time with a clear report and nothing left
# running.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
h=$top/testdata/hostile
t=${TMPDIR:-/tmp}/kgate-hostile-$$
mkdir -p "$t"
trap 'pkill -KILL -x kgate-stray 2>/dev/null; rm -rf "$t"' EXIT
fails=0
bad() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
# runs kgate check with a hard outer limit; sets rc, secs, and leaves stdout/stderr in $t/out, $t/err
check() {
    start=$(date +%s)
    timeout 120 "$KGATE" check "$@" --no-color > "$t/out" 2> "$t/err"
    rc=$?
    secs=$(($(date +%s) - start))
}

# a constructor that never returns: the load is under --timeout
check "$h/ctor_hangs.c" --timeout 2 --gates structure
[ $rc -eq 2 ] || bad "ctor_hangs: exit $rc, expected 2 (the kernel cannot be loaded)"
[ $secs -lt 30 ] || bad "ctor_hangs: took $secs s with --timeout 2"
grep -q "did not finish loading within 2 s" "$t/err" || bad "ctor_hangs: no 'did not finish loading' in: $(head -c 300 "$t/err")"

# killing the parent from the entry: the judge lives and reports (in a PID namespace the kill
# reaches nobody and the verdict is the kernel's; without one the worker dies: an error)
check "$h/kill_parent.c" --gates structure,accuracy --json "$t/kp.json"
[ $rc -eq 0 ] || [ $rc -eq 1 ] || bad "kill_parent: exit $rc, expected a verdict (0 or 1)"
[ -s "$t/kp.json" ] || bad "kill_parent: no JSON report"

# and from a constructor
check "$h/kill_parent_ctor.c" --gates structure --json "$t/kpc.json"
[ $rc -eq 0 ] || [ $rc -eq 2 ] || bad "kill_parent_ctor: exit $rc, expected 0 or 2 (the worker died while loading)"
[ $rc -eq 0 ] || grep -q "kill_parent_ctor.c" "$t/err" ||
    bad "kill_parent_ctor: the message does not name the file: $(head -c 300 "$t/err")"

# processes left behind (ten children, ten detached grandchildren) die with the check
pkill -KILL -x kgate-stray 2>/dev/null
check "$h/fork_detach.c" --gates structure
[ $rc -eq 0 ] || bad "fork_detach: exit $rc, expected 0 (the answer is right)"
sleep 1
left=$(ps -eo stat=,comm= | awk '$2 == "kgate-stray" && $1 !~ /^Z/' | wc -l) # zombies are dead already
[ "$left" -eq 0 ] || bad "fork_detach: $left processes it forked outlived the check"

# a KernelBench-format candidate whose import detaches a process, with and without the PyTorch fork
# server (where a python3 with torch exists)
. "$top/tests/torch_python.sh"
if torch_python; then
    for z in 1 0; do
        KGATE_ZYGOTE=$([ $z = 1 ] && echo "" || echo 0) check --ref "$top/testdata/kernelbench/problems/relu.py" \
            "$h/fork_detach.py" --python "$py" --gates structure
        [ $rc -eq 0 ] || bad "fork_detach.py (zygote $z): exit $rc, expected 0"
        sleep 1
        left=$(ps -eo stat=,comm= | awk '$2 == "kgate-stray" && $1 !~ /^Z/' | wc -l)
        [ "$left" -eq 0 ] || bad "fork_detach.py (zygote $z): $left processes it forked outlived the check"
        pkill -KILL -x kgate-stray 2>/dev/null
    done
fi

# an allocation storm under --memory is an error that says out of memory, and stays bounded (the
# outer ulimit only keeps a build without the limit from taking this machine down). A sanitizer
# build cannot start under an address-space limit (its shadow memory) and sets none: skipped.
if (ulimit -v 4000000 && "$KGATE" --version) > /dev/null 2>&1; then
    (ulimit -v 4000000 && check "$h/alloc_storm.c" --gates structure --memory 256M --json "$t/as.json" &&
        echo "$rc $secs" > "$t/as.rc")
    read rc secs < "$t/as.rc"
    [ $rc -eq 1 ] || bad "alloc_storm: exit $rc, expected 1"
    grep -q "out of memory" "$t/as.json" 2>/dev/null ||
        bad "alloc_storm: the report does not say out of memory: $(head -c 400 "$t/out")"
    [ $secs -lt 60 ] || bad "alloc_storm: took $secs s"
else
    echo "note: alloc_storm skipped: this kgate cannot start under an address-space limit (a sanitizer build)"
fi

# a kernel that hangs at its first case: the later gates say "not run again" and compute no
# oracle for it either (on a real-size pair that was 398 s of oracle for nothing)
check "$top/testdata/bugs/relu_hangs.c" --timeout 1 --json "$t/hang.json"
[ $rc -eq 1 ] || bad "relu_hangs: exit $rc, expected 1"
[ "$(grep -c 'not run again' "$t/out")" -ge 8 ] || bad "relu_hangs: the later gates do not say 'not run again': $(head -c 600 "$t/out")"
grep -q '"oracle_made": 0,' "$t/hang.json" && grep -q '"oracle_direct": 0' "$t/hang.json" ||
    bad "relu_hangs: the oracle ran for cases the kernel is not run on again: $(grep -o '"memo": {[^}]*}' "$t/hang.json")"

[ $fails -eq 0 ] || exit 1
echo "PASS: 6 hostile kernels: bounded, reported, nothing left behind"
