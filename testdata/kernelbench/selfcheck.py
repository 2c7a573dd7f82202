#!/usr/bin/env python3
"""Self-check of the KernelBench-format test data under testdata/kernelbench/.

What it does, in order:
  1. every candidate's header block is well formed and names an existing problem;
  2. every problem imports and runs get_init_inputs / get_inputs / Model.forward;
  3. every candidate that can run on the chosen device (runs-on: cpu everywhere, runs-on: gpu
     only with --device cuda) imports, its ModelNew returns outputs of the reference's shape, and
     KernelBench's standard correctness test, run as KernelBench runs it (below), gives the
     verdict its `baseline:` line states;
  4. (unless --no-probes) rough Python stand-ins for kgate's gates are run on the same candidates
     and the gate named by `expect: fail GATE` must fail, while `expect: pass` / `decoy`
     candidates must fail none (placement, bounds and limits have no probe: a candidate expected
     to fail one of those must pass every probe). The structure probe fills the allocator with a
     sentinel before the call (effective on CUDA's caching allocator). These probes only approximate kgate (their tolerance is
     K * |fp32 reference - fp64 reference| + floor, with K and the floor chosen here); they check
     that each planted bug is really there, not how kgate judges it.

KernelBench's test, as in its src/eval.py (eval_kernel_against_ref / run_and_check_correctness):
  torch.manual_seed(42); init = get_init_inputs()
  torch.manual_seed(42); model = Model(*init)      (under torch.no_grad)
  torch.manual_seed(42); model_new = ModelNew(*init)
  torch.manual_seed(42); seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(5)]
  per trial: torch.manual_seed(seed); inputs = get_inputs() (moved to the device);
             output = model(*inputs); synchronize; output_new = model_new(*inputs); synchronize;
             an exception or a shape mismatch fails at once; otherwise
             torch.allclose(output, output_new, atol=1e-2, rtol=1e-2) must hold in all 5 trials.

Usage:
  python3 selfcheck.py                 # all runs-on: cpu candidates on the CPU
  python3 selfcheck.py --device cuda   # every candidate, on the GPU (needs CUDA, and Triton for Triton ones)
  python3 selfcheck.py --table         # print the README table from the headers and exit
  python3 selfcheck.py candidates/x.py # only these candidates
Exit status 0 when everything agrees with the headers, 1 otherwise.
"""

import argparse
import copy
import importlib.util
import math
import os
import re
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ inside the test data
GATES = [
    "structure", "accuracy", "nonfinite", "determinism", "freshness", "aliasing",
    "placement", "shapes", "precision", "reduction-order", "bounds", "limits",
]
HEADER_KEYS = ["kgate-problem", "expect", "baseline", "runs-on", "why"]

# Probe tolerance: error vs fp64 must be <= K * (fp32 reference's error vs fp64) + FLOOR_EPS * eps32 * scale.
# K is loose on purpose: the fp32 Model may sum pairwise while a correct candidate sums sequentially
# (ok_torch_sum_dim: torch.mv on CPU has ~50x the error of torch.sum), and the probes only have to
# show that each planted bug is there, not reproduce kgate's calibrated threshold.
PROBE_K = 64.0
FLOOR_EPS = 16.0


# ----------------------------------------------------------------------------------------------
# headers and modules
# ----------------------------------------------------------------------------------------------

def parse_header(path):
    """Returns (dict, errors). The header is the first five lines, '# key: value', in order."""
    errors = []
    with open(path, encoding="utf-8") as f:
        lines = [f.readline() for _ in range(len(HEADER_KEYS))]
    h = {}
    for key, line in zip(HEADER_KEYS, lines):
        m = re.match(r"^# ([a-z-]+): (.+?)\s*$", line)
        if not m or m.group(1) != key:
            errors.append("header line for '%s' missing or malformed: %r" % (key, line.rstrip("\n")))
            continue
        h[key] = m.group(2)
    if errors:
        return h, errors
    if not os.path.isfile(os.path.join(HERE, h["kgate-problem"])):
        errors.append("kgate-problem %s does not exist" % h["kgate-problem"])
    exp = h["expect"].split()
    if exp == ["pass"] or exp == ["decoy"]:
        h["expect_gate"] = None
    elif len(exp) in (2, 3) and exp[0] == "fail" and exp[1] in GATES:
        h["expect_gate"] = exp[1]  # a third word is the cause the gate must diagnose
    else:
        errors.append("expect must be 'pass', 'decoy' or 'fail GATE [CAUSE]' (GATE one of %s): %r"
                      % (GATES, h["expect"]))
    if h["baseline"] not in ("pass", "fail"):
        errors.append("baseline must be pass or fail: %r" % h["baseline"])
    if h["runs-on"] not in ("cpu", "gpu"):
        errors.append("runs-on must be cpu or gpu: %r" % h["runs-on"])
    if len(h["why"]) < 20:
        errors.append("why is too short")
    name = os.path.basename(path)
    if h.get("expect") == "pass" and not name.startswith("ok_"):
        errors.append("expect: pass but the file name does not start with ok_")
    if name.startswith("ok_") and h.get("expect") != "pass":
        errors.append("ok_ file whose expect is not pass")
    return h, errors


_counter = [0]


def load_module(path):
    _counter[0] += 1
    name = "kbtd_%d_%s" % (_counter[0], re.sub(r"\W", "_", os.path.basename(path)[:-3]))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # Triton's @jit wants its module importable
    spec.loader.exec_module(mod)
    return mod


def int_constants(prob):
    return {k: v for k, v in vars(prob).items()
            if not k.startswith("_") and type(v) is int}


# ----------------------------------------------------------------------------------------------
# tensors
# ----------------------------------------------------------------------------------------------

def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def set_seed(torch, seed):
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def to_dev(torch, xs, device):
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in xs]


def backend_flags(torch):
    """Process-global numeric flags a candidate may flip (tf32_flag_linear does)."""
    return (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)


def restore_backend_flags(torch, flags):
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = flags


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def storage_ptr(t):
    try:
        return t.untyped_storage().data_ptr()
    except AttributeError:
        return t.storage().data_ptr()


def bits_equal(torch, a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        a = a.detach().contiguous()
        b = b.detach().contiguous()
        view = {torch.float16: torch.int16, torch.bfloat16: torch.int16,
                torch.float32: torch.int32, torch.float64: torch.int64}[a.dtype]
        return torch.equal(a.view(view), b.view(view))
    return torch.equal(a, b)


# ----------------------------------------------------------------------------------------------
# KernelBench's standard test
# ----------------------------------------------------------------------------------------------

def build_models(torch, prob, cand, device):
    set_seed(torch, 42)
    init = to_dev(torch, prob.get_init_inputs(), device)
    with torch.no_grad():
        set_seed(torch, 42)
        model = prob.Model(*init)
        set_seed(torch, 42)
        model_new = cand.ModelNew(*init)
    return model.to(device), model_new.to(device)


def kernelbench_baseline(torch, prob, cand, device):
    """Returns (verdict 'pass'/'fail', detail)."""
    model, model_new = build_models(torch, prob, cand, device)
    torch.manual_seed(42)
    seeds = [torch.randint(0, 2 ** 32 - 1, (1,)).item() for _ in range(5)]
    passed = 0
    notes = []
    with torch.no_grad():
        for trial, seed in enumerate(seeds):
            set_seed(torch, seed)
            inputs = to_dev(torch, prob.get_inputs(), device)
            set_seed(torch, seed)
            output = model(*inputs)
            sync(torch, device)
            try:
                output_new = model_new(*inputs)
                sync(torch, device)
            except Exception as e:  # KernelBench records a runtime error and stops
                return "fail", "trial %d: exception %s: %s" % (trial, type(e).__name__, str(e)[:200])
            if output.shape != output_new.shape:
                return "fail", "trial %d: shape %s != %s" % (trial, tuple(output_new.shape), tuple(output.shape))
            if torch.allclose(output, output_new, atol=1e-2, rtol=1e-2):
                passed += 1
            else:
                diff = (output.double() - output_new.double()).abs().max().item()
                notes.append("trial %d: max diff %.3g" % (trial, diff))
    if passed == len(seeds):
        return "pass", "5/5 trials allclose"
    return "fail", "%d/5 trials allclose; %s" % (passed, "; ".join(notes))


# ----------------------------------------------------------------------------------------------
# probes: rough stand-ins for kgate's gates
# ----------------------------------------------------------------------------------------------

class ProbeFail(Exception):
    pass


class Ctx:
    """One candidate against one problem, with the reference in fp32 and fp64."""

    def __init__(self, torch, prob, cand, device):
        self.torch = torch
        self.prob = prob
        self.cand = cand
        self.device = device
        self.rebuild()

    def rebuild(self):
        torch = self.torch
        self.model, self.model_new = build_models(torch, self.prob, self.cand, self.device)
        self.model64 = copy.deepcopy(self.model).double()

    def inputs(self, seed, transform=None):
        torch = self.torch
        set_seed(torch, seed)
        xs = to_dev(torch, self.prob.get_inputs(), self.device)
        if transform is not None:
            xs = [transform(x) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in xs]
        return xs

    def refs(self, xs):
        torch = self.torch
        with torch.no_grad():
            r32 = as_list(self.model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in xs]))
            x64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else
                   (x.clone() if isinstance(x, torch.Tensor) else x) for x in xs]
            r64 = as_list(self.model64(*x64))
        return r32, r64

    def call(self, xs):
        """The candidate's call; global flags it flips are put back so the references stay fp32."""
        torch = self.torch
        flags = backend_flags(torch)
        try:
            with torch.no_grad():
                out = self.model_new(*xs)
            sync(torch, self.device)
        finally:
            restore_backend_flags(torch, flags)
        return as_list(out)

    def judge(self, what, outs, r32, r64):
        """Raises ProbeFail when an output is further from fp64 than the fp32 reference allows."""
        torch = self.torch
        if len(outs) != len(r64):
            raise ProbeFail("%s: %d outputs, reference has %d" % (what, len(outs), len(r64)))
        worst = 0.0
        for o, a, e in zip(outs, r32, r64):
            if tuple(o.shape) != tuple(e.shape):
                raise ProbeFail("%s: shape %s, reference %s" % (what, tuple(o.shape), tuple(e.shape)))
            o = o.detach().double().cpu()
            a = a.detach().double().cpu()
            e = e.detach().cpu()
            fin = torch.isfinite(e)
            same_nonfinite = (torch.isnan(o) == torch.isnan(e)) & (torch.isposinf(o) == torch.isposinf(e)) \
                & (torch.isneginf(o) == torch.isneginf(e))
            if not bool(same_nonfinite.all()):
                raise ProbeFail("%s: non-finite values differ from the fp64 reference at %d positions"
                                % (what, int((~same_nonfinite).sum())))
            if not bool(fin.any()):
                continue
            ef, of, af = e[fin], o[fin], a[fin]
            err = (of - ef).abs()
            ref_err = (af - ef).abs()
            ref_err = ref_err[torch.isfinite(ref_err)]
            ref_err_max = ref_err.max().item() if ref_err.numel() else 0.0
            scale = max(ef.abs().max().item(), 1e-30)
            tol = PROBE_K * ref_err_max + FLOOR_EPS * 1.1920929e-07 * scale
            e_max = err.max().item() if err.numel() else 0.0
            if not math.isfinite(e_max) or e_max > tol:
                raise ProbeFail("%s: max error %.3g > threshold %.3g (fp32 ref error %.3g)"
                                % (what, e_max, tol, ref_err_max))
            worst = max(worst, e_max / tol if tol > 0 else 0.0)
        return worst


SENTINEL_BITS = 0x7FC0DEAD  # a float32 NaN with a payload no arithmetic produces


def poison_allocator(torch, like, device, copies=8):
    """Frees blocks of the outputs' sizes filled with the sentinel, so that an output taken from
    torch.empty and left partly unwritten shows it (the CUDA caching allocator hands the same
    blocks back; on the CPU this is best effort)."""
    junk = []
    for t in like:
        if t.dtype == torch.float32:
            for _ in range(copies):
                junk.append(torch.full(tuple(t.shape), SENTINEL_BITS, dtype=torch.int32, device=device))
    sync(torch, device)
    del junk


def probe_structure(c):
    torch = c.torch
    xs = c.inputs(1)
    r32, r64 = c.refs(xs)
    poison_allocator(torch, r32, c.device)
    outs = c.call(xs)
    for o, a in zip(outs, r32):
        if type(o) is not torch.Tensor:
            raise ProbeFail("output is a %s, not a plain torch.Tensor" % type(o).__name__)
        if o.shape != a.shape or o.dtype != a.dtype or o.device != a.device:
            raise ProbeFail("output %s %s %s, reference %s %s %s"
                            % (tuple(o.shape), o.dtype, o.device, tuple(a.shape), a.dtype, a.device))
        if o.dtype == torch.float32:
            unwritten = int((o.detach().contiguous().view(torch.int32) == SENTINEL_BITS).sum())
            if unwritten:
                raise ProbeFail("%d of %d output elements still hold the allocator sentinel (never written)"
                                % (unwritten, o.numel()))
    return "ok"


def probe_accuracy(c):
    worst = 0.0
    for seed in (11, 12, 13):
        xs = c.inputs(seed)
        r32, r64 = c.refs(xs)
        worst = max(worst, c.judge("seed %d" % seed, c.call(xs), r32, r64))
    return "worst error/threshold %.2f" % worst


def probe_nonfinite(c):
    torch = c.torch
    xs = c.inputs(21)

    def inject(x):
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            return x
        x = x.clone()
        flat = x.view(-1)
        n = flat.numel()
        stride = max(n // 7, 1)
        for k, v in enumerate([float("nan"), float("inf"), float("-inf")]):
            flat[(k * stride + 3) % n] = v
        return x

    xs = [inject(x) for x in xs]
    r32, r64 = c.refs(xs)
    outs = c.call(xs)
    for o, e in zip(outs, r64):
        o = o.detach().cpu()
        e = e.detach().cpu()
        for name, f in (("NaN", torch.isnan), ("+inf", torch.isposinf), ("-inf", torch.isneginf)):
            if not torch.equal(f(o), f(e)):
                raise ProbeFail("%s positions differ: candidate %d, fp64 reference %d"
                                % (name, int(f(o).sum()), int(f(e).sum())))
    return "ok"


def probe_determinism(c):
    xs = c.inputs(31)
    a = c.call([x.clone() for x in xs])
    a = [t.detach().clone() for t in a]
    for _ in range(3):
        b = c.call([x.clone() for x in xs])
        for s, t in zip(a, b):
            if not bits_equal(c.torch, s, t.detach()):
                raise ProbeFail("two runs on identical inputs differ")
    return "ok"


def probe_freshness(c):
    torch = c.torch
    c.rebuild()  # a fresh ModelNew, as in a fresh process
    xs = c.inputs(41)
    r32, r64 = c.refs(xs)
    c.judge("first call", c.call(xs), r32, r64)
    # the same storage rewritten with new values
    new = c.inputs(42)
    for x, y in zip(xs, new):
        if isinstance(x, torch.Tensor):
            x.copy_(y)
    r32, r64 = c.refs(xs)
    c.judge("same storage, new values", c.call(xs), r32, r64)
    # new storage holding the same values
    ys = [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]
    c.judge("new storage, same values", c.call(ys), r32, r64)
    return "ok"


def probe_aliasing(c):
    torch = c.torch
    xs = c.inputs(51)
    before = [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]
    outs = c.call(xs)
    for k, (x, b) in enumerate(zip(xs, before)):
        if isinstance(x, torch.Tensor) and not bits_equal(torch, x, b):
            raise ProbeFail("input %d was modified by the call" % k)
    in_ptrs = {storage_ptr(x) for x in xs if isinstance(x, torch.Tensor)}
    for o in outs:
        if storage_ptr(o) in in_ptrs:
            raise ProbeFail("an output shares storage with an input")
    return "ok"


def probe_shapes(c):
    prob = c.prob
    consts = int_constants(prob)
    cases = 0
    try:
        for name, orig in consts.items():
            for v in (1, 7, 97, orig + 1):
                if v == orig:
                    continue
                setattr(prob, name, v)
                try:
                    c.rebuild()
                    xs = c.inputs(61)
                    r32, r64 = c.refs(xs)
                except Exception:
                    continue  # the reference itself rejects this shape
                finally:
                    setattr(prob, name, orig)
                cases += 1
                try:
                    outs = c.call(xs)
                except Exception as e:
                    raise ProbeFail("%s=%d: candidate raised %s (kgate may call this 'refused')"
                                    % (name, v, type(e).__name__))
                c.judge("%s=%d" % (name, v), outs, r32, r64)
    finally:
        for name, orig in consts.items():
            setattr(prob, name, orig)
        c.rebuild()
    return "%d shape cases" % cases


def probe_precision(c):
    xs = c.inputs(71, transform=lambda x: x + 1e3)
    r32, r64 = c.refs(xs)
    return "worst error/threshold %.2f" % c.judge("inputs + 1e3", c.call(xs), r32, r64)


def probe_reduction_order(c):
    torch = c.torch

    def mixed(x):
        g = torch.Generator().manual_seed(81)
        mag = 10.0 ** (torch.rand(x.shape, generator=g, dtype=torch.float64) * 8.0 - 4.0)
        sign = torch.ones(x.numel(), dtype=torch.float64)
        sign[1::2] = -1.0
        return (mag * sign.view(x.shape)).to(x.dtype).to(x.device)

    xs = c.inputs(81, transform=mixed)
    r32, r64 = c.refs(xs)
    return "worst error/threshold %.2f" % c.judge("mixed magnitudes", c.call(xs), r32, r64)


PROBES = [
    ("structure", probe_structure),
    ("accuracy", probe_accuracy),
    ("nonfinite", probe_nonfinite),
    ("determinism", probe_determinism),
    ("freshness", probe_freshness),
    ("aliasing", probe_aliasing),
    ("shapes", probe_shapes),
    ("precision", probe_precision),
    ("reduction-order", probe_reduction_order),
]


PROBED = {gate for gate, _ in PROBES}


def run_probes(torch, prob, cand, device):
    """Returns [(gate, 'pass'|'fail'|'error', detail)]."""
    results = []
    c = Ctx(torch, prob, cand, device)
    for gate, fn in PROBES:
        try:
            results.append((gate, "pass", fn(c)))
        except ProbeFail as e:
            results.append((gate, "fail", str(e)))
        except Exception as e:
            results.append((gate, "error", "%s: %s" % (type(e).__name__, str(e)[:200])))
        try:
            c.rebuild()
        except Exception:
            pass
    return results


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------

def candidate_paths(args):
    if args.files:
        return [os.path.abspath(p) for p in args.files]
    d = os.path.join(HERE, "candidates")
    return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".py")]


def print_table(paths):
    print("| candidate | class | problem | expect | baseline | runs-on |")
    print("|---|---|---|---|---|---|")
    for p in paths:
        h, errs = parse_header(p)
        name = os.path.basename(p)[:-3]
        prob = os.path.basename(h.get("kgate-problem", "?"))[:-3]
        cls = "correct" if name.startswith("ok_") else name[: -len(prob) - 1] if name.endswith("_" + prob) else name
        print("| `%s` | %s | %s | %s | %s | %s |" % (
            name, cls, prob, h.get("expect", "?"), h.get("baseline", "?"), h.get("runs-on", "?")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="candidate files (default: all under candidates/)")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    ap.add_argument("--no-probes", action="store_true", help="only headers, problems and the baseline")
    ap.add_argument("--table", action="store_true", help="print the README table and exit")
    args = ap.parse_args()
    paths = candidate_paths(args)
    if args.table:
        print_table(paths)
        return 0

    import torch
    device = torch.device(args.device)
    problems = {}
    failures = 0
    print("torch %s, device %s" % (torch.__version__, device))

    # 1. headers
    headers = {}
    for p in paths:
        h, errs = parse_header(p)
        headers[p] = h
        for e in errs:
            print("HEADER FAIL %s: %s" % (os.path.basename(p), e))
            failures += 1

    # 2. problems
    pdir = os.path.join(HERE, "problems")
    for f in sorted(os.listdir(pdir)):
        if not f.endswith(".py"):
            continue
        rel = "problems/" + f
        try:
            prob = load_module(os.path.join(pdir, f))
            set_seed(torch, 42)
            init = to_dev(torch, prob.get_init_inputs(), device)
            set_seed(torch, 42)
            model = prob.Model(*init).to(device)
            xs = to_dev(torch, prob.get_inputs(), device)
            with torch.no_grad():
                out = as_list(model(*xs))
            consts = int_constants(prob)
            problems[rel] = prob
            print("problem  %-24s ok  out %s  constants %s" % (
                rel, ", ".join(str(tuple(o.shape)) for o in out),
                ", ".join("%s=%d" % kv for kv in consts.items())))
        except Exception:
            print("PROBLEM FAIL %s:\n%s" % (rel, traceback.format_exc()))
            failures += 1

    # 3 and 4. candidates
    for p in paths:
        h = headers[p]
        name = os.path.basename(p)
        if "runs-on" not in h or "kgate-problem" not in h:
            continue
        if h["runs-on"] == "gpu" and device.type != "cuda":
            print("skip     %-44s runs-on: gpu" % name)
            continue
        prob = problems.get(h["kgate-problem"])
        if prob is None:
            print("FAIL     %-44s problem %s did not load" % (name, h["kgate-problem"]))
            failures += 1
            continue
        flags = backend_flags(torch)
        try:
            cand = load_module(p)
            # KernelBench does not reset global flags between trials: neither does the baseline
            verdict, detail = kernelbench_baseline(torch, prob, cand, device)
        except Exception:
            print("FAIL     %-44s could not run:\n%s" % (name, traceback.format_exc()))
            failures += 1
            continue
        finally:
            restore_backend_flags(torch, flags)
        ok = verdict == h["baseline"]
        failures += 0 if ok else 1
        print("%s %-44s baseline %s (header: %s): %s" % (
            "ok      " if ok else "MISMATCH", name, verdict, h["baseline"], detail))
        if args.no_probes:
            continue
        results = run_probes(torch, prob, cand, device)
        failed = [g for g, st, _ in results if st != "pass"]
        want = h.get("expect_gate")
        note = ""
        if want is None:
            agree = not failed
        elif want in PROBED:
            agree = want in failed
        else:
            # placement, bounds and limits have no probe here: the candidate must pass all the others
            agree = not failed
            note = " (%s is not probed here)" % want
        failures += 0 if agree else 1
        print("%s %-44s probes: expect %s; failing: %s%s" % (
            "ok      " if agree else "MISMATCH", name, h["expect"], ", ".join(failed) or "none", note))
        for g, st, d in results:
            if st != "pass" or not agree or args.files:
                print("           %-16s %-5s %s" % (g, st, d))
    print("selfcheck: %s" % ("all agree with the headers" if failures == 0 else "%d disagreement(s)" % failures))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
