#!/bin/sh
# run.sh: A/B of two builds of libgdn and its GPU programs on an sm_90 GPU host (the H200): are the
# new kernels' outputs bit for bit the base's, do both pass the GPU test, and how do their times
# compare. BASE_DIR and NEW_DIR each hold a bin.tar.gz (and README) written by gdn/ab/pack.sh; only
# a GPU host can run it (without a GPU it says so and exits 77, nothing checked).
#
#   sh gdn/ab/run.sh BASE_DIR NEW_DIR OUT      (OUT: an output folder; AB_BUDGET: seconds, 390)
#
# Steps, all logs under OUT: (1) at once: test_gdn_tc base and new, tc_hash base and new (every
# member's chunk-parallel fwd/bwd, bf16 and fp32, hashed, each case twice; GLA and KDA also at
# bench size); (2) the hashes compared line by line (must be identical) and the test logs diffed
# (the errors printed must be identical too); (3) timings, the GPU to themselves, one at a time:
# tc_hash time (every member fwd, f+b, bwd, bench size, no cuBLAS) base, new, gla_passes (GLA's
# backward pass by pass, then GDN's) base, new, bench_gdn base, new, tc_hash time again if time
# is left, and (4) where ncu is there, the new build's GDN kernels under it (ncu_table.awk).
# A program a set lacks is reported absent. Ends with a summary (OUT/summary.txt); a step that
# would run past the budget is skipped and says so. bench_gdn needs libcublas.so.13: looked for.
# Exit 0 when both tests pass and every hash is identical, 1 otherwise, 2 on usage or a bad
# tarball, 77 when there is no GPU (nothing run).
set -u
[ $# -eq 3 ] || { echo "usage: sh gdn/ab/run.sh BASE_DIR NEW_DIR OUT   (each DIR: a bin.tar.gz from gdn/ab/pack.sh)"; exit 2; }
OUT=$3
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
t0=$(date +%s)
BUDGET=${AB_BUDGET:-390}
left() { echo $((BUDGET - ($(date +%s) - t0))); }
note() { echo "[$(($(date +%s) - t0)) s] $*"; }

# timed LIMIT LOG CMD...: CMD with a time limit of min(LIMIT, what is left - 5 s); rc in LOG.rc
timed() {
    lim=$1 log=$2
    shift 2
    if [ ! -x "$1" ]; then
        echo "absent: ${1#"$OUT"/bin/} is not in this set" > "$log"
        echo absent > "$log.rc"
        return
    fi
    l=$(($(left) - 5))
    [ "$l" -lt "$lim" ] && lim=$l
    if [ "$lim" -lt 5 ]; then
        echo "skipped: out of time" > "$log"
        echo 124 > "$log.rc"
        return
    fi
    timeout -k 5 "$lim" "$@" > "$log" 2>&1
    echo $? > "$log.rc"
}
rc_of() { cat "$1.rc" 2> /dev/null || echo "?"; }

# ---- unpack ------------------------------------------------------------------------------------
# unpack SET DIR: DIR/bin.tar.gz into OUT/bin/SET
unpack() {
    [ -f "$2/bin.tar.gz" ] || { echo "run.sh: no $2/bin.tar.gz (write it with gdn/ab/pack.sh)"; exit 2; }
    rm -rf "${OUT:?}/bin/$1"
    if ! mkdir -p "$OUT/bin/$1" || ! tar -xzf "$2/bin.tar.gz" -C "$OUT/bin/$1"; then
        echo "run.sh: cannot unpack $2/bin.tar.gz"
        exit 2
    fi
    [ -f "$OUT/bin/$1/gdn/libgdn.so" ] || { echo "run.sh: $2/bin.tar.gz has no gdn/libgdn.so"; exit 2; }
}
# revision DIR: the revision pack.sh wrote in DIR/README, else DIR
revision() {
    r=$(sed -n 's/^rev: //p' "$1/README" 2> /dev/null | head -n 1)
    echo "${r:-$1}"
}
unpack base "$1"
unpack new "$2"
rev_base=$(revision "$1") rev_new=$(revision "$2")
B=$OUT/bin/base N=$OUT/bin/new
note "base: $rev_base"
note "new:  $rev_new"
dev=$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2> /dev/null | head -n 1)
if [ -z "$dev" ]; then
    echo "run.sh: no NVIDIA GPU here (nvidia-smi lists none): nothing run. These programs need an sm_90 GPU" \
        "(H100/H200); run this on the GPU host."
    exit 77
fi
# bench_gdn's cuBLAS: the loader's paths, then the usual CUDA and pip places
if ldd "$B/gdn/bench_gdn" 2> /dev/null | grep -q "not found"; then
    for d in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
        $(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + "/lib")' 2> /dev/null); do
        [ -e "$d/libcublas.so.13" ] && {
            LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
            export LD_LIBRARY_PATH
            break
        }
    done
fi
bench_ok=1
: > "$OUT/bench_ldd.txt"
if [ ! -x "$B/gdn/bench_gdn" ] || [ ! -x "$N/gdn/bench_gdn" ]; then
    echo "bench_gdn absent from a set" > "$OUT/bench_ldd.txt"
    bench_ok=0
fi
ldd "$B/gdn/bench_gdn" 2> /dev/null | grep "not found" >> "$OUT/bench_ldd.txt" && bench_ok=0
note "device: $dev; bench_gdn runnable: $([ $bench_ok = 1 ] && echo yes || echo "no ($(tr -s ' \t\n' ' ' < "$OUT/bench_ldd.txt" | sed 's/ $//'))")"

# ---- (1) correctness, all four at once ---------------------------------------------------------
note "test_gdn_tc and tc_hash, base and new, at once"
timed 180 "$OUT/test_base.log" "$B/tests/gpu/test_gdn_tc" &
timed 180 "$OUT/test_new.log" "$N/tests/gpu/test_gdn_tc" &
timed 180 "$OUT/hash_base.log" "$B/gdn/tc_hash" &
timed 180 "$OUT/hash_new.log" "$N/gdn/tc_hash" &
wait
note "done"
if [ "$(rc_of "$OUT/test_new.log")" = 77 ] || [ "$(rc_of "$OUT/hash_new.log")" = 77 ]; then
    echo "run.sh: the programs found no sm_90 GPU (exit 77; device: $dev): nothing checked"
    tail -n 3 "$OUT/test_new.log" "$OUT/hash_new.log"
    exit 77
fi

# ---- (2) compare ---------------------------------------------------------------------------------
grep '| fwd ' "$OUT/hash_base.log" > "$OUT/hash_base.lines"
grep '| fwd ' "$OUT/hash_new.log" > "$OUT/hash_new.lines"
nh_b=$(wc -l < "$OUT/hash_base.lines") nh_n=$(wc -l < "$OUT/hash_new.lines")
diff "$OUT/hash_base.lines" "$OUT/hash_new.lines" > "$OUT/hash.diff"
nh_diff=$(grep -c '^>' "$OUT/hash.diff")
nh_same=$((nh_n - nh_diff))
det_b=$(grep -c 'two runs equal' "$OUT/hash_base.log") det_n=$(grep -c 'two runs equal' "$OUT/hash_new.log")
# the test logs: the same lines in the same order (errors to 3 digits; no times in them)
diff "$OUT/test_base.log" "$OUT/test_new.log" > "$OUT/test.diff"
test_diff=$(grep -c '^[<>]' "$OUT/test.diff")

# ---- (3) timings, one at a time -----------------------------------------------------------------
note "timings"
timed 60 "$OUT/time_base_1.log" "$B/gdn/tc_hash" time
timed 60 "$OUT/time_new_1.log" "$N/gdn/tc_hash" time
timed 30 "$OUT/passes_base.log" "$B/gdn/gla_passes"
timed 30 "$OUT/passes_new.log" "$N/gdn/gla_passes"
timed 30 "$OUT/gdn_passes_base.log" "$B/gdn/gla_passes" 8 4096 16 128 128 gdn
timed 30 "$OUT/gdn_passes_new.log" "$N/gdn/gla_passes" 8 4096 16 128 128 gdn
if [ $bench_ok = 1 ]; then
    timed 75 "$OUT/bench_base.log" "$B/gdn/bench_gdn"
    timed 75 "$OUT/bench_new.log" "$N/gdn/bench_gdn"
fi
if [ "$(left)" -gt 45 ]; then
    timed 30 "$OUT/time_base_2.log" "$B/gdn/tc_hash" time
    timed 30 "$OUT/time_new_2.log" "$N/gdn/tc_hash" time
fi
# (4) ncu of the new build's GDN kernels, one forward and one backward (gla_passes' first, warm-up
# pass: 3 forward and 6 backward kernels), where ncu is there and 90 s are left
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2> /dev/null)
if [ -n "$ncu" ] && [ "$(left)" -gt 90 ]; then
    timed 80 "$OUT/ncu_new.csv" "$ncu" --csv --print-units base --clock-control none -k regex:tc_ -c 9 \
        --section SpeedOfLight --section Occupancy --section LaunchStats "$N/gdn/gla_passes" 8 4096 16 128 128 gdn
fi
note "done"

# ---- summary -------------------------------------------------------------------------------------
S=$OUT/summary.txt
{
    echo "== A/B: base = $rev_base"
    echo "        new = $rev_new"
    echo "   device: $dev"
    for s in base new; do
        printf 'test_gdn_tc %-4s: rc %s; %s\n' $s "$(rc_of "$OUT/test_$s.log")" \
            "$(grep -E '^(PASS|FAIL|SKIP|absent):' "$OUT/test_$s.log" | tail -n 1)"
    done
    echo "test_gdn_tc logs base vs new: $test_diff differing lines (expect 0: same errors to the digit)"
    echo "tc_hash: base rc $(rc_of "$OUT/hash_base.log"), $nh_b cases; new rc $(rc_of "$OUT/hash_new.log"), $nh_n cases;" \
        "identical hash lines $nh_same of $nh_n, differing $nh_diff; two runs equal: base $det_b, new $det_n"
    [ "$nh_diff" -gt 0 ] && sed -n 's/^/  /p' "$OUT/hash.diff" | head -n 12
    echo
    echo "chunk-parallel, bf16 B8 T4096 H16 K=V=128, ms (tc_hash time: median of 15; run 1 [run 2])"
    printf '%-6s | %8s %8s %7s | %8s %8s %7s | %8s %8s %7s\n' member "fwd base" new ratio "f+b base" new ratio \
        "bwd base" new ratio
    for m in linear ssd gla gdn kda; do
        for r in 1 2; do
            [ -s "$OUT/time_base_$r.log" ] || continue
            b=$(grep "^$m " "$OUT/time_base_$r.log" | sed 's/|//g') n=$(grep "^$m " "$OUT/time_new_$r.log" | sed 's/|//g')
            if [ -z "$b" ] || [ -z "$n" ]; then continue; fi
            echo "$b $n" | awk -v r=$r '
                function rt(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%6.3fx", b / a) : "      -" }
                { printf "%-6s | %8s %8s %7s | %8s %8s %7s | %8s %8s %7s%s\n", $1, $2, $6, rt($2, $6), $3, $7,
                  rt($3, $7), $4, $8, rt($4, $8), r == 2 ? "   (run 2)" : "" }'
        done
    done
    echo "(ratio: new / base, < 1 is faster)"
    echo
    for m in gla gdn; do
        p=$OUT/$([ $m = gdn ] && echo gdn_)passes
        echo "$(echo $m | tr a-z A-Z) backward pass by pass (gla_passes, ms; rc base $(rc_of "${p}_base.log"), new $(rc_of "${p}_new.log")): base | new"
        paste "${p}_base.log" "${p}_new.log" | awk -F'\t' 'NR > 1 { split($2, n, " "); printf "  %s | %s\n", $1, n[length(n)] }'
    done
    if [ -s "$OUT/ncu_new.csv" ]; then
        echo "ncu, new build, GDN bf16 B8 T4096 H16 K=V=128, one forward then one backward (rc $(rc_of "$OUT/ncu_new.csv")):"
        awk -f "$(dirname "$0")/ncu_table.awk" "$OUT/ncu_new.csv"
    fi
    if [ $bench_ok = 1 ]; then
        echo
        echo "bench_gdn (rc base $(rc_of "$OUT/bench_base.log"), new $(rc_of "$OUT/bench_new.log")): the chunk-parallel lines, base then new"
        for s in base new; do
            awk -v s=$s '/^chunk-parallel forward/ { t = /backward/ ? "f+b" : "fwd" }
                t && /^(linear|ssd|gla|gdn|kda) / { print "  " s " " t ": " $0 }' "$OUT/bench_$s.log"
        done
    else
        echo "bench_gdn not run: $(tr -s ' \t\n' ' ' < "$OUT/bench_ldd.txt" | sed 's/ $//')"
    fi
    echo
    echo "total $(($(date +%s) - t0)) s; logs in $OUT"
} > "$S"
cat "$S"
ok=1
[ "$(rc_of "$OUT/test_base.log")" = 0 ] && [ "$(rc_of "$OUT/test_new.log")" = 0 ] || ok=0
[ "$nh_n" -gt 0 ] && [ "$nh_diff" = 0 ] && [ "$nh_b" = "$nh_n" ] || ok=0
[ "$(rc_of "$OUT/hash_new.log")" = 0 ] || ok=0
if [ $ok = 1 ]; then
    echo "run.sh: OK (tests pass, outputs bit for bit equal)"
    exit 0
fi
echo "run.sh: NOT OK (see above)"
exit 1
