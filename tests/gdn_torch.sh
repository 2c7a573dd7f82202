#!/bin/sh
# gdn_torch.sh: the PyTorch binding gdn/python/kgate_gdn on the CPU (libgdn_host.so): gradcheck
# in float64 for every member, outputs and gradients against the fp64 oracle, the pure-PyTorch
# references (recurrent and chunked) against the oracle and each other, FLA's options and the
# refusals (tests/gdn_torch.py). SKIP (77) without a python3 that has torch.
set -u
. "${top_srcdir:-.}/tests/torch_python.sh"
need_torch_python
KGATE_GDN_LIBDIR=${top_builddir:-.}/gdn
export KGATE_GDN_LIBDIR
exec "$py" "${top_srcdir:-.}/tests/gdn_torch.py"
