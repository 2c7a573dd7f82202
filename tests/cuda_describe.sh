#!/bin/sh
# cuda_describe.sh: a .cu kernel where the CUDA runner may not run (no libcuda, no GPU): the
# inspector still loads it and `show case` prints its case, gates skip saying why, `kgate check`
# still exits 3 (nothing was checked), and `kgate check --compile-only` compiles it with NVRTC
# alone (exit 0, or 2 with the compiler's FILE(LINE) error for a kernel that does not compile).
# The NVRTC part skips where kgate has no CUDA runner or no NVRTC; on a GPU host the kernel
# loads as usual and the same commands must work.
set -u
. "$top_srcdir/tests/repl_lib.sh"
t=${TMPDIR:-/tmp}/kgate-cudadesc-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
cu=$top_srcdir/gdn/gdn_bwd.cu

# ---- the inspector ------------------------------------------------------------------------------
"$KGATE" check "$cu" --gates structure > "$t/check" 2>&1
rc=$?
run=
[ $rc -eq 3 ] && run='run accuracy\n' # where it can run, a run at the nominal shape is long
printf "show case\n${run}quit\n" | "$KGATE" --repl "$cu" > "$t/repl" 2>&1
check "a .cu loads in the inspector" has "$t/repl" "loaded gdn_bwd from $cu (cuda runner"
check "show case prints the nominal case" has "$t/repl" "current case: B=2,T=1000,H=4,K=128,V=128"
check "show case prints the args" grep -qE '^  dS0 +out +f32\[2,4,128,128\]' "$t/repl"
check "no 'no kernel loaded'" sh -c "! grep -q 'no kernel loaded' '$t/repl'"
if [ $rc -eq 3 ]; then
    # no runnable GPU here: the inspector says so, a gate skips with the reason, check exits 3
    check "the inspector says why it cannot run" has "$t/repl" "cannot run here: the CUDA runner: "
    check "run skips with the reason" grep -qE '^  accuracy +skip +cannot run here: the CUDA runner' "$t/repl"
    check "kgate check says nothing was checked" has "$t/check" "nothing was checked"
else
    check "on a GPU host the check runs (rc $rc)" test $rc -eq 0
fi
printf 'load builtin:gdn_bwd.cu\nshow case\nquit\n' | "$KGATE" --repl > "$t/repl2" 2>&1
check "builtin:gdn_bwd.cu loads in the inspector" has "$t/repl2" "loaded gdn_bwd from "
check "and shows its case" has "$t/repl2" "current case: B=2,T=1000,H=4,K=128,V=128"

# ---- --compile-only with NVRTC ------------------------------------------------------------------
"$KGATE" check --compile-only "$cu" > "$t/co" 2>&1
rc=$?
if grep -q -e "built without the CUDA runner" -e "libnvrtc not found" -e "cannot compile CUDA here" "$t/co"; then
    cat "$t/co"
    echo "SKIP (part): no CUDA runner or no NVRTC here: --compile-only cannot compile a .cu"
else
    check "--compile-only compiles a .cu (rc $rc)" test $rc -eq 0
    if grep -q "not loaded" "$t/co"; then
        check "--compile-only says it compiled with NVRTC" grep -q "compiled (nvrtc [0-9.]* sm_90a" "$t/co"
    fi
    sed 's/if (i < N) y\[i\] = /if (i < N) y[i] = not_declared + /' "$top_srcdir/testdata/ok/relu_cuda.cu" > "$t/broken.cu"
    check "the planted error is there" grep -q not_declared "$t/broken.cu"
    "$KGATE" check --compile-only "$t/broken.cu" > "$t/bad" 2>&1
    check "a .cu that does not compile exits 2" test $? -eq 2
    check "naming its file and line" grep -q "broken.cu(15): error: identifier \"not_declared\" is undefined" "$t/bad"
    "$KGATE" check --compile-only builtin:gdn_bwd.cu > "$t/bi" 2>&1
    check "builtin:gdn_bwd.cu compiles (its inlined headers included)" test $? -eq 0
fi
[ $fails -eq 0 ] || { echo "FAIL: $fails checks"; exit 1; }
echo "PASS"
