#!/bin/sh
# cli_messages.sh: what the command line says about itself and about what it did: the compiler
# line of a first compile, --version's runners, `explain --help`, the built-in list, a file
# argument that does not exist.
set -u
t=${TMPDIR:-/tmp}/kgate-climsg-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
fails=0
check() { # check DESCRIPTION COMMAND...: the command must succeed
    d=$1
    shift
    if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}
td=$top_srcdir/testdata

# a first compile with an empty cache is a compile, even though later workers (the determinism
# gate's fresh one) find the cached object
mkdir "$t/cache"
KGATE_CACHE_DIR=$t/cache "$KGATE" check "$td/ok/relu.c" --gates accuracy,determinism --no-color > "$t/first" 2>&1
check "first compile exits 0" test $? -eq 0
check "  its header does not say cached" sh -c "head -n 1 '$t/first' | grep -v -q 'cached'"
check "  it names the compiler" sh -c "head -n 1 '$t/first' | grep -q 'host runner, [^ ,]*[a-z]'"
KGATE_CACHE_DIR=$t/cache "$KGATE" check "$td/ok/relu.c" --gates accuracy --no-color > "$t/second" 2>&1
check "the second says cached" sh -c "head -n 1 '$t/second' | grep -q '(cached)'"

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "PASS"
