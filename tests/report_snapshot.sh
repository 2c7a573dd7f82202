#!/bin/sh
# report_snapshot.sh KGATE OUTDIR: the JSON report of every host-runner control in testdata/
# (and, where a python3 with torch exists, every KernelBench pair that runs on the CPU), with
# what legitimately differs between two runs taken out: timings and whether the compile came
# from the cache. Two builds are behaviourally the same on the controls when
#   sh tests/report_snapshot.sh OLD/kgate /tmp/a && sh tests/report_snapshot.sh NEW/kgate /tmp/b &&
#   diff -r /tmp/a /tmp/b
# prints nothing. Used when code moves without meaning to change behaviour (not part of make check:
# it compares two builds).
set -u
kgate=$1
outdir=$2
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$outdir"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export KGATE_CACHE_DIR="$cache"
normalise() {
    sed -e 's/"seconds": [-0-9.e+]*/"seconds": T/' \
        -e 's/"\(compile\|inputs\|oracle\|runs\|compare\|total\)": [-0-9.e+]*/"\1": T/' \
        -e 's/ (cached)"/"/'
}
for f in "$top"/testdata/builtin/*.c "$top"/testdata/ok/*.c "$top"/testdata/bugs/*.c "$top"/testdata/malformed/*.c; do
    rel=${f#"$top"/}
    name=$(echo "${rel#testdata/}" | tr / _)
    args=$(sed -n 's|^// kgate-args: *||p' "$f" | head -n 1)
    # a kernel whose planted bug is a race gives different numbers every run: only its statuses compare
    keep=cat
    grep -q '^// expect: fail determinism' "$f" && keep="grep -E \"\\\"(id|status|verdict)\\\"|^exit\""
    # shellcheck disable=SC2086
    (cd "$top" && "$kgate" check "$rel" --json --no-color $args 2>"$outdir/$name.err"; echo "exit $?") |
        normalise | sh -c "$keep" > "$outdir/$name.json"
    sed -e 's/ in [0-9.]* s \[.*$/ in T/' -e 's/ (cached)//' "$outdir/$name.err" | sh -c "$keep" > "$outdir/$name.txt"
    rm -f "$outdir/$name.err"
done
. "$top/tests/torch_python.sh"
torch_python || exit 0
kb="$top/testdata/kernelbench"
for c in "$kb"/candidates/*.py; do
    grep -q '^# runs-on: cpu' "$c" || continue
    prob=$(sed -n 's|^# kgate-problem: *||p' "$c" | head -n 1)
    [ -n "$prob" ] || continue
    name=kb_$(basename "$c" .py)
    (cd "$top" && "$kgate" check --ref "testdata/kernelbench/$prob" "${c#"$top"/}" --python "$py" --json \
        --no-color 2>/dev/null; echo "exit $?") | normalise > "$outdir/$name.json"
done
