#!/bin/sh
# describe_meta.sh: the torch runner's shape probes on PyTorch's meta device. For every problem
# of testdata/kernelbench (and stand-ins that read values or make tensors on a named device),
# meta_shapes() must give exactly the real build-draw-forward's description at the nominal
# constants and at each constant + 1 (the contract inference's probes), or None where the meta
# device cannot stand in; a DESCRIBE at probe constants must then come from the meta device
# (no real forward) only when the nominal's check agreed.
set -u
t=${TMPDIR:-/tmp}/kgate-meta-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
cat > "$t/reads_value.py" <<'PY'
import torch
import torch.nn as nn
n = 32


class Model(nn.Module):
    def forward(self, x):
        k = int(x.abs().sum().item()) % 3 + 1  # a shape from a value: no meta stand-in
        return x[:, :k] * 2


def get_inputs():
    return [torch.rand(4, n)]


def get_init_inputs():
    return []
PY
cat > "$t/counts_forwards.py" <<'PY'
import os
import torch
import torch.nn as nn
n = 48


class Model(nn.Module):
    def forward(self, x):
        with open(os.environ["KGATE_TEST_LOG"], "a") as f:
            f.write("%s %d\n" % (x.device.type, x.shape[1]))
        return torch.relu(x)


def get_inputs():
    return [torch.rand(4, n)]


def get_init_inputs():
    return []
PY
cat > "$t/pads.py" <<'PY'
import os
import torch
import torch.nn as nn
n, kernel, padding = 64, 4, 2


class Model(nn.Module):
    def __init__(self, kernel, padding):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel, 1, padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    with open(os.environ["KGATE_TEST_DRAWS"], "a") as f:
        f.write("draw\n")
    return [torch.rand(2, 3, n)]


def get_init_inputs():
    return [kernel, padding]
PY
KGATE_TEST_DRAWS=$t/draws KGATE_TEST_LOG=$t/log "$py" - "$top_srcdir/src/runners/torch/torch_runner.py" "$t" "$top_srcdir"/testdata/kernelbench/problems/*.py <<'PY'
import ctypes, importlib.util, os, sys, json
spec = importlib.util.spec_from_file_location("torch_runner", sys.argv[1])
tr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tr)
t = sys.argv[2]
fails = 0


def worker(path):
    w = tr.Worker()
    w.start_torch()
    w.import_problem(path)
    return w


def real(w):
    torch = w.torch
    model = w.build(w.problem.Model, ("probe", tuple(sorted((k, getattr(w.problem, k)) for k in w.originals))))
    torch.manual_seed(tr.KERNEL_SEED)
    inputs = w.draw()
    with torch.no_grad():
        outs = w.outputs_of(model(*inputs))
    return w.describe_inputs(inputs), w.describe_outputs(outs)


for path in sys.argv[3:]:
    w = worker(path)
    name = os.path.basename(path)
    cases = [("nominal", None)] + [(k, v + 1) for k, v in w.originals.items()]
    for what, val in cases:
        for k, v in w.originals.items():
            setattr(w.problem, k, v)
        if val is not None:
            setattr(w.problem, what, val)
        try:
            want = real(w)
        except Exception:
            continue  # the problem does not build at this constant: the probe fails either way
        got = w.meta_shapes()
        if got is not None and got != want:
            print("FAIL: %s at %s: meta %s, real %s" % (name, what, got, want))
            fails += 1
        elif got is None:
            print("FAIL: %s at %s: no meta description" % (name, what))
            fails += 1
    print("ok: %s: meta shapes = real ones at the nominal and %d probes" % (name, len(cases) - 1))

w = worker(os.path.join(t, "reads_value.py"))
ok = w.meta_shapes() is None
print("%s: a shape read from a value: no meta description" % ("ok" if ok else "FAIL"))
fails += not ok

# DESCRIBE through the protocol: nominal first (real), then a probe (meta: no forward logged)
w = worker(os.path.join(t, "counts_forwards.py"))
shm = bytearray(1 << 16)


def describe(syms):
    req = tr.Req()
    p = req.u.problem
    for i, (k, v) in enumerate(syms):
        p.sym_names[i].value = k.encode()
        p.sym_values[i] = v
    p.nsym = len(syms)
    rep = tr.Reply()
    w.describe(req, shm, rep)
    return json.loads(bytes(shm[:rep.code]))


d0 = describe([])
d1 = describe([("n", 49)])
log = open(os.environ["KGATE_TEST_LOG"]).read().splitlines()
# the nominal runs for real (on a GPU also twice more, profiled for the decoy check); the probe
# at n = 49 only on the meta device
ok = d1["outputs"][0]["shape"] == [4, 49] and d0["outputs"][0]["shape"] == [4, 48] and \
    log.count("meta 49") == 1 and "%s 48" % w.device in log and \
    all(e.split()[0] == "meta" or e == "%s 48" % w.device for e in log)
print("%s: a probe's DESCRIBE ran on the meta device (forwards: %s)" % ("ok" if ok else "FAIL", ", ".join(log)))
fails += not ok
# a constant at which the problem itself fails (padding 3 > half of kernel 4): the error, as the
# real run gives it, without drawing the inputs for real
w = worker(os.path.join(t, "pads.py"))
d0 = describe([])
draws0 = open(os.environ["KGATE_TEST_DRAWS"]).read().count("draw")
d1 = describe([("padding", 3)])
d2 = describe([("n", 65)])
draws = open(os.environ["KGATE_TEST_DRAWS"]).read().count("draw")
ok = "error" in d1 and "error" not in d0 and d2["outputs"][0]["shape"] == [2, 3, 66] and draws == draws0 + 2
print("%s: a problem that fails at a probe's constants: an error without a real draw (%s; draws %d -> %d)"
      % ("ok" if ok else "FAIL", d1.get("error", "no error")[-80:].strip(), draws0, draws))
fails += not ok
sys.exit(1 if fails else 0)
PY
