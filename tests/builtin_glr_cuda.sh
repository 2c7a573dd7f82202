#!/bin/sh
# builtin_glr_cuda.sh: the CUDA variants of the GLR built-ins (builtin:NAME.cu, the kernels of
# gdn/ as embedded in the binary) pass every gate on a GPU, at the shape gdn/README.md judges them
# at (B=1 T=130 H=2 K=64 V=64: chunk boundaries at 64 and 128; the nominal B=2 T=1000 H=4
# K=V=128 would make the host-side oracle the whole run), both dtypes. SKIP (77) where the CUDA
# runner cannot run. The host variants are controls of their own (testdata/builtin/glr/).
set -u
t=${TMPDIR:-/tmp}/kgate-glrcuda-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
for m in linear_attn gla ssd gdn kda; do
    for d in fwd bwd; do
        n=${m}_$d
        start=$(date +%s)
        "$KGATE" check "builtin:$n.cu" --shape B=1,T=130,H=2,K=64,V=64 --no-color > "$t/out" 2>&1
        rc=$?
        if [ $rc -eq 3 ]; then
            cat "$t/out"
            echo "SKIP: the CUDA runner cannot run here"
            exit 77
        fi
        grep -E '^(  [a-z-]+ |verdict)' "$t/out"
        if [ $rc -eq 0 ] && ! grep -qE '^  [a-z-]+ +(fail|error) ' "$t/out"; then
            echo "ok: builtin:$n.cu passes ($(($(date +%s) - start)) s)"
        else
            cat "$t/out"
            echo "FAIL: builtin:$n.cu (rc $rc)"
            fails=$((fails + 1))
        fi
    done
done
[ $fails -eq 0 ] || { echo "FAIL: $fails of 10 CUDA built-ins"; exit 1; }
echo "PASS"
