#!/bin/sh
# seq_reference.sh: the sequential fp32 reference of the torch runner (seq_mode: a k-loop of
# rank-1 updates) takes a batch of matrices, bmm's or conv2d's samples, in one k-loop; every
# element must get exactly the sums of one loop per matrix, bit for bit (the working-precision
# reference a verdict is calibrated on), and the mode must still replace the op. The loop run in
# numpy on the host (few outputs: seq_mm_host) and the torch loop must agree to the bit, on a
# long k, large means, signed zeros, infinities, NaN and subnormals, and transposed operands; on a
# GPU so must the k-loop run as one Triton kernel (seq_mm_device), the torch loop there, and the
# host's (NaN aside: the host's default NaN is another bit pattern than CUDA's; seen on an H100).
set -u
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
"$py" - "$top_srcdir/src/runners/torch/torch_runner.py" <<'PY'
import importlib.util, sys
import numpy as np
import torch
spec = importlib.util.spec_from_file_location("torch_runner", sys.argv[1])
tr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tr)


def one(a, b):  # one matrix, one k-loop: the definition
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=a.dtype)
    for k in range(a.shape[1]):
        acc += a[:, k, None] * b[None, k, :]
    return acc


def same(x, y):
    return x.shape == y.shape and torch.equal(x.view(torch.int32), y.view(torch.int32))


def same_or_nan(x, y):
    both = x.isnan() & y.isnan()
    return x.shape == y.shape and bool(((x.view(torch.int32) == y.view(torch.int32)) | both).all())


def operands(sa, sb, kind):
    """a [..., M, K] and b [..., K, N] of one kind: normal, large mean, specials (signed zeros,
    subnormals, an infinity, a NaN), strided (x @ W.T: both transposed views, as a Linear passes
    them) or expanded (a's batch of stride 0, as conv2d passes its weights)."""
    a, b = torch.randn(sa), torch.randn(sb)
    if kind == "strided":
        a = torch.randn(sa[:-2] + (sa[-1], sa[-2])).transpose(-1, -2)
        b = torch.randn(sb[:-2] + (sb[-1], sb[-2])).transpose(-1, -2)
    if kind == "expanded":
        a = torch.randn(sa[1:]).expand(sa)
    if kind == "large mean":
        a += 1e3
    if kind == "specials":
        a.view(-1)[::17] = 0.0
        b.view(-1)[::13] = -0.0
        a.view(-1)[::29] = 1e-40
        b.view(-1)[::31] = -3e-39
        a.view(-1)[5] = float("inf")
        b.view(-1)[3] = float("nan")
    return a, b


fails = 0
torch.manual_seed(0)
a, b = torch.randn(5, 7, 33), torch.randn(5, 33, 11)
want = torch.stack([one(a[i], b[i]) for i in range(5)])
with tr.seq_mode(torch) as mode:
    got = torch.bmm(a, b)
ok = same(got, want) and mode.replaced
print("bmm of 5: bit for bit the per-matrix loops, replaced:", ok)
fails += not ok
ok = same(tr.seq_mm(torch, np, a[0], b[0]), one(a[0], b[0]))
print("one matrix:", ok)
fails += not ok
x, w, bias = torch.randn(3, 4, 9, 10), torch.randn(6, 4, 3, 3), torch.randn(6)
cols = torch.nn.functional.unfold(x, (3, 3), padding=1)
want = torch.stack([one(w.reshape(6, -1), cols[i]) for i in range(3)]).reshape(3, 6, 9, 10) + bias.reshape(1, 6, 1, 1)
with tr.seq_mode(torch) as mode:
    got = torch.nn.functional.conv2d(x, w, bias, padding=1)
ok = same(got, want) and mode.replaced
print("conv2d of 3 samples: bit for bit the per-sample loops, replaced:", ok)
fails += not ok
host = tr.SEQ_HOST_OUTPUTS
for name, (sa, sb) in {"long k": ((2, 20000), (20000, 3)), "batch": ((4, 3, 300), (4, 300, 5))}.items():
    for kind in ("normal", "large mean", "specials", "strided"):
        a, b = operands(sa, sb, kind)
        tr.SEQ_HOST_OUTPUTS = 0  # the torch loop
        loop = tr.seq_mm(torch, np, a, b)
        tr.SEQ_HOST_OUTPUTS = host
        ok = same(tr.seq_mm(torch, np, a, b), loop)
        print("%s, %s: numpy's loop on the host bit for bit the torch loop:" % (name, kind), ok)
        fails += not ok
# on a GPU: the k-loop as one Triton kernel (seq_mm_device) against the torch loop on the same
# device and the numpy loop on the host, bit for bit; a batch through the grid's third dimension,
# an expanded (stride 0) batch as conv2d passes its weights, tiles cut by M and N
if torch.cuda.is_available():
    cases = {"long k": ((2, 20000), (20000, 3)), "batch": ((4, 3, 300), (4, 300, 5)),
             "tiles cut": ((37, 513), (513, 70)), "boundary batch of a gemm": ((31, 2048), (2048, 300))}
    for name, (sa, sb) in cases.items():
        for kind in ("normal", "large mean", "specials", "strided", "expanded"):
            if kind == "expanded" and len(sa) < 3:
                continue
            a, b = operands(sa, sb, kind)
            a, b = a.cuda(), b.cuda()
            tr.SEQ_DEVICE, tr.SEQ_HOST_OUTPUTS = False, 0
            loop = tr.seq_mm(torch, np, a, b)
            host_loop = tr.seq_mm(torch, np, a.cpu(), b.cpu())
            tr.SEQ_DEVICE, tr.SEQ_HOST_OUTPUTS = True, host
            acc = torch.zeros(loop.shape, dtype=torch.float32, device="cuda")
            dev = tr.seq_mm_device(torch, a, b, acc)
            # the host's NaN is another bit pattern (x86's default NaN has the sign set, CUDA's
            # not): against the host, a NaN where the host has one
            ok = dev is not None and same(dev.cpu(), loop.cpu()) and same_or_nan(dev.cpu(), host_loop)
            print("%s, %s: the GPU kernel bit for bit the torch loop on the GPU and (NaN aside) the host's:"
                  % (name, kind), "unavailable" if dev is None else ok)
            fails += not ok
    a, b = torch.randn(5, 7, 33, device="cuda"), torch.randn(5, 33, 11, device="cuda")
    want = torch.stack([one(a[i].cpu(), b[i].cpu()) for i in range(5)])
    with tr.seq_mode(torch) as mode:
        got = torch.bmm(a, b)
    ok = same(got.cpu(), want) and mode.replaced and tr.seq_kernel not in (None, False)
    print("bmm of 5 on the GPU: through the kernel, bit for bit the per-matrix loops:", ok)
    fails += not ok
else:
    print("no CUDA device: the GPU kernel of the sequential reference is not checked here")
print("%d failed" % fails)
sys.exit(1 if fails else 0)
PY
