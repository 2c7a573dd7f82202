"""kernelbench_seq.py: the field's standard evaluation, one kernel at a time, as the baseline of
kgate's audit benchmark (src/bench/audit_bench.sh). For each PROBLEM:CANDIDATE pair, in a fresh
process as KernelBench runs it: import (compile) the candidate, build Model and ModelNew with
seed 42, then 5 trials of get_inputs() with seeds drawn from a generator seeded 42, a shape
check and torch.allclose(atol=rtol=1e-2). Prints one line per pair and the rate.
    python3 kernelbench_seq.py PROBLEM.py:CANDIDATE.py ...
"""
import importlib.util
import json
import subprocess
import sys
import time

ONE = r'''
import importlib.util, json, sys, time, torch
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    spec.loader.exec_module(m)
    return m
t0 = time.time()
res = {"compiled": False, "correct": False}
try:
    prob = load(sys.argv[1], "problem")
    cand = load(sys.argv[2], "candidate")
    res["compiled"] = True
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    init = prob.get_init_inputs()
    torch.manual_seed(42)
    ref = prob.Model(*init).to(dev)
    torch.manual_seed(42)
    new = cand.ModelNew(*init).to(dev)
    torch.manual_seed(42)
    seeds = [torch.randint(0, 2 ** 32 - 1, (1,)).item() for _ in range(5)]
    ok = True
    with torch.no_grad():
        for s in seeds:
            torch.manual_seed(s)
            xs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in prob.get_inputs()]
            a = ref(*xs)
            b = new(*xs)
            if dev == "cuda":
                torch.cuda.synchronize()
            if a.shape != b.shape or not torch.allclose(a, b, atol=1e-2, rtol=1e-2):
                ok = False
                break
    res["correct"] = ok
except Exception as e:
    res["error"] = str(e)[:200]
res["seconds"] = time.time() - t0
print(json.dumps(res))
'''


def main(pairs):
    t0 = time.time()
    for pc in pairs:
        prob, cand = pc.split(":", 1)
        p = subprocess.run([sys.executable, "-c", ONE, prob, cand], capture_output=True, text=True)
        line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else json.dumps({"error": p.stderr[-200:]})
        print("%s %s" % (cand.rsplit("/", 1)[-1], line), flush=True)
    el = time.time() - t0
    print("sequential KernelBench-style: %d kernels in %.1f s = %.0f kernels/hour" % (len(pairs), el, len(pairs) / el * 3600))


if __name__ == "__main__":
    main(sys.argv[1:])
