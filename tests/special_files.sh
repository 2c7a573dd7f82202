#!/bin/sh
# special_files.sh: kgate reads only regular files of at most 16 MiB, as kernel, oracle,
# problem or candidate. A FIFO is refused at once (opening one with no writer used to hang
# kgate), a link to /dev/zero or /dev/urandom is refused (it used to be read without end), a
# directory is refused by name, and an oversized file is refused with the limit in the message.
# Every command runs under a time limit, so a regression fails instead of hanging make check.
set -u
t=${TMPDIR:-/tmp}/kgate-special-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
td=$top_srcdir/testdata
limit=30
command -v timeout >/dev/null 2>&1 || { echo "SKIP: no timeout(1)"; exit 77; }

# refused NAME WHAT ARGS...: `kgate check ARGS` exits 2 within the limit, saying WHAT
refused() {
    name=$1
    what=$2
    shift 2
    timeout "$limit" "$KGATE" check "$@" --gates structure > "$t/out" 2> "$t/err" < /dev/null
    rc=$?
    if [ $rc -eq 124 ]; then
        echo "FAIL: $name: kgate still running after ${limit}s"
        fails=$((fails + 1))
    elif [ $rc -ne 2 ]; then
        echo "FAIL: $name: exit $rc, expected 2"
        cat "$t/err"
        fails=$((fails + 1))
    elif ! grep -qF "$what" "$t/err"; then
        echo "FAIL: $name: the message does not say '$what':"
        cat "$t/err"
        fails=$((fails + 1))
    else
        echo "ok: $name: $(head -n 1 "$t/err")"
    fi
}

mkfifo "$t/fifo.c"
refused "a FIFO as the kernel" "not a regular file (a FIFO)" "$t/fifo.c"
ln -s /dev/zero "$t/zero.c"
refused "a link to /dev/zero as the kernel" "not a regular file (a character device)" "$t/zero.c"
ln -s /dev/urandom "$t/urandom.cu"
refused "a link to /dev/urandom as the kernel" "not a regular file (a character device)" "$t/urandom.cu"
mkdir "$t/dir.c"
refused "a directory as the kernel" "not a regular file (a directory)" "$t/dir.c"

# a valid contract followed by more than 16 MiB of comment
cp "$td/ok/relu.c" "$t/big.c"
head -c 17000000 /dev/zero | tr '\0' ' ' | sed 's|^|// |' >> "$t/big.c"
refused "a kernel file over 16 MiB" "more than 16 MiB" "$t/big.c"

# the oracle's file is read by the oracle worker: a FIFO there is refused too
mkfifo "$t/ref.c"
sed 's|^op: *relu|oracle:  ref in ref.c|' "$td/ok/relu.c" > "$t/oracle_fifo.c"
if grep -q '^oracle:' "$t/oracle_fifo.c"; then
    refused "a FIFO as the oracle file" "not a regular file (a FIFO)" "$t/oracle_fifo.c"
else
    echo "FAIL: testdata/ok/relu.c has no 'op: relu' line to turn into an oracle"
    fails=$((fails + 1))
fi

# KernelBench pairs: the problem and the candidate are read before any Python starts
kb=$td/kernelbench
prob=$(ls "$kb"/problems/*.py 2>/dev/null | head -n 1)
cand=$(ls "$kb"/candidates/*.py 2>/dev/null | head -n 1)
if [ -n "$prob" ] && [ -n "$cand" ]; then
    mkfifo "$t/problem.py" "$t/candidate.py"
    refused "a FIFO as the problem" "not a regular file (a FIFO)" --ref "$t/problem.py" "$cand"
    refused "a FIFO as the candidate" "not a regular file (a FIFO)" --ref "$prob" "$t/candidate.py"
    ln -s /dev/zero "$t/zero.py"
    refused "a link to /dev/zero as the candidate" "not a regular file" --ref "$prob" "$t/zero.py"
else
    echo "FAIL: no KernelBench problem and candidate under $kb"
    fails=$((fails + 1))
fi

[ $fails -eq 0 ] || exit 1
echo "PASS: special files are refused"
