#!/usr/bin/env python3
"""gdn/train.py: train a small model with each member of the family as its token mixer, once through
libgdn (kgate_gdn) and once through a pure-PyTorch reference of the same member (fp32, autograd,
same init, same data in the same order), on two synthetic tasks that need no download:

  mqar    multi-query associative recall: key-value pairs, then queries of those keys; the loss
          and accuracy are on the queried values only
  markov  next-token loss on a seeded order-2 Markov chain (its entropy rate, the best possible
          loss, is printed)

Each libgdn run is made --repeat times (2 by default) to show that the loss curves are bitwise
identical (torch.use_deterministic_algorithms(True), one seed; see gdn/README.md for what that
took). The reference is kgate_gdn.chunked (--reference chunked, the default: the chunk-parallel
form, T / 64 sequential steps) or kgate_gdn.recurrent (--reference recurrent: one step at a time,
T steps; far slower on a GPU), or both (--reference chunked,recurrent); the tests check each
against the other and the oracle. Writes OUT/<task>_<member>_<run>.csv, <run> one of libgdn,
libgdn2, ..., reference-chunked, reference-recurrent (step, loss, accuracy, ms; loss as Python's
repr, so it round-trips exactly) and, through gdn/train_report.py, OUT/table.md and OUT/<task>.svg.

    PYTHONPATH= python3 gdn/train.py --steps 2000 --device cuda --out OUT     # the real run
    python3 gdn/train.py --steps 20 --device cpu --seq 32 --batch 4 --hidden 32 --heads 2   # smoke

KGATE_GDN_LIBDIR names the build tree's gdn/ folder (libgdn.so, .libs/libgdn_host.so) when the
build is not in the source tree. Exit status: 0, 1 when a run failed or two libgdn runs differ.
"""

import argparse
import math
import os
import sys
import time

# cuBLAS is deterministic only with a fixed workspace configuration, set before CUDA starts
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "python"))
sys.path.insert(0, HERE)

import kgate_gdn as kg  # noqa: E402
import train_report  # noqa: E402

MEMBERS = ["linear", "gla", "ssd", "gdn", "kda"]
TASKS = ["mqar", "markov"]
REFERENCES = {"chunked": kg.chunked, "recurrent": kg.recurrent}

# ---- the tasks: every step's batch generated up front on the CPU from one seed ---------------


def mqar(n, T, gen, pairs, queries, n_keys=64, n_vals=64):
    """n sequences of T tokens: `pairs` distinct keys (1..n_keys) each followed by its value
    (n_keys+1..n_keys+n_vals), then `queries` keys at random later positions whose targets are
    their values; 0 elsewhere. Targets are -1 where nothing is asked."""
    assert 2 * pairs + queries <= T, "mqar: 2 * pairs + queries must fit in T"
    keys = torch.rand(n, n_keys, generator=gen).argsort(-1)[:, :pairs] + 1
    vals = torch.randint(n_keys + 1, n_keys + n_vals + 1, (n, pairs), generator=gen)
    x = torch.zeros(n, T, dtype=torch.long)
    y = torch.full((n, T), -1, dtype=torch.long)
    x[:, 0:2 * pairs:2], x[:, 1:2 * pairs:2] = keys, vals
    pos = torch.rand(n, T - 2 * pairs, generator=gen).argsort(-1)[:, :queries] + 2 * pairs
    which = torch.randint(0, pairs, (n, queries), generator=gen)
    x.scatter_(1, pos, keys.gather(1, which))
    y.scatter_(1, pos, vals.gather(1, which))
    return x, y, 1 + n_keys + n_vals


def markov(n, T, gen, vocab=64, sharpness=3.0):
    """n sequences from an order-2 Markov chain over `vocab` tokens whose transition rows are
    softmax(sharpness * N(0,1)), seeded; targets are the next tokens. Also returns the chain's
    entropy rate estimated on these sequences (nats), the floor of the next-token loss."""
    probs = torch.softmax(sharpness * torch.randn(vocab * vocab, vocab, generator=gen, dtype=torch.float64), -1)
    cdf = probs.cumsum(-1)
    s = torch.empty(n, T + 1, dtype=torch.long)
    s[:, :2] = torch.randint(0, vocab, (n, 2), generator=gen)
    u = torch.rand(n, T + 1, generator=gen, dtype=torch.float64)
    for t in range(2, T + 1):
        row = cdf[s[:, t - 2] * vocab + s[:, t - 1]]
        s[:, t] = torch.searchsorted(row, u[:, t:t + 1].contiguous()).squeeze(1).clamp_(max=vocab - 1)
    ent = -(probs * probs.clamp_min(1e-300).log()).sum(-1)
    rate = ent[s[:, :T - 1] * vocab + s[:, 1:T]].mean().item()  # of the targets y[:, 1:]
    y = s[:, 1:].clone()
    y[:, :1] = -1  # the first target depends on one token only
    return s[:, :T], y, vocab, rate


_data = {}


def task_data(a, task):
    """[steps, batch, T] inputs (uint8) and targets (int16), the vocabulary size and the loss
    floor (markov) -- the same for every run of the process and of every other process."""
    key = (task, a.steps, a.batch, a.seq, a.seed)
    if key not in _data:
        gen = torch.Generator().manual_seed(a.seed * 1000 + TASKS.index(task))
        n = a.steps * a.batch
        if task == "mqar":
            pairs = max(1, a.seq // 16)
            x, y, vocab = mqar(n, a.seq, gen, pairs=pairs, queries=max(1, a.seq // 8))
            floor = 0.0
        else:
            x, y, vocab, floor = markov(n, a.seq, gen)
        _data[key] = (x.view(a.steps, a.batch, a.seq).to(torch.uint8), y.view(a.steps, a.batch, a.seq).to(torch.int16),
                      vocab, floor)
    return _data[key]


# ---- the model ---------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * self.weight


class ShortConv(nn.Module):
    """Causal depthwise convolution of width w over time, as shifted copies times per-channel
    weights (elementwise ops only, so deterministic on every device)."""

    def __init__(self, c, w=4):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(w, c).uniform_(-w ** -0.5, w ** -0.5))

    def forward(self, x):  # [B, T, C]
        T = x.shape[1]
        y = x * self.weight[0]
        for j in range(1, self.weight.shape[0]):
            y = y + F.pad(x, (0, 0, j, 0))[:, :T] * self.weight[j]
        return y


def l2norm(x):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6)


class Mixer(nn.Module):
    """q, k, v projections with a short convolution and SiLU, l2-normalised q and k, gates
    g = logsigmoid(W x) / 16 (per head or per key channel), beta = sigmoid(W x) for the delta
    members, the member's recurrence, a per-head RMSNorm and the output projection."""

    def __init__(self, member, d, H):
        super().__init__()
        _, gate, delta = kg.MEMBERS[member]
        self.member, self.H, self.dk = member, H, d // H
        self.q, self.k, self.v = (nn.Linear(d, d, bias=False) for _ in range(3))
        self.cq, self.ck, self.cv = (ShortConv(d) for _ in range(3))
        self.g = nn.Linear(d, d if gate == "channel" else H) if gate else None
        self.b = nn.Linear(d, H) if delta else None
        self.norm = RMSNorm(self.dk)
        self.o = nn.Linear(d, d, bias=False)

    def forward(self, x, impl, dtype):
        B, T, d = x.shape
        H, dk = self.H, self.dk
        q = l2norm(F.silu(self.cq(self.q(x))).view(B, T, H, dk))
        k = l2norm(F.silu(self.ck(self.k(x))).view(B, T, H, dk))
        v = F.silu(self.cv(self.v(x))).view(B, T, H, dk)
        g = F.logsigmoid(self.g(x)).view(B, T, H, -1).squeeze(-1) / 16 if self.g is not None else None
        beta = torch.sigmoid(self.b(x)) if self.b is not None else None
        if impl in REFERENCES:  # fp32 throughout, autograd
            o, _ = REFERENCES[impl](self.member, q, k, v, g, beta)
        else:  # libgdn: q, k, v, beta in the mixer dtype, g in fp32, all contiguous [B, T, H, D]
            c = lambda t: None if t is None else t.to(dtype).contiguous()  # noqa: E731
            o, _ = kg.call(self.member, c(q), c(k), c(v), None if g is None else g.float().contiguous(), c(beta))
            o = o.float()
        return self.o(self.norm(o).reshape(B, T, d))


class Block(nn.Module):
    def __init__(self, member, d, H):
        super().__init__()
        self.n1, self.mix, self.n2 = RMSNorm(d), Mixer(member, d, H), RMSNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, impl, dtype):
        x = x + self.mix(self.n1(x), impl, dtype)
        return x + self.mlp(self.n2(x))


class Model(nn.Module):
    def __init__(self, member, vocab, d, H, layers):
        super().__init__()
        self.vocab = vocab
        self.emb = nn.Parameter(torch.randn(vocab, d) * 0.02)
        self.blocks = nn.ModuleList(Block(member, d, H) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, x, impl, dtype):
        # one-hot matmul, not an embedding lookup: the lookup's backward scatters with atomics
        onehot = (x.unsqueeze(-1) == torch.arange(self.vocab, device=x.device)).float()
        h = onehot @ self.emb
        for b in self.blocks:
            h = b(h, impl, dtype)
        return self.head(self.norm(h))


def loss_acc(logits, y):
    """Mean next-token cross-entropy and top-1 accuracy over the targets >= 0, by elementwise ops
    and sums (no gather / scatter, whose CUDA backward is not deterministic)."""
    mask = (y >= 0).float()
    onehot = (y.unsqueeze(-1) == torch.arange(logits.shape[-1], device=y.device)).float()
    nll = -(F.log_softmax(logits.float(), -1) * onehot).sum(-1)
    n = mask.sum()
    acc = ((logits.argmax(-1) == y).float() * mask).sum() / n
    return (nll * mask).sum() / n, acc


# ---- one run -------------------------------------------------------------------------------------


def run_one(a, task, member, run):
    """Trains one model; writes OUT/<task>_<member>_<run>.csv; returns (path, seconds)."""
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    impl = run[len("reference-"):] if run.startswith("reference-") else "libgdn"
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[a.mixer_dtype]
    x_all, y_all, vocab, floor = task_data(a, task)
    torch.manual_seed(a.seed)
    model = Model(member, vocab, a.hidden, a.heads, a.layers).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1)
    warm = max(1, min(100, a.steps // 10))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, s / a.steps)))))
    path = os.path.join(a.out, "%s_%s_%s.csv" % (task, member, run))
    t_run = time.perf_counter()
    with open(path + ".part", "w") as f:
        f.write("step,loss,accuracy,ms\n")
        for step in range(a.steps):
            if a.deadline and time.time() > a.t_start + a.deadline:
                print("  %s %s %s: --deadline reached, stopped after %d steps" % (task, member, run, step), flush=True)
                break
            t0 = time.perf_counter()
            x = x_all[step].to(dev, torch.long)
            y = y_all[step].to(dev, torch.long)
            loss, acc = loss_acc(model(x, impl, dtype), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            lv, av = loss.item(), acc.item()  # synchronises: the step's time is complete
            ms = (time.perf_counter() - t0) * 1e3
            f.write("%d,%r,%r,%.3f\n" % (step, lv, av, ms))
            if not math.isfinite(lv):
                raise RuntimeError("%s %s %s: loss %r at step %d" % (task, member, run, lv, step))
            if a.log_every and (step % a.log_every == 0 or step == a.steps - 1):
                print("  %s %s %-9s step %5d loss %.4f acc %.3f %.1f ms" % (task, member, run, step, lv, av, ms),
                      flush=True)
    os.replace(path + ".part", path)
    return path, time.perf_counter() - t_run, floor


def _job(a, spec):
    try:
        return spec, run_one(a, *spec), None
    except Exception as e:  # noqa: BLE001 -- a failed run is reported, the others go on
        return spec, None, "%s: %s" % (type(e).__name__, e)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--members", default=",".join(MEMBERS), help="comma-separated: " + " ".join(MEMBERS))
    p.add_argument("--tasks", default=",".join(TASKS), help="comma-separated: " + " ".join(TASKS))
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--impls", default="libgdn,reference", help="libgdn, reference or both")
    p.add_argument("--reference", default="chunked",
                   help="the reference runs' form, comma-separated: chunked (default), recurrent")
    p.add_argument("--repeat", type=int, default=2, help="libgdn runs per member and task (>= 2: bitwise check)")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mixer-dtype", choices=["bf16", "fp32"], default=None,
                   help="dtype of q, k, v, beta into libgdn (default bf16 on CUDA, fp32 on the CPU)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads per run (fixed: part of determinism)")
    p.add_argument("--jobs", type=int, default=1, help="runs at once, each in its own process")
    p.add_argument("--out", default="train-out")
    p.add_argument("--log-every", type=int, default=0)
    p.add_argument("--final-window", type=int, default=100, help="steps averaged into the final loss")
    p.add_argument("--deadline", type=float, default=0,
                   help="seconds after which every run stops where it is and keeps its CSV (0: none)")
    a = p.parse_args(argv)
    a.t_start = time.time()
    members, tasks = a.members.split(","), a.tasks.split(",")
    impls = a.impls.split(",")
    for i in impls:
        if i not in ("libgdn", "reference"):
            p.error("unknown impl %r (impls: libgdn reference)" % i)
    refs = a.reference.split(",")
    for r in refs:
        if r not in REFERENCES:
            p.error("unknown reference %r (references: %s)" % (r, " ".join(REFERENCES)))
    for m in members:
        if m not in MEMBERS:
            p.error("unknown member %r (members: %s)" % (m, " ".join(MEMBERS)))
    for t in tasks:
        if t not in TASKS:
            p.error("unknown task %r (tasks: %s)" % (t, " ".join(TASKS)))
    if a.mixer_dtype is None:
        a.mixer_dtype = "bf16" if a.device.startswith("cuda") else "fp32"
    if a.device == "cpu" and a.mixer_dtype == "bf16":
        p.error("--mixer-dtype bf16 needs --device cuda (the CPU path is float32 / float64)")
    if a.hidden % a.heads:
        p.error("--hidden must be a multiple of --heads")
    os.makedirs(a.out, exist_ok=True)
    runs = []
    if "libgdn" in impls:
        runs += ["libgdn"] + ["libgdn%d" % i for i in range(2, a.repeat + 1)]
    if "reference" in impls:
        runs += ["reference-" + r for r in refs]
    specs = [(t, m, r) for t in tasks for m in members for r in runs]
    print("train.py: %d runs (%s x %s x %s), %d steps, batch %d, T %d, hidden %d, %d heads, %d layers, %s, "
          "mixer %s, %d job(s)" % (len(specs), ",".join(tasks), ",".join(members), ",".join(runs), a.steps, a.batch,
                                   a.seq, a.hidden, a.heads, a.layers, a.device, a.mixer_dtype, a.jobs), flush=True)
    t0 = time.perf_counter()
    errors, floors = [], {}
    if a.jobs <= 1:
        results = (_job(a, s) for s in specs)
    else:
        import concurrent.futures
        import multiprocessing

        pool = concurrent.futures.ProcessPoolExecutor(a.jobs, mp_context=multiprocessing.get_context("spawn"))
        results = (f.result() for f in concurrent.futures.as_completed([pool.submit(_job, a, s) for s in specs]))
    for spec, res, err in results:
        if err:
            errors.append("%s %s %s: %s" % (spec + (err,)))
            print("FAILED: %s" % errors[-1], flush=True)
        else:
            floors[spec[0]] = res[2]
            print("done %s %s %s in %.1f s" % (spec + (res[1],)), flush=True)
    print("train.py: all runs in %.1f s" % (time.perf_counter() - t0))
    for t, fl in sorted(floors.items()):
        if t == "markov":
            print("markov: entropy rate of the chain (the best possible loss) %.4f nats" % fl)
    same = train_report.report(a.out, final_window=a.final_window)
    for e in errors:
        print("FAILED: " + e)
    return 1 if errors or same is False else 0


if __name__ == "__main__":
    sys.exit(main())
