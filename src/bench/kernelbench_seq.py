"""kernelbench_seq.py: the field's standard evaluation, one kernel at a time, as the baseline of
kgate's audit benchmark (src/bench/audit_bench.sh). For each PROBLEM:CANDIDATE pair, in a fresh
process as KernelBench runs it: import (compile) the candidate, build Model and ModelNew with
seed 42, then 5 trials of get_inputs() with seeds drawn from a generator seeded 42, a shape
check and torch.allclose(atol=rtol=1e-2). Prints one line per pair and the rate (the sum of the
pairs' wall times, process start included).
    python3 kernelbench_seq.py [--store FILE.jsonl [--summary]] PROBLEM.py:CANDIDATE.py ...
With --store, each pair's result is appended as it finishes and pairs already there are skipped,
so a corpus can be measured over several sittings (the device gives 10 minutes a call); pairs are
known by their files' names, not their paths (a checkout may move between sittings). --summary
runs nothing: it prints the rate over the pairs the store holds.
"""
import json
import os
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
    if dev == "cuda":  # this worker's peak: the sequential side's own memory, as KernelBench holds it
        res["peak_mib"] = round(torch.cuda.max_memory_allocated() / 2 ** 20)
except Exception as e:
    res["error"] = str(e)[:200]
res["seconds"] = time.time() - t0
print(json.dumps(res))
'''


paths = {}


def key(pc):
    """A pair's name in the store: its two files' names (paths change between sittings)."""
    prob, cand = pc.split(":", 1)
    k = os.path.basename(prob) + ":" + os.path.basename(cand)
    paths[os.path.basename(prob)], paths[os.path.basename(cand)] = prob, cand
    return k


def main(argv):
    store, summary = None, False
    if len(argv) >= 2 and argv[0] == "--store":
        store, argv = argv[1], argv[2:]
        if argv and argv[0] == "--summary":
            summary, argv = True, argv[1:]
    done = {}
    if store and os.path.exists(store):  # resume: a corpus longer than one sitting
        for line in open(store):
            try:
                r = json.loads(line)
                done[key(r["pair"])] = r
            except ValueError:
                pass
    out = open(store, "a") if store else None
    argv = [key(pc) for pc in argv]
    for pc in argv:
        if pc in done or summary:
            continue
        prob, cand = pc.split(":", 1)
        t0 = time.time()
        p = subprocess.run([sys.executable, "-c", ONE, paths[prob], paths[cand]], capture_output=True, text=True)
        wall = time.time() - t0
        line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else json.dumps({"error": p.stderr[-200:]})
        print("%s %s" % (cand.rsplit("/", 1)[-1], line), flush=True)
        done[pc] = {"pair": pc, "wall": wall, "result": json.loads(line)}
        if out:
            out.write(json.dumps(done[pc]) + "\n")
            out.flush()
    el = sum(done[pc]["wall"] for pc in argv if pc in done)
    n = sum(1 for pc in argv if pc in done)
    missing = len(argv) - n
    if missing:
        print("%d of the %d pairs not measured yet" % (missing, len(argv)))
    print("sequential KernelBench-style: %d kernels in %.1f s = %.0f kernels/hour" % (n, el, n / el * 3600 if el else 0))


if __name__ == "__main__":
    main(sys.argv[1:])
