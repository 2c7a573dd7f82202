#!/bin/sh
# test_names.sh: every test of make check has a log of its own. automake names a test's log by
# its path without the extension, so testdata/ok/x.c and testdata/ok/x.cu would share x.log and
# x.trs, and one result would silently replace the other (it happened: two host controls were
# reported as the SKIP of their CUDA twins). Fails on any two tests with the same stem.
set -u
mk=${top_srcdir:-.}/tests/local.mk
[ -f "$mk" ] || { echo "FAIL: no $mk"; exit 1; }
dups=$(grep -oE '(testdata|tests)/[A-Za-z0-9_./-]+\.(c|cu|sh)' "$mk" | sort -u | sed 's/\.[a-z]*$//' | sort | uniq -d)
if [ -n "$dups" ]; then
    echo "FAIL: tests sharing a log name (rename one of each):"
    echo "$dups"
    exit 1
fi
echo "PASS: $(grep -oE '(testdata|tests)/[A-Za-z0-9_./-]+\.(c|cu|sh)' "$mk" | sort -u | wc -l) test files, each with its own log"
