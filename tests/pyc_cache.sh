#!/bin/sh
# pyc_cache.sh: where the torch runner keeps the modules Python compiles. With no .pyc of
# PyTorch's lazily imported modules beside their sources (a site-packages a sealed worker cannot
# write, or PYTHONDONTWRITEBYTECODE forbids it), compiled modules go to kgate's cache (beside
# the runner) and are compiled once; where the .pyc are there, nothing changes. A stand-in
# `torch` package: no PyTorch needed.
set -u
t=${TMPDIR:-/tmp}/kgate-pyc-$$
mkdir -p "$t/site/torch/_dynamo" "$t/cache"
trap 'rm -rf "$t"' EXIT
py=${KGATE_PYTHON:-python3}
command -v "$py" > /dev/null 2>&1 || { echo "SKIP: no $py"; exit 77; }
fails=0
check() { if "$@"; then echo "ok: $*"; else echo "FAIL: $*"; fails=$((fails + 1)); fi; }
echo "X = 1" > "$t/site/torch/__init__.py"
: > "$t/site/torch/_dynamo/__init__.py"
echo "Y = 2" > "$t/site/torch/_dynamo/utils.py"
cp "$top_srcdir/src/runners/torch/torch_runner.py" "$t/cache/torch_runner.py"
# prints the prefix chosen, then imports torch._dynamo.utils under it
run() {
    env -u PYTHONPYCACHEPREFIX PYTHONPATH="$t/site" "$@" "$py" - "$t/cache/torch_runner.py" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("torch_runner", sys.argv[1])
tr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tr)
tr.compiled_modules_cache()
print(sys.pycache_prefix)
import torch._dynamo.utils  # noqa: F401
PY
}
got=$(run env -u PYTHONDONTWRITEBYTECODE)
check test "$got" = "$t/cache/pycache"
check sh -c "ls '$t/cache/pycache$t/site/torch/_dynamo/'utils.*.pyc > /dev/null 2>&1"
check test ! -d "$t/site/torch/_dynamo/__pycache__"
rm -rf "$t/cache/pycache"
got=$(run PYTHONDONTWRITEBYTECODE=1)
check test "$got" = "$t/cache/pycache"
check sh -c "ls '$t/cache/pycache$t/site/torch/_dynamo/'utils.*.pyc > /dev/null 2>&1"
check test ! -d "$t/site/torch/_dynamo/__pycache__"
"$py" -m py_compile "$t/site/torch/_dynamo/utils.py"
got=$(run PYTHONDONTWRITEBYTECODE=1)
check test "$got" = None
[ $fails -eq 0 ] || exit 1
