#!/bin/sh
# model_key.sh: the torch worker builds one model for all the constants the model does not read
# (build, model_key): cases that differ in a batch size share it; a constant its code reads
# (through a module function too), or a different init input, builds another; a lazy module, or
# an init input that is a tensor, gets one model per constants; finding a model leaves every
# generator as it was (the determinism gate's noisy candidates draw from them between runs: on the
# H200 a reseeded GPU generator made noise_gelu's noise repeat and pass determinism); the oracle's
# float64 model and its working one come from one init (twin).
set -u
t=${TMPDIR:-/tmp}/kgate-mkey-$$
mkdir -p "$t"
trap 'rm -rf "$t"' EXIT
. "$top_srcdir/tests/torch_python.sh"
need_torch_python
cat > "$t/helper.py" <<'PY'
import torch
import torch.nn as nn
batch_size, features, hidden = 8, 16, 4
built = [0]


def make(h):
    return nn.Linear(features, h)  # a constant read in a module function, not in the class


class Model(nn.Module):
    def __init__(self, h):
        super().__init__()
        built[0] += 1
        self.lin = make(h)

    def forward(self, x):
        return self.lin(x)


def get_inputs():
    return [torch.rand(batch_size, features)]


def get_init_inputs():
    return [hidden]
PY
cat > "$t/decorated.py" <<'PY'
import functools
import torch
import torch.nn as nn
batch_size, features = 8, 16


def logged(f):
    @functools.wraps(f)
    def wrapper(*a, **k):
        return f(*a, **k)
    return wrapper


class Model(nn.Module):
    @logged
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(features, 4)  # read only inside the decorated function

    def forward(self, x):
        return self.lin(x)


def get_inputs():
    return [torch.rand(batch_size, features)]


def get_init_inputs():
    return []
PY
cat > "$t/lazy.py" <<'PY'
import torch
import torch.nn as nn
batch_size, features = 8, 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.LazyLinear(4)

    def forward(self, x):
        return self.lin(x)


def get_inputs():
    return [torch.rand(batch_size, features)]


def get_init_inputs():
    return []
PY
cat > "$t/tensor_init.py" <<'PY'
import torch
import torch.nn as nn
batch_size = 8


class Model(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = nn.Parameter(w)

    def forward(self, x):
        return x * self.w


def get_inputs():
    return [torch.rand(batch_size, 4)]


def get_init_inputs():
    return [torch.ones(4)]
PY
"$py" - "$top_srcdir/src/runners/torch/torch_runner.py" "$t" <<'PY'
import importlib.util, os, random, sys, warnings
warnings.simplefilter("ignore")  # LazyLinear announces itself
spec = importlib.util.spec_from_file_location("torch_runner", sys.argv[1])
tr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tr)
t = sys.argv[2]
fails = 0


def check(ok, what):
    global fails
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    fails += not ok


def worker(name):
    w = tr.Worker()
    w.start_torch()
    w.import_problem(os.path.join(t, name))
    return w


def model(w, **consts):
    for k, v in w.originals.items():
        setattr(w.problem, k, consts.get(k, v))
    return w.build(w.problem.Model, tuple(sorted((k, getattr(w.problem, k)) for k in w.originals)))


w = worker("helper.py")
torch = w.torch
a = model(w)
torch.manual_seed(7)
random.seed(7)
state, pystate = torch.get_rng_state(), random.getstate()
seeded = []
real_seed = torch.manual_seed
torch.manual_seed = lambda s: seeded.append(s) or real_seed(s)  # would reseed the GPU's too
b = model(w, batch_size=9)
torch.manual_seed = real_seed
check(torch.equal(torch.get_rng_state(), state) and random.getstate() == pystate and not seeded,
      "a model found leaves every generator as it was (none seeded: a GPU's noise would repeat)")
check(a is b and w.problem.built[0] == 1, "a batch size the model does not read shares one model")
check(model(w, features=17) is not a, "a constant a module function reads builds another")
check(model(w, hidden=5) is not a, "another init input builds another")
check(model(w, batch_size=10) is a and w.problem.built[0] == 3, "and the first is found again")
# the oracle's two precisions (twin=True): one init, the other a copy made before either was
# placed: the same parameters as a build of its own
o = worker("helper.py")
key = tuple(sorted((k, getattr(o.problem, k)) for k in o.originals))
a32 = o.build(o.problem.Model, key, None, twin=True)
d = o.build(o.problem.Model, key, torch.float64, twin=True)
check(o.problem.built[0] == 1, "the float64 twin costs no init of its own")
plain = worker("helper.py")
p64 = plain.build(plain.problem.Model, key, torch.float64)  # a build of its own
check(d is not a32 and d.lin.weight.dtype == torch.float64 and a32.lin.weight.dtype == torch.float32 and
      torch.equal(d.lin.weight, p64.lin.weight) and torch.equal(d.lin.bias, p64.lin.bias) and
      torch.equal(d.lin.weight, a32.lin.weight.double()), "the twin holds the parameters of a build of its own")
fresh = worker("helper.py")
f = fresh.build(fresh.problem.Model, key, torch.float64, twin=True)  # float64 first
check(fresh.problem.built[0] == 1 and fresh.build(fresh.problem.Model, key, None, twin=True) is not f and
      fresh.problem.built[0] == 1, "built float64 first, its working twin is found")
check(plain.build(plain.problem.Model, key) is not p64 and plain.problem.built[0] == 2,
      "without twin (describe's builds), no copy is made and each precision is built")
w = worker("decorated.py")
check(model(w) is not model(w, features=17), "a constant read inside a decorated __init__ builds another")
w = worker("lazy.py")
check(model(w) is not model(w, batch_size=9), "a lazy module: one model per constants")
w = worker("tensor_init.py")
check(model(w) is not model(w, batch_size=9), "a tensor among the init inputs: one model per constants")
sys.exit(1 if fails else 0)
PY
