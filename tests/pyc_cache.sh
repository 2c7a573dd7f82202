#!/bin/sh
# pyc_cache.sh: where the torch runner keeps the modules Python compiles. With no .pyc of
# PyTorch's lazily imported modules beside their sources (a site-packages a sealed worker cannot
# write, or PYTHONDONTWRITEBYTECODE forbids it), compiled modules go to kgate's cache (beside
# the runner) and are compiled once; where the .pyc are there, nothing changes. And what the fork
# server imports for its workers (preload_for_workers): torch._dynamo, unless a child forked after
# the import could not use CUDA, when it starts again without. A stand-in `torch` package: no
# PyTorch needed.
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
# preload_for_workers: the stand-in's CUDA fails in a child forked after torch.poison is imported,
# as a real one does after a module that touches the driver; the script is started again by the
# function (exec), so it prints its first line twice then
cat > "$t/site/torch/cuda.py" <<'PY'
import torch
def is_available():
    return True
def synchronize():
    pass
PY
cat >> "$t/site/torch/__init__.py" <<'PY'
from torch import cuda  # noqa: E402
POISONED = False
def zeros(*a, **k):
    if POISONED:
        raise RuntimeError("Cannot re-initialize CUDA in forked subprocess")
PY
echo "import torch; torch.POISONED = True" > "$t/site/torch/poison.py"
cat > "$t/preload.py" <<'PY'
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("torch_runner", sys.argv[1])
tr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tr)
import torch
print("preload=%s" % os.environ.get("KGATE_ZYGOTE_PRELOAD", "default"), flush=True)
tr.preload_for_workers(torch)
print(" ".join(sorted(m for m in ("torch._dynamo", "torch.poison") if m in sys.modules)) or "none")
PY
preload() {
    env PYTHONPATH="$t/site" "$@" "$py" "$t/preload.py" "$t/cache/torch_runner.py" 3< /dev/null | tr '\n' ' '
}
got=$(preload env -u KGATE_ZYGOTE_PRELOAD)
check test "$got" = "preload=default torch._dynamo "
got=$(preload KGATE_ZYGOTE_PRELOAD=0)
check test "$got" = "preload=0 none "
got=$(preload KGATE_ZYGOTE_PRELOAD=no_such_module)
check test "$got" = "preload=no_such_module none "
got=$(preload KGATE_ZYGOTE_PRELOAD=torch._dynamo,torch.poison)
check test "$got" = "preload=torch._dynamo,torch.poison preload=0 none "
[ $fails -eq 0 ] || exit 1
