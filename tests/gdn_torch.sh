#!/bin/sh
# gdn_torch.sh: the PyTorch binding gdn/python/kgate_gdn on the CPU (libgdn_host.so): gradcheck
# in float64 for every member, outputs and gradients against the fp64 oracle, the pure-PyTorch
# references (recurrent and chunked) against the oracle and each other, FLA's options and the
# refusals (tests/gdn_torch.py). SKIP (77) without a python3 that has torch.
set -u
py=""
for p in "${KGATE_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c "import torch" >/dev/null 2>&1 && { py=$p; break; }
done
[ -n "$py" ] || { echo "SKIP: no python3 with torch (Debian: python3-torch)"; exit 77; }
KGATE_GDN_LIBDIR=${top_builddir:-.}/gdn
export KGATE_GDN_LIBDIR
exec "$py" "${top_srcdir:-.}/tests/gdn_torch.py"
