#!/bin/sh
# control.sh FILE: runs `kgate check FILE --json` on a testdata kernel and asserts what the
# file's `// expect:` line says: `pass` (every gate passes or skips, and the report names no
# cause), `fail GATE [CAUSE]` (that gate fails), `error GATE [CAUSE]` (that gate reports an
# error: crash, hang), or `error LINE TEXT` (the file is rejected with exit 2 and a FILE:LINE:
# message containing TEXT). With CAUSE, the report must name exactly one cause, CAUSE, owned by
# GATE (one defect, one report). A `// kgate-args:` line adds options. CUDA kernels skip (exit
# 77) where the CUDA runner cannot run.
# A kernel of testdata/builtin/ is checked as the built-in a user gets (`kgate check
# builtin:NAME.c`, the text embedded in the binary), not as the file.
set -u
file=$1
target=$file
case $file in
*/testdata/builtin/* | testdata/builtin/*) target=builtin:$(basename "$file") ;;
esac
expect=$(sed -n 's|^// expect: *||p' "$file" | head -n 1)
args=$(sed -n 's|^// kgate-args: *||p' "$file" | head -n 1)
[ -n "$expect" ] || { echo "FAIL: $file has no '// expect:' line"; exit 1; }
out=${TMPDIR:-/tmp}/kgate-control-$$.json
err=${TMPDIR:-/tmp}/kgate-control-$$.err
# shellcheck disable=SC2086
"$KGATE" check "$target" --json "$out" --no-color $args 2>"$err"
rc=$?
cat "$err"
case "$expect" in
"error "[0-9]*)
    rest=${expect#error }
    line=${rest%% *}
    text=${rest#* }
    rm -f "$out"
    if [ $rc -ne 2 ]; then echo "FAIL: expected exit 2 for a malformed file, got $rc"; rm -f "$err"; exit 1; fi
    grep -q "$file:$line:" "$err" || { echo "FAIL: no '$file:$line:' in the message"; rm -f "$err"; exit 1; }
    grep -qF "$text" "$err" || { echo "FAIL: the message does not say '$text'"; rm -f "$err"; exit 1; }
    rm -f "$err"
    echo "PASS: rejected at line $line"
    exit 0
    ;;
esac
rm -f "$err"
if [ $rc -eq 3 ] && [ -e /dev/nvidiactl ] && [ "${file%.cu}" != "$file" ] && [ "${KGATE_NO_GPU_OK:-0}" != 1 ]; then
    # a GPU is here: a CUDA kernel that cannot run is kgate's failure, not a skip (seen: workers
    # in a PID namespace without their own /proc, where cuInit fails)
    echo "FAIL: a GPU is here (/dev/nvidiactl) but the CUDA runner cannot run $file (KGATE_NO_GPU_OK=1 to allow)"
    rm -f "$out"
    exit 1
fi
if [ $rc -eq 3 ]; then
    echo "SKIP: the runner for $file cannot run here"
    rm -f "$out"
    exit 77
fi
if [ $rc -eq 2 ] || [ $rc -ge 4 ] || [ ! -s "$out" ]; then
    echo "FAIL: kgate check exited $rc without a report"
    rm -f "$out"
    exit 1
fi
status() { # the status of gate $1 in the report
    tr -d '\n' < "$out" | grep -o "\"id\": \"$1\", *\"status\": \"[a-z]*\"" | sed 's/.*"status": "//; s/"//'
}
# the report's distinct causes: only the top-level "causes" entries have a "gate" key
ncauses() { tr -d '\n' < "$out" | grep -o '"gate": "' | wc -l; }
case "$expect" in
pass)
    bad=$(tr -d '\n' < "$out" | grep -o '"status": "[a-z]*"' | grep -v -e pass -e skip -e refused)
    n=$(ncauses)
    # the device memory the kernel's worker held: a CUDA kernel's buffers are reported, a host
    # kernel's (host memory) never
    dk=$(tr -d '\n' < "$out" | grep -o '"device_peak": {[^}]*}' | grep -o '"kernel": [0-9]*' | sed 's/.*: //')
    rm -f "$out"
    case $file in
    *.cu) [ "${dk:-0}" -gt 0 ] || { echo "FAIL: the report gives no device peak of the kernel's worker"; exit 1; } ;;
    *) [ -z "$dk" ] || { echo "FAIL: a device peak ($dk B) for a host kernel"; exit 1; } ;;
    esac
    [ $rc -eq 0 ] && [ -z "$bad" ] || { echo "FAIL: expected every gate to pass (rc=$rc)"; exit 1; }
    [ "$n" -eq 0 ] || { echo "FAIL: a passing control names $n cause(s)"; exit 1; }
    ;;
"fail "* | "error "*)
    want=${expect%% *}
    rest=${expect#* }
    gate=${rest%% *}
    cause=""
    [ "$gate" = "$rest" ] || cause=${rest#* }
    st=$(status "$gate")
    n=$(ncauses)
    owner=$(tr -d '\n' < "$out" | grep -o '"id": "[a-z0-9-]*", *"gate": "[a-z-]*"' | sed 's/"id": "//; s/", *"gate": "/ /; s/"$//')
    rm -f "$out"
    [ "$st" = "$want" ] || { echo "FAIL: expected gate $gate to say $want, it says '$st'"; exit 1; }
    [ $rc -eq 1 ] || { echo "FAIL: a failing gate must exit 1, got $rc"; exit 1; }
    if [ -n "$cause" ]; then
        [ "$n" -eq 1 ] || { echo "FAIL: expected exactly one cause, the report names $n: $(echo $owner)"; exit 1; }
        [ "$owner" = "$cause $gate" ] || { echo "FAIL: expected cause $cause from $gate, the report says '$owner'"; exit 1; }
    fi
    ;;
*)
    echo "FAIL: unknown expectation '$expect'"
    exit 1
    ;;
esac
echo "PASS: $expect"
