#!/bin/sh
# memo.sh: a check pays for each case once. The nominal cases that structure, accuracy,
# determinism, freshness, aliasing and bounds share are drawn and evaluated by the oracle once
# per check (the JSON's "memo": nothing "made again"); a memo held to one byte
# (KGATE_MEMO_BYTES=1) recomputes them and gives the same verdicts gate by gate.
set -u
t=${TMPDIR:-/tmp}/kgate-memo-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
check() { # check DESCRIPTION COMMAND...: the command must succeed
    d=$1
    shift
    if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}
td=$top_srcdir/testdata
py=""
for p in "${KGATE_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c "import json" >/dev/null 2>&1 && { py=$p; break; }
done
[ -n "$py" ] || { echo "SKIP: no python3 to read the JSON report"; exit 77; }
memo() { # memo JSON KEY: the count
    "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["memo"][sys.argv[2]])' "$1" "$2"
}
verdicts() { # verdicts JSON: the overall verdict and each gate's status, one line
    "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(d["verdict"], " ".join("%s=%s" % (g["id"], g["status"]) for g in d["gates"]))' "$1"
}

# a host kernel: every gate, default memo
"$KGATE" check "$td/ok/layernorm.c" --json "$t/ln.json" > "$t/ln.out" 2>&1
check "layernorm.c passes" test $? -eq 0
check "no case's inputs drawn twice" test "$(memo "$t/ln.json" inputs_again)" -eq 0
check "no case's oracle evaluated twice" test "$(memo "$t/ln.json" oracle_again)" -eq 0
check "the nominal oracle values are shared by gates" test "$(memo "$t/ln.json" oracle_reused)" -ge 2
check "inputs are shared by gates" test "$(memo "$t/ln.json" inputs_reused)" -gt "$(memo "$t/ln.json" inputs_made)"

# the memo held to one byte: cases are made again, the verdicts do not change
KGATE_MEMO_BYTES=1 "$KGATE" check "$td/ok/layernorm.c" --json "$t/ln1.json" > /dev/null 2>&1
check "a one-byte memo recomputes shared cases" test "$(memo "$t/ln1.json" oracle_again)" -gt 0
check "a one-byte memo: same verdicts" test "$(verdicts "$t/ln1.json")" = "$(verdicts "$t/ln.json")"
KGATE_MEMO_BYTES=1 "$KGATE" check "$td/bugs/relu_fmaxf.c" --json "$t/b1.json" > /dev/null 2>&1
"$KGATE" check "$td/bugs/relu_fmaxf.c" --json "$t/b.json" > /dev/null 2>&1
check "a failing control, one-byte memo: same verdicts" test "$(verdicts "$t/b1.json")" = "$(verdicts "$t/b.json")"

# KGATE_DEBUG_MEMO=1: each event on stderr, each gate's time split
KGATE_DEBUG_MEMO=1 "$KGATE" check "$td/ok/layernorm.c" --gates structure,accuracy > /dev/null 2> "$t/dbg"
check "debug: the first draw is made" grep -q "^kgate memo: structure: inputs made " "$t/dbg"
check "debug: accuracy reuses structure's nominal inputs" grep -q "^kgate memo: accuracy: inputs reused " "$t/dbg"
check "debug: a gate's time split" grep -q "^kgate memo: accuracy: [0-9.]* s, 3 cases: inputs" "$t/dbg"

# a KernelBench pair through the torch backend (get_inputs and the Model in the oracle worker)
tpy=$(. "$top_srcdir/tests/torch_python.sh" && torch_python && printf %s "$py")
if [ -n "$tpy" ]; then
    kb=$td/kernelbench
    "$KGATE" check --ref "$kb/problems/layernorm.py" "$kb/candidates/ok_torch_layernorm.py" --python "$tpy" \
        --json "$t/kb.json" > /dev/null 2>&1
    check "the torch pair passes" test $? -eq 0
    check "torch: no case's inputs drawn twice" test "$(memo "$t/kb.json" inputs_again)" -eq 0
    check "torch: no case's oracle evaluated twice" test "$(memo "$t/kb.json" oracle_again)" -eq 0
    # the worker keeps its staged inputs on its device and runs again from them when the judge's tag
    # says the bytes are the same (at real sizes a gigabyte's copy per run); a candidate that
    # overwrites those copies (as a kernel writing outside its buffers would) must not change its
    # verdict: the worker's checksum sees it and stages from shared memory instead
    check "torch: runs on the same inputs start from the worker's kept copy" test "$(memo "$t/kb.json" inputs_kept)" -gt 0
    "$KGATE" check --ref "$kb/problems/relu.py" "$kb/broken/clobber_kept_relu.py" --python "$tpy" \
        --json "$t/clobber.json" > "$t/clobber.out" 2>&1
    check "torch: a candidate that overwrites the kept copies still passes" test $? -eq 0
    check "torch: no run used an overwritten copy" test "$(memo "$t/clobber.json" inputs_kept)" -eq 0
    # the judge does not write a run's inputs into shared memory again where the segment still holds
    # them as the last run left them (the worker said it wrote none back); a candidate that changes
    # its input on every call (and overwrites the kept copies, so that every run is staged from
    # shared memory) must get pristine inputs on every run: only aliasing fails
    check "torch: runs find their inputs still in the segment" test "$(memo "$t/kb.json" inputs_in_place)" -gt 0
    "$KGATE" check --ref "$kb/problems/relu.py" "$kb/broken/clobber_mutate_relu.py" --python "$tpy" \
        --json "$t/mutate.json" > "$t/mutate.out" 2>&1
    check "torch: an input changed by the call is written again" test "$(memo "$t/mutate.json" inputs_in_place)" -eq 0
    # (the GPU-only gates skip on the CPU and run on a GPU: only the failures are compared)
    check "torch: a mutating candidate fails aliasing alone" test \
        "$(verdicts "$t/mutate.json" | tr ' ' '\n' | grep -E '^(fail|pass)$|=fail$' | tr '\n' ' ')" = "fail aliasing=fail "
else
    echo "note: no python3 with torch: the KernelBench pair is not checked"
fi
# the worker maps a segment new to it with the pages the request uses already in its page table
# (the judge faulted them in; one fault per page on first access cost 0.3 s a GB), and not the
# rest of a larger reused segment: measured as the mapping's resident size in /proc/self/smaps
# (the check needs no torch: the worker's module imports without it)
populated=$("$py" - "$top_srcdir/src/runners/torch" << 'EOF'
import ctypes, mmap, os, sys
sys.path.insert(0, sys.argv[1])
import torch_runner
mb = 1 << 20
fd = os.memfd_create("kgate-memo-test")
os.ftruncate(fd, 64 * mb)
with mmap.mmap(fd, 64 * mb) as judge:  # the judge's side: every page exists
    judge[:] = b"\1" * (64 * mb)
m = torch_runner.SharedMemory().view(fd, 24 * mb)
start = "%x" % ctypes.addressof(ctypes.c_char.from_buffer(m))
lines = open("/proc/self/smaps").read().split("\n")
at = [i for i, line in enumerate(lines) if line.split("-")[0] == start][0]
print([int(line.split()[1]) for line in lines[at:] if line.startswith("Rss:")][0] // 1024)
EOF
)
case $(uname -r) in
[0-4].* | 5.[0-9].* | 5.1[0-3].*) echo "note: kernel $(uname -r) lacks MADV_POPULATE_WRITE: ${populated} MiB mapped" ;;
*) check "the worker maps the 24 MiB a request uses of a 64 MiB segment at once (got ${populated:-?})" \
    test "${populated:-0}" -eq 24 ;;
esac

[ $fails -eq 0 ] || exit 1
