#!/bin/sh
# gdn_torch_cuda.sh: the PyTorch binding on the GPU (libgdn.so): bf16 and fp32 outputs and
# gradients of every member against the fp64 oracle, two runs and a side stream bitwise equal,
# the CUDA refusals, kgate_gdn.chunked (train.py's reference) in fp32 with deterministic
# algorithms on against the oracle (tests/gdn_torch.py --cuda). SKIP (77) without a python3
# whose torch sees an sm_90 GPU, or without libgdn.so (configure found no nvcc).
set -u
. "${top_srcdir:-.}/tests/torch_python.sh"
need_torch_python
KGATE_GDN_LIBDIR=${top_builddir:-.}/gdn
export KGATE_GDN_LIBDIR
[ -f "$KGATE_GDN_LIBDIR/libgdn.so" ] || { echo "SKIP: no $KGATE_GDN_LIBDIR/libgdn.so (configure found no nvcc)"; exit 77; }
exec "$py" "${top_srcdir:-.}/tests/gdn_torch.py" --cuda
