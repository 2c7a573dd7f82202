"""check.py: validates the real-size KernelBench corpus without its real sizes (corpus.jsonl, README.md).

For every pair of corpus.jsonl:
  - the candidate's five header lines are checked, and its problem path must match the row's;
  - the problem's real sizes are measured without allocating them (FakeTensorMode): bytes of its
    float32 inputs, parameters and outputs, and what an fp64 oracle holds (the same in float64);
  - runs-on: cpu candidates (and, with --device cuda, every candidate) run at reduced sizes: each
    module constant >= 32 is divided by the smallest power of two that brings the pair under
    ~200k tensor elements, then the same sizes + 1 (odd sizes, multiples of no tile). Model and
    ModelNew are built as KernelBench builds them (torch.manual_seed(42) before each), run on the
    same get_inputs(), and must agree: allclose(rtol = atol = 1e-4, NaN equal) in float32;
  - the other candidates are only compiled to Python bytecode here (they need CUDA or Triton).
Prints a table per problem and the corpus totals; exit 0 when every check holds.

    /usr/bin/python3 check.py [--device cuda] [--sizes-only] [CANDIDATE.py ...]
"""
import importlib.util
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = 200_000  # tensor elements per pair at reduced size
RTOL = ATOL = 1e-4


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    spec.loader.exec_module(m)
    return m


def header(path):
    lines = open(path).read().split("\n")[:5]
    keys = ["kgate-problem", "expect", "baseline", "runs-on", "why"]
    h = {}
    for i, k in enumerate(keys):
        pre = "# %s: " % k
        if i >= len(lines) or not lines[i].startswith(pre):
            raise ValueError("%s:%d: expected '%s...'" % (path, i + 1, pre))
        h[k] = lines[i][len(pre):].strip()
    if h["runs-on"] not in ("cpu", "gpu"):
        raise ValueError("%s:4: runs-on must be cpu or gpu" % path)
    return h


def constants(prob):
    return {k: v for k, v in vars(prob).items() if type(v) is int and not k.startswith("_")}


def set_constants(prob, values):
    for k, v in values.items():
        setattr(prob, k, v)


def tensors(xs):
    return [x for x in (xs if isinstance(xs, (list, tuple)) else [xs]) if isinstance(x, torch.Tensor)]


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


def shapes(prob):
    """(inputs, params, outputs) of the problem at its current constants, as fake tensors."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        torch.manual_seed(42)
        m = prob.Model(*prob.get_init_inputs())
        xs = prob.get_inputs()
        with torch.no_grad():
            y = m(*xs)
        return tensors(xs), list(m.parameters()), tensors(y)


def reduced(prob, orig):
    """Constants scaled by the smallest power of two that brings the pair under SMALL elements."""
    d = 1
    while True:
        vals = {k: (max(16, v // d) if v >= 32 else v) for k, v in orig.items()}
        set_constants(prob, vals)
        ins, ps, outs = shapes(prob)
        if sum(t.numel() for t in ins + ps + outs) <= SMALL or d > 1 << 20:
            return vals
        d *= 2


def run_pair(prob, cand, vals, dev):
    set_constants(prob, vals)
    init = prob.get_init_inputs()
    torch.manual_seed(42)
    ref = prob.Model(*init).to(dev)
    torch.manual_seed(42)
    new = cand.ModelNew(*init).to(dev)
    worst = 0.0
    for seed in (1, 2):
        torch.manual_seed(seed)
        xs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in prob.get_inputs()]
        with torch.no_grad():
            a = tensors(ref(*xs))
            b = tensors(new(*xs))
        if len(a) != len(b):
            return "returned %d tensors, expected %d" % (len(b), len(a)), worst
        for u, v in zip(a, b):
            if u.shape != v.shape or u.dtype != v.dtype:
                return "output %s %s, expected %s %s" % (tuple(v.shape), v.dtype, tuple(u.shape), u.dtype), worst
            if u.numel():
                err = ((u.double() - v.double()).abs() / (u.double().abs() + 1)).max().item()
                worst = max(worst, err) if err == err else float("nan")
            if not torch.allclose(u.float(), v.float(), rtol=RTOL, atol=ATOL, equal_nan=True):
                return "differs at %s (max rel err %.3g)" % (vals, worst), worst
    return None, worst


def gib(n):
    return n / 2 ** 30


def main(argv):
    dev = "cpu"
    sizes_only = False
    only = []
    while argv:
        a = argv.pop(0)
        if a == "--device":
            dev = argv.pop(0)
        elif a == "--sizes-only":
            sizes_only = True
        else:
            only.append(os.path.basename(a))
    torch.set_num_threads(int(os.environ.get("CHECK_THREADS", "2")))
    rows = [json.loads(line) for line in open(os.path.join(HERE, "corpus.jsonl")) if line.strip()]
    failures = 0
    tot = {"in": 0, "par": 0, "out": 0, "max": 0}
    runs = {"cpu": 0, "gpu": 0, "ran": 0, "compiled": 0}
    t0 = time.time()
    print("%-44s %-5s %9s %9s %9s %9s %10s  %s" % ("candidate", "on", "in GiB", "param", "out GiB",
                                                  "fp64 GiB", "largest", "reduced-size check"))
    for i, r in enumerate(rows):
        cpath = os.path.join(HERE, r["candidate"])
        ppath = os.path.join(HERE, r["problem"])
        name = os.path.basename(cpath)
        if only and name not in only:
            continue
        try:
            h = header(cpath)
        except ValueError as e:
            print(e)
            failures += 1
            continue
        if os.path.normpath(os.path.join(HERE, h["kgate-problem"])) != os.path.normpath(ppath):
            print("%s:1: kgate-problem %s, but corpus.jsonl pairs it with %s" % (cpath, h["kgate-problem"], r["problem"]))
            failures += 1
        runs[h["runs-on"]] += 1
        prob = load(ppath, "problem_%d" % i)
        orig = constants(prob)
        ins, ps, outs = shapes(prob)
        b_in, b_par, b_out = nbytes(ins), nbytes(ps), nbytes(outs)
        largest = max(t.numel() for t in ins + ps + outs)
        for k, v in (("in", b_in), ("par", b_par), ("out", b_out), ("max", 0)):
            tot[k] += v
        tot["max"] = max(tot["max"], largest)
        status = "-"
        if not sizes_only:
            if h["runs-on"] == "cpu" or dev != "cpu":
                try:
                    cand = load(cpath, "candidate_%d" % i)
                    small = reduced(prob, orig)
                    odd = {k: (v + 1 if orig[k] >= 32 else v) for k, v in small.items()}
                    why, w1 = run_pair(prob, cand, small, dev)
                    if not why:
                        why, w2 = run_pair(prob, cand, odd, dev)
                        w1 = max(w1, w2)
                    status = ("FAIL: " + why) if why else "ok (max rel err %.1e)" % w1
                    runs["ran"] += 1
                except Exception as e:  # a candidate that raises is a failed check, with its reason
                    status = "FAIL: %s: %s" % (type(e).__name__, str(e).split("\n")[0][:120])
                failures += status.startswith("FAIL")
                set_constants(prob, orig)
            else:
                try:
                    compile(open(cpath).read(), cpath, "exec")
                    status = "compiles (needs CUDA)"
                    runs["compiled"] += 1
                except SyntaxError as e:
                    status = "FAIL: %s:%s: %s" % (cpath, e.lineno, e.msg)
                    failures += 1
        print("%-44s %-5s %9.2f %9.2f %9.2f %9.2f %10.3g  %s" % (name[:44], h["runs-on"], gib(b_in), gib(b_par), gib(b_out),
                                                               2 * gib(b_in + b_par + b_out), largest, status))
    real = tot["in"] + tot["par"] + tot["out"]
    print("corpus: %d pairs (%d cpu, %d gpu); float32 tensors at real size: inputs %.1f GiB, parameters %.1f GiB, "
          "outputs %.1f GiB, total %.1f GiB; the fp64 oracle's copies %.1f GiB; largest tensor %.3g elements"
          % (runs["cpu"] + runs["gpu"], runs["cpu"], runs["gpu"], gib(tot["in"]), gib(tot["par"]), gib(tot["out"]),
             gib(real), 2 * gib(real), tot["max"]))
    print("checked: %d run at reduced sizes on %s, %d only compiled; %d failure(s); %.1f s"
          % (runs["ran"], dev, runs["compiled"], failures, time.time() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
