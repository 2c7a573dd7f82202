#!/bin/sh
# corpus.sh SRCDIR OUTDIR: the fuzzer's seed corpus. Every kernel file of the source tree with a
# contract (testdata/**/*.c, *.cu and the gdn/ contracts) and every input of
# tests/fuzz/regressions (the findings fixed so far) become one file of OUTDIR, named for where
# it came from. OUTDIR is made afresh: it holds nothing else.
set -eu
src=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$src"
find testdata gdn tests/fuzz/regressions -type f \( -name '*.c' -o -name '*.cu' -o -name '*.txt' \) | sort |
    while read -r f; do
        grep -q '/\*@kgate' "$f" 2>/dev/null || case $f in tests/fuzz/regressions/*) ;; *) continue ;; esac
        cp "$f" "$out/$(echo "$f" | tr '/' '_')"
    done
echo "$(ls "$out" | wc -l) seeds in $out"
