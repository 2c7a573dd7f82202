#!/bin/sh
# sandbox.sh: a kernel cannot read expected outputs out of the judge or the oracle worker.
# testdata/sandbox/ holds hostile kernels (host C, and KernelBench format through the PyTorch
# runner with and without the zygote) that return NaN whenever they can read another kgate
# process's memory through /proc/PID/mem: under the sandbox they must pass. With
# KGATE_SANDBOX=0 KGATE_CONTAIN=0 (no PID namespace either: a worker's own /proc shows it no
# judge) they must fail wherever this machine lets a process read its parent's memory
# (measured first): that shows the test can fail.
set -u
sb=$top_srcdir/testdata/sandbox
fails=0
check() { # check DESCRIPTION COMMAND...: the command must succeed
    d=$1
    shift
    if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}
verdict() { # verdict 1|0 COMMAND...: the check's verdict word, sandboxed and contained or neither
    v=$1
    shift
    KGATE_SANDBOX=$v KGATE_CONTAIN=$v "$@" 2>&1 | sed -n 's/^verdict: \([a-z]*\).*/\1/p'
}
# whether a process here can read its parent's memory at all (root, or Yama's ptrace_scope 0,
# and no container policy against it): measured with python3 where there is one
readable=0
if command -v python3 > /dev/null; then
    readable=$(python3 -c '
import os
pid = os.getppid()
try:
    with open("/proc/%d/maps" % pid) as m, open("/proc/%d/mem" % pid, "rb") as mem:
        lo = next(int(l.split("-")[0], 16) for l in m if l.split()[1].startswith("r"))
        mem.seek(lo)
        print(1 if len(mem.read(16)) == 16 else 0)
except (OSError, StopIteration, ValueError):
    print(0)' 2>/dev/null || echo 0)
else
    [ "$(id -u)" = 0 ] && readable=1
fi

run_pair() { # run_pair NAME COMMAND...
    name=$1
    shift
    check "$name: sandboxed, the read fails and the kernel is correct" test "$(verdict 1 "$@")" = pass
    got=$(verdict 0 "$@")
    if [ $readable = 1 ]; then
        check "$name: KGATE_SANDBOX=0 KGATE_CONTAIN=0, the read succeeds (the kernel returns NaN)" test "$got" = fail
    else
        echo "note: $name: this machine blocks the read without the sandbox too ($got)"
    fi
}

run_pair "host C kernel" "$KGATE" check "$sb/peek_judge_relu.c" --gates accuracy --no-color
# containment alone: a worker in a PID namespace with its own /proc finds no judge to read
if [ $readable = 1 ] && unshare -p -m -f --mount-proc true 2> /dev/null; then
    check "host C kernel: KGATE_SANDBOX=0, contained, no judge in sight" \
        test "$(KGATE_SANDBOX=0 "$KGATE" check "$sb/peek_judge_relu.c" --gates accuracy --no-color 2>&1 |
            sed -n 's/^verdict: \([a-z]*\).*/\1/p')" = pass
fi
. "$top_srcdir/tests/torch_python.sh"
if torch_python; then
    ref=$top_srcdir/testdata/kernelbench/problems/relu.py
    run_pair "PyTorch candidate (zygote)" "$KGATE" check --ref "$ref" "$sb/peek_judge_relu.py" --python "$py" --gates accuracy --no-color
    KGATE_ZYGOTE=0
    export KGATE_ZYGOTE
    run_pair "PyTorch candidate (no zygote)" "$KGATE" check --ref "$ref" "$sb/peek_judge_relu.py" --python "$py" --gates accuracy --no-color
else
    echo "note: no python3 with torch: the PyTorch runner's sandbox is not tested here"
fi
echo "$fails failed"
test $fails -eq 0
