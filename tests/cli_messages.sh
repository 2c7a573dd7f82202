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

# --version: the version, then one line per runner part, each yes or no with the reason
"$KGATE" --version > "$t/version" 2>&1
check "--version exits 0" test $? -eq 0
check "  first line is the version" sh -c "head -n 1 '$t/version' | grep -q '^kgate [0-9]'"
for part in host cuda nvrtc cupti torch; do
    check "  says whether $part can run" grep -q -E "^$part: (yes|no|[0-9]+\.[0-9]+|not probed) " "$t/version"
done
check "  every 'no' says why" sh -c "! grep -E '^[a-z]+: no' '$t/version' | grep -v -q ': no (.*)'"
check "  the host runner can run (this machine compiles the tests)" grep -q '^host: yes (' "$t/version"
if [ ! -e /dev/nvidia0 ] && [ ! -e /dev/nvidiactl ]; then
    check "  without a GPU, cuda says no and why" grep -q '^cuda: no (.*\(libcuda\|no CUDA device\|no NVIDIA\|no CUDA runner\)' "$t/version"
fi
KGATE_PYTHON=$t/no-such-python "$KGATE" --version > "$t/version2" 2>&1
check "  a missing interpreter is torch: no" grep -q "^torch: no ($t/no-such-python: not found)" "$t/version2"

"$KGATE" explain --help > "$t/explain" 2>&1
check "explain --help exits 0" test $? -eq 0
check "  and prints the explain usage" grep -q '^usage: kgate explain GATE' "$t/explain"

# the built-in kernels, from the table compiled into kgate
"$KGATE" --list-builtins > "$t/builtins" 2>&1
check "--list-builtins exits 0" test $? -eq 0
check "  lists builtin:softmax_rows with its runners and op" \
    grep -q '^builtin:softmax_rows  *host,cuda  *op softmax(dim=1): ' "$t/builtins"
check "  one line per built-in, each with its op or oracle" \
    sh -c "! grep '^builtin:' '$t/builtins' | grep -v -q -E '^builtin:[a-z0-9_]+ +[a-z,]+ +(op|oracle) '"
check "  no built-in's contract fails to load" sh -c "! grep -q 'does not load' '$t/builtins'"
"$KGATE" list-builtins > "$t/builtins2" 2>&1
check "list-builtins is the same command" cmp -s "$t/builtins" "$t/builtins2"
for b in $(sed -n 's/^builtin:\([a-z0-9_]*\) .*/\1/p' "$t/builtins"); do
    KGATE_CACHE_DIR=$t/cache "$KGATE" check "builtin:$b" --runner host --compile-only > /dev/null 2>&1
    check "  builtin:$b (listed) compiles on the host runner" test $? -eq 0
done
check "--help names --list-builtins as a command" sh -c "'$KGATE' --help | grep -q '^  *kgate --list-gates | --list-builtins'"

# a FILE that is not there is said to be missing, with a non-zero exit, before any inspector
"$KGATE" "$t/nope.c" < /dev/null > "$t/out" 2> "$t/err"
check "kgate MISSING.c exits 2" test $? -eq 2
check "  and says no such file" grep -q "nope.c: no such file" "$t/err"
"$KGATE" lsit-builtins < /dev/null > "$t/out" 2> "$t/err"
check "a mistyped command exits 2" test $? -eq 2

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "PASS"
