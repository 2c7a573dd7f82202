#!/bin/sh
# pack.sh: builds, from one git revision of this repo, the GPU programs that gdn/ab/run.sh compares
# (gdn/libgdn.so, tests/gpu/test_gdn_tc, gdn/bench_gdn, gdn/tc_hash, gdn/gla_passes: those that the
# revision has) and packs them as OUTDIR/bin.tar.gz, with OUTDIR/README naming the revision, the
# host and the flags. Needs nvcc (sm_90a), gcc and git, not a GPU: pack here, run on the GPU host.
#
#   sh gdn/ab/pack.sh REV OUTDIR      (e.g. sh gdn/ab/pack.sh main .h200/ab/base)
#
# The revision is checked out in a temporary `git worktree add --detach` (removed at the end), so
# the working tree is untouched. Flags as gdn/local.mk: nvcc -std=c++17 -O3 for sm_90a only,
# libgdn.so with the CUDA runtime static, the programs with nvcc's default (static) runtime and
# $ORIGIN rpaths, the oracle with $CC $CFLAGS; gla_passes with its header's nvcc line. When REV has
# no gdn/tc_hash.cu, this checkout's is compiled against REV's headers and linked against REV's
# libgdn.so (the library's C API is what it calls). NVCC, CC, CFLAGS and AB_JOBS override.
# Exit 0 when the tarball is written, 1 when a build failed (its log is printed), 2 on usage.
# word splitting of $FLAGS, $L, $CFLAGS and the lists is meant; $ORIGIN is for the linker
# shellcheck disable=SC2086,SC2016
set -u
[ $# -eq 2 ] || { echo "usage: sh gdn/ab/pack.sh REV OUTDIR" >&2; exit 2; }
REV=$1
OUTDIR=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CC=${CC:-gcc}
CFLAGS=${CFLAGS:--g -O2}
JOBS=${AB_JOBS:-$(nproc 2>/dev/null || echo 2)}
ARCH="-gencode=arch=compute_90a,code=sm_90a"
[ -x "$NVCC" ] || { echo "pack.sh: no nvcc (set NVCC)" >&2; exit 2; }
sha=$(git -C "$top" rev-parse --verify -q "$REV^{commit}") || { echo "pack.sh: no revision '$REV'" >&2; exit 2; }
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd) || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/abpack.XXXXXX") || exit 2
wt=$tmp/src st=$tmp/stage ob=$tmp/obj lg=$tmp/log
cleanup() {
    git -C "$top" worktree remove --force "$wt" 2> /dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
git -C "$top" worktree add --detach -q "$wt" "$sha" || exit 2
mkdir -p "$st/gdn" "$st/tests/gpu" "$ob" "$lg"
G=$wt/gdn
FLAGS="-std=c++17 -O3 $ARCH -Xcompiler -fPIC -I$G"
tc_from="$REV"
if [ ! -f "$G/tc_hash.cu" ] && [ -f "$top/gdn/tc_hash.cu" ]; then
    # in REV's gdn/, so that its #include "libgdn.h" finds REV's header, not this checkout's
    cp "$top/gdn/tc_hash.cu" "$G/tc_hash.cu"
    tc_from="this checkout's gdn/tc_hash.cu ($(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- gdn/tc_hash.cu || echo ", modified"))"
fi

# ---- jobs: at most $JOBS at once; a failure prints its log and ends the run -------------------
pids="" fail=0
run_job() { # NAME CMD...: in the background, output to $lg/NAME.log
    [ $fail = 0 ] || return 0
    name=$1
    shift
    ("$@" > "$lg/$name.log" 2>&1 || { echo "pack.sh: $name failed:"; tail -n 30 "$lg/$name.log"; exit 1; }) &
    pids="$pids $!"
    set -- $pids
    if [ $# -ge "$JOBS" ]; then
        wait "$1" || fail=1
        shift
        pids="$*"
    fi
}
wait_all() {
    for p in $pids; do wait "$p" || fail=1; done
    pids=""
    [ $fail = 0 ] || exit 1
}

# the library's objects: REV's GDN_LIB_OBJS from its local.mk (the members it has)
objs=$(sed -n '/^GDN_LIB_OBJS *=/,/[^\\]$/p' "$G/local.mk" | tr -s '[:blank:]' '[\n*]' | sed -n 's|^gdn/\(.*\)\.o$|\1|p')
[ -n "$objs" ] || { echo "pack.sh: $REV's gdn/local.mk names no GDN_LIB_OBJS" >&2; exit 1; }
lib_o=""
for f in $objs; do
    run_job "$f" "$NVCC" $FLAGS -c -o "$ob/$f.o" "$G/$f.cu"
    lib_o="$lib_o $ob/$f.o"
done
progs=""
[ -f "$wt/tests/gpu/test_gdn_tc.cu" ] && progs="$progs test_gdn_tc" &&
    run_job test_gdn_tc.o "$NVCC" $FLAGS -c -o "$ob/test_gdn_tc.o" "$wt/tests/gpu/test_gdn_tc.cu"
for p in bench_gdn tc_hash; do
    [ -f "$G/$p.cu" ] && progs="$progs $p" && run_job "$p.o" "$NVCC" $FLAGS -c -o "$ob/$p.o" "$G/$p.cu"
done
run_job gpu_oracle.o $CC -std=gnu11 $CFLAGS -I"$G" -c -o "$ob/gpu_oracle.o" "$G/oracle.c"
# gla_passes: its header's line (it includes libgdn_tc.cu, so no libgdn.so)
[ -f "$G/gla_passes.cu" ] && progs="$progs gla_passes" &&
    run_job gla_passes "$NVCC" -std=c++17 -O3 $ARCH -I"$G" "$G/gla_passes.cu" -o "$st/gdn/gla_passes"
wait_all

# ---- links, as gdn/local.mk ---------------------------------------------------------------------
"$NVCC" -shared -cudart static $ARCH -o "$st/gdn/libgdn.so" $lib_o > "$lg/libgdn.so.log" 2>&1 ||
    { echo "pack.sh: libgdn.so link failed:"; cat "$lg/libgdn.so.log"; exit 1; }
L="-L$st/gdn -lgdn"
for p in $progs; do
    case $p in
    test_gdn_tc) run_job "$p" "$NVCC" -o "$st/tests/gpu/test_gdn_tc" "$ob/test_gdn_tc.o" "$ob/gpu_oracle.o" $L \
        -Xlinker -rpath='$ORIGIN/../../gdn' -lm ;;
    bench_gdn) run_job "$p" "$NVCC" -o "$st/gdn/bench_gdn" "$ob/bench_gdn.o" "$ob/gpu_oracle.o" $L -lcublas \
        -Xlinker -rpath='$ORIGIN' -Xlinker -rpath="$(dirname "$NVCC")/../lib64" -lm ;;
    tc_hash) run_job "$p" "$NVCC" -o "$st/gdn/tc_hash" "$ob/tc_hash.o" "$ob/gpu_oracle.o" $L \
        -Xlinker -rpath='$ORIGIN' -lm ;;
    esac
done
wait_all

# ---- pack ------------------------------------------------------------------------------------------
tar -czf "$OUTDIR/bin.tar.gz" -C "$st" gdn tests || exit 1
{
    echo "rev: $REV ($(git -C "$top" rev-parse --short "$sha"): $(git -C "$top" log -1 --format=%s "$sha"))"
    echo "bin.tar.gz: $(cd "$st" && find gdn tests -type f | sort | tr '\n' ' ' | sed 's/ $//')"
    echo "  sha256 $(sha256sum "$OUTDIR/bin.tar.gz" | cut -d' ' -f1)"
    echo "  gdn/tc_hash from $tc_from"
    echo "built $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -srm), $(ldd --version 2> /dev/null | head -n 1)," \
        "nvcc $("$NVCC" --version | sed -n 's/.*release //p')"
    echo "nvcc objects: $FLAGS" | sed "s|-I$G|-Igdn|"
    echo "libgdn.so: nvcc -shared -cudart static $ARCH ($(echo $objs | tr ' ' ','))"
    echo "programs: nvcc's default static CUDA runtime, -lgdn with \$ORIGIN rpaths (bench_gdn: -lcublas," \
        "needs libcublas.so.13 at run time); oracle.c: $CC -std=gnu11 $CFLAGS"
    echo "gla_passes: nvcc -std=c++17 -O3 $ARCH -Igdn gdn/gla_passes.cu"
} > "$OUTDIR/README"
cat "$OUTDIR/README"
