#!/bin/sh
# placement_load.sh: is the placement gate's concurrent pair robust to load? Checks the control
# testdata/bugs/softmax_global_scratch.cu (launches sharing a __device__ scratch buffer) with
# `--gates placement` TRIES times alone, then TRIES times while LOAD processes check other CUDA
# controls in a loop, printing each verdict and the overlap of every pair attempt from the JSON.
# Every line must say `fail`; a `skip` says the pair never ran at once (honest, but worth
# knowing), a `pass` is the bug this script exists for. Usage:
#   placement_load.sh KGATE SRCDIR [TRIES=4] [LOAD=15]
set -u
kgate=$1
src=$2
tries=${3:-4}
load=${4:-15}
t=${TMPDIR:-/tmp}/kgate-placement-$$
mkdir -p "$t"
ctl=$src/testdata/bugs/softmax_global_scratch.cu
bad=0
one() { # $1: a label
    rm -f "$t/r.json"
    "$kgate" check "$ctl" --gates placement --json "$t/r.json" --quiet > /dev/null 2> "$t/err"
    rc=$?
    [ -s "$t/r.json" ] || echo '{}' > "$t/r.json"
    st=$(tr -d '\n' < "$t/r.json" | grep -o '"id": "placement", *"status": "[a-z]*"' | sed 's/.*"status": "//; s/"//')
    ov=$(tr -d '\n ' < "$t/r.json" | grep -o '"overlap_s":[0-9.e+-]*,"shorter_s":[0-9.e+-]*' |
        sed 's/"overlap_s"://; s/,"shorter_s":/\//' | tr '\n' ' ')
    echo "$1: rc=$rc placement=${st:-none} overlap/shorter (s): $ov"
    [ "$st" = fail ] || bad=$((bad + 1))
}
i=1
while [ "$i" -le "$tries" ]; do
    one "alone $i"
    i=$((i + 1))
done
# the load: each loader checks the other CUDA controls in turn until the stop file appears
j=1
while [ "$j" -le "$load" ]; do
    (while [ ! -e "$t/stop" ]; do
        for f in "$src"/testdata/ok/*.cu "$src"/testdata/bugs/sum_atomicadd.cu "$src"/testdata/bugs/relu_fmaxf_cuda.cu; do
            [ -e "$t/stop" ] && break
            "$kgate" check "$f" --quiet > /dev/null 2>&1
        done
    done) &
    j=$((j + 1))
done
sleep 10
i=1
while [ "$i" -le "$tries" ]; do
    one "under a load of $load $i"
    i=$((i + 1))
done
touch "$t/stop"
wait
rm -rf "$t"
echo "$bad of $((2 * tries)) runs did not fail placement"
[ "$bad" -eq 0 ]
