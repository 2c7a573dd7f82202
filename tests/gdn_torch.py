"""tests/gdn_torch.py: the PyTorch binding gdn/python/kgate_gdn against the fp64 oracle.

    python3 tests/gdn_torch.py          # CPU: gradcheck, oracle, references, refusals (tests/gdn_torch.sh)
    python3 tests/gdn_torch.py --cuda   # GPU: bf16 / fp32 outputs and gradients vs the oracle, streams,
                                        # determinism, refusals, reference.chunked in fp32 under
                                        # deterministic algorithms (tests/gpu/gdn_torch_cuda.sh); exit 77
                                        # without an sm_90 GPU or without libgdn.so

Prints one line per check and exits 1 if any failed. KGATE_GDN_LIBDIR names the build tree's gdn/.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gdn", "python"))

import torch  # noqa: E402

import kgate_gdn as kg  # noqa: E402

MEMBERS = ["linear", "gla", "ssd", "gdn", "kda"]
fails = 0


def check(ok, what):
    global fails
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        fails += 1


def inputs(member, B, T, H, K, V, dtype=torch.float64, device="cpu", seed=0, S0=True):
    """Random inputs of the shapes the member takes: q, k scaled to keep the state moderate, gates
    in log space <= 0 (decays in [exp(-1), 1]), beta in (0, 1)."""
    gen = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=gen, dtype=torch.float64)  # noqa: E731
    _, gate, delta = kg.MEMBERS[member]
    x = {"q": r(B, T, H, K) * 0.5, "k": r(B, T, H, K) * 0.5, "v": r(B, T, H, V),
         "g": None, "beta": None, "initial_state": r(B, H, K, V) * 0.5 if S0 else None}
    if delta:  # the delta rule is a contraction only for |k| ~ 1: normalise k as models do
        x["k"] = x["k"] / x["k"].norm(dim=-1, keepdim=True)
        x["beta"] = torch.rand(B, T, H, generator=gen, dtype=torch.float64)
    if gate:
        x["g"] = -torch.rand(*((B, T, H) if gate == "head" else (B, T, H, K)), generator=gen, dtype=torch.float64)
    state_dtype = torch.float32 if device != "cpu" else dtype
    for n, t in x.items():
        if t is not None:
            x[n] = t.to(device, state_dtype if n in ("g", "initial_state") else dtype)
    return x


def rel_rms(x, ref):
    x, ref = x.double().cpu(), ref.double().cpu()
    n = ref.norm().item()
    return (x - ref).norm().item() / (n if n > 0 else 1.0)


def run(member, x, dO, dST):
    """o, ST and the gradients of sum(dO o) + sum(dST ST) through kgate_gdn.call."""
    leaves = {n: t.detach().clone().requires_grad_(True) for n, t in x.items() if t is not None}
    a = {n: leaves.get(n) for n in x}
    o, ST = kg.call(member, a["q"], a["k"], a["v"], a["g"], a["beta"], initial_state=a["initial_state"],
                    output_final_state=True)
    loss = (o.double() * dO.double()).sum() + (ST.double() * dST.double()).sum()
    loss.backward()
    r = {"o": o.detach(), "ST": ST.detach()}
    for n, t in leaves.items():
        r["d" + {"beta": "b", "initial_state": "S0"}.get(n, n)] = t.grad
    return r


def against_oracle(member, x, dO, dST):
    ref = kg.oracle(member, x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["initial_state"],
                    dO=dO, dST=dST)
    return run(member, x, dO, dST), ref


def raises(exc, text, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except exc as e:
        return text in str(e)
    except Exception as e:  # noqa: BLE001 -- the wrong exception type is a failure, said as such
        print("   raised %s: %s" % (type(e).__name__, e))
        return False
    return False


# ---- CPU ------------------------------------------------------------------------------------


def cpu_gradcheck():
    for m in MEMBERS:
        for (B, T, H, K, V) in ((2, 7, 2, 3, 2), (1, 70, 1, 2, 2)):  # T = 70: two chunks of 64
            x = inputs(m, B, T, H, K, V, seed=T)
            names = [n for n, t in x.items() if t is not None]
            leaves = [x[n].clone().requires_grad_(True) for n in names]

            def f(*ts):
                a = dict(zip(names, ts))
                return kg.call(m, a["q"], a["k"], a["v"], a.get("g"), a.get("beta"),
                               initial_state=a.get("initial_state"), output_final_state=True)

            ok = torch.autograd.gradcheck(f, leaves, eps=1e-6, atol=1e-7, rtol=1e-6, raise_exception=False)
            check(ok, "gradcheck float64 %s B=%d T=%d H=%d K=%d V=%d (o and final_state wrt %s)" % (
                m, B, T, H, K, V, ", ".join(names)))
        # without initial_state and without the final state as an output
        x = inputs(m, 1, 9, 2, 3, 2, seed=3, S0=False)
        names = [n for n, t in x.items() if t is not None]
        leaves = [x[n].clone().requires_grad_(True) for n in names]
        ok = torch.autograd.gradcheck(
            lambda *ts: kg.call(m, *[dict(zip(names, ts)).get(n) for n in ("q", "k", "v", "g", "beta")])[0],
            leaves, eps=1e-6, atol=1e-7, rtol=1e-6, raise_exception=False)
        check(ok, "gradcheck float64 %s, no initial state, o only" % m)


def cpu_oracle():
    for m in MEMBERS:
        for dtype, bar, shape in ((torch.float64, 1e-10, (2, 130, 2, 16, 8)), (torch.float32, 2e-5, (2, 130, 2, 16, 8)),
                                  (torch.float64, 1e-10, (1, 5, 3, 4, 3))):
            x = inputs(m, *shape, dtype=dtype, seed=11)
            gen = torch.Generator().manual_seed(5)
            dO = torch.randn(*shape[:3], shape[4], generator=gen, dtype=torch.float64).to(dtype)
            dST = torch.randn(shape[0], shape[2], shape[3], shape[4], generator=gen, dtype=torch.float64).to(dtype)
            got, ref = against_oracle(m, x, dO, dST)
            errs = {n: rel_rms(got[n], ref[n]) for n in got}
            worst = max(errs, key=errs.get)
            check(errs[worst] <= bar, "%s %s B,T,H,K,V=%s vs oracle: worst relative RMS %.2e (%s) <= %g" % (
                m, str(dtype).replace("torch.", ""), shape, errs[worst], worst, bar))
            check(sorted(got) == sorted(n for n in ref if ref[n] is not None),
                  "%s gives exactly the gradients the member has (%s)" % (m, " ".join(sorted(got))))


def cpu_reference():
    """train.py's pure-PyTorch reference is the oracle's recurrence: its outputs and autograd
    gradients match the oracle in fp64."""
    for m in MEMBERS:
        x = inputs(m, 2, 70, 2, 5, 4, seed=21)
        gen = torch.Generator().manual_seed(6)
        dO = torch.randn(2, 70, 2, 4, generator=gen, dtype=torch.float64)
        dST = torch.randn(2, 2, 5, 4, generator=gen, dtype=torch.float64)
        leaves = {n: t.clone().requires_grad_(True) for n, t in x.items() if t is not None}
        a = {n: leaves.get(n) for n in x}
        o, ST = kg.recurrent(m, a["q"], a["k"], a["v"], a["g"], a["beta"], initial_state=a["initial_state"],
                             output_final_state=True)
        ((o * dO).sum() + (ST * dST).sum()).backward()
        ref = kg.oracle(m, x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["initial_state"], dO=dO,
                        dST=dST)
        got = {"o": o, "ST": ST}
        got.update({"d" + {"beta": "b", "initial_state": "S0"}.get(n, n): t.grad for n, t in leaves.items()})
        worst = max(rel_rms(got[n], ref[n]) for n in got)
        check(worst <= 1e-12, "reference.recurrent %s vs oracle (fp64, autograd): worst relative RMS %.1e" % (m, worst))


def grads_of(f, m, x, dO, dST, **kw):
    """f's (recurrent or chunked) o, ST and the autograd gradients of sum(dO o) + sum(dST ST) (of
    sum(dO o) alone when dST is None: no final state asked for)."""
    leaves = {n: t.clone().requires_grad_(True) for n, t in x.items() if t is not None}
    a = {n: leaves.get(n) for n in x}
    o, ST = f(m, a["q"], a["k"], a["v"], a["g"], a["beta"], initial_state=a["initial_state"],
              output_final_state=dST is not None, **kw)
    loss = (o * dO).sum() + ((ST * dST).sum() if dST is not None else 0)
    loss.backward()
    got = {"o": o.detach(), "ST": ST}
    got.update({"d" + {"beta": "b", "initial_state": "S0"}.get(n, n): t.grad for n, t in leaves.items()})
    return got


def cpu_chunked():
    """reference.chunked (train.py's reference) is reference.recurrent in the chunk-parallel form:
    in fp64 the same outputs and autograd gradients to 1e-10 for T below, at and past a chunk and
    not a multiple of it, with and without initial and final states, other chunk sizes, another
    scale; and the oracle's. Gates strong enough that exp(-G) over a chunk overflows fp32 still
    give finite fp32 results near the oracle."""
    cases = [(T, S0, ST, {}) for T in (1, 7, 16, 64, 70, 130) for S0, ST in ((True, True), (False, False))]
    cases += [(70, True, False, {}), (9, False, True, {}), (30, True, True, {"chunk_size": 12, "sub_chunk": 4}),
              (70, True, True, {"chunk_size": 32, "sub_chunk": 32}), (70, True, True, {"scale": 0.3})]
    for m in MEMBERS:
        worst, where = 0.0, None
        for T, S0, want_ST, kw in cases:
            x = inputs(m, 2, T, 2, 5, 4, seed=100 + T, S0=S0)
            gen = torch.Generator().manual_seed(T)
            dO = torch.randn(2, T, 2, 4, generator=gen, dtype=torch.float64)
            dST = torch.randn(2, 2, 5, 4, generator=gen, dtype=torch.float64) if want_ST else None
            rk = {n: v for n, v in kw.items() if n == "scale"}
            ref = grads_of(kg.recurrent, m, x, dO, dST, **rk)
            got = grads_of(kg.chunked, m, x, dO, dST, **kw)
            if sorted(n for n in got if got[n] is not None) != sorted(n for n in ref if ref[n] is not None):
                check(False, "reference.chunked %s T=%d %s: the results and gradients recurrent has" % (m, T, kw))
                continue
            for n in ref:
                if ref[n] is not None:
                    e = rel_rms(got[n], ref[n])
                    if not e <= worst:
                        worst, where = e, "%s T=%d S0=%s ST=%s%s" % (n, T, S0, want_ST, " %s" % kw if kw else "")
        check(worst <= 1e-10, "reference.chunked %s vs recurrent (fp64, %d cases of T, states, chunk sizes): "
              "worst relative RMS %.1e (%s)" % (m, len(cases), worst, where))
        shape = (2, 130, 2, 16, 8)
        for what, dtype, gscale, bar in (("fp64", torch.float64, 1, 1e-10), ("fp32, g x 8", torch.float32, 8, 2e-5)):
            x = inputs(m, *shape, seed=21)
            if x["g"] is not None:
                x["g"] = x["g"] * gscale  # down to -8 a step: exp(-G) over a chunk is ~exp(250)
            gen = torch.Generator().manual_seed(6)
            dO = torch.randn(2, 130, 2, 8, generator=gen, dtype=torch.float64)
            dST = torch.randn(2, 2, 16, 8, generator=gen, dtype=torch.float64)
            ref = kg.oracle(m, x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["initial_state"],
                            dO=dO, dST=dST)
            xd = {n: (t.to(dtype) if t is not None else None) for n, t in x.items()}
            got = grads_of(kg.chunked, m, xd, dO.to(dtype), dST.to(dtype))
            errs = {n: rel_rms(got[n], ref[n]) for n in got if got[n] is not None}
            w = max(errs, key=errs.get)
            check(errs[w] <= bar, "reference.chunked %s %s B,T,H,K,V=%s vs oracle: worst relative RMS %.1e (%s) <= %g"
                  % (m, what, shape, errs[w], w, bar))
    x = inputs("gdn", 2, 0, 2, 5, 4)
    o, ST = kg.chunked("gdn", x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["initial_state"],
                       output_final_state=True)
    check(o.shape == (2, 0, 2, 4) and torch.equal(ST, x["initial_state"]), "reference.chunked T=0: empty o, ST = S0")
    check(raises(ValueError, "multiple of sub_chunk", kg.chunked, "kda", x["q"], x["k"], x["v"], x["g"], x["beta"],
                 chunk_size=20, sub_chunk=16), "reference.chunked chunk_size 20, sub_chunk 16: ValueError")


def cpu_fla_options():
    B, T, H, K, V = 2, 20, 2, 4, 3
    x = inputs("gdn", B, T, H, K, V, seed=1)
    q, k, v, g, b = (x[n] for n in ("q", "k", "v", "g", "beta"))
    qn, kn = (t / torch.sqrt((t * t).sum(-1, keepdim=True) + 1e-6) for t in (q, k))
    o1, _ = kg.chunk_gated_delta_rule(q, k, v, g, b, use_qk_l2norm_in_kernel=True)
    o2, _ = kg.chunk_gated_delta_rule(qn, kn, v, g, b)
    check(rel_rms(o1, o2) < 1e-14, "use_qk_l2norm_in_kernel=True is the call on l2-normalised q, k")
    gam = (-torch.rand(H, dtype=torch.float64)).requires_grad_(True)
    o1, _ = kg.chunk_simple_gla(q, k, v, g_gamma=gam)
    o1.sum().backward()
    ge = gam.detach().view(1, 1, H).expand(B, T, H).contiguous().requires_grad_(True)
    o2, _ = kg.chunk_simple_gla(q, k, v, g=ge)
    o2.sum().backward()
    check(rel_rms(o1, o2) == 0 and rel_rms(gam.grad, ge.grad.sum((0, 1))) < 1e-14,
          "chunk_simple_gla g_gamma [H] = g broadcast to [B,T,H]; its gradient is the sum")
    o1, _ = kg.chunk_simple_gla(q, k, v)
    o2, _ = kg.chunk_linear_attn(q, k, v, normalize=False)
    check(rel_rms(o1, o2) == 0, "chunk_simple_gla without a gate is linear attention")
    o1, _ = kg.chunk_linear_attn(q, k, v)  # FLA's default normalize=True
    o2, _ = kg.recurrent("linear", q, k, v)
    z = (q * K ** -0.5 * k.cumsum(1)).sum(-1, keepdim=True) + 1e-10
    check(rel_rms(o1, o2 / z) < 1e-12, "chunk_linear_attn normalize=True divides by (scale q_t).sum_{s<=t} k_s")
    o1, ST1 = kg.chunk_gla(q, k, v, x["g"].unsqueeze(-1).expand(B, T, H, K).contiguous(), scale=0.3,
                           output_final_state=True)
    o2, ST2 = kg.recurrent("gla", q, k, v, x["g"].unsqueeze(-1).expand(B, T, H, K), scale=0.3,
                           output_final_state=True)
    check(rel_rms(o1, o2) < 1e-12 and rel_rms(ST1, ST2) < 1e-12, "scale= is passed through (0.3)")
    o, ST = kg.chunk_gla(q, k, v, x["g"].unsqueeze(-1).expand(B, T, H, K).contiguous())
    check(ST is None and o.shape == (B, T, H, V), "output_final_state=False returns (o, None), o [B,T,H,V]")


def cpu_refusals():
    x = inputs("gdn", 2, 10, 2, 4, 3, seed=2)
    q, k, v, g, b = (x[n] for n in ("q", "k", "v", "g", "beta"))
    f = kg.chunk_gated_delta_rule
    check(raises(ValueError, "q is not contiguous", f, q.transpose(1, 2).contiguous().transpose(1, 2), k, v, g, b),
          "non-contiguous q: ValueError naming q, no silent copy")
    check(raises(ValueError, "k has shape", f, q, k[:, :, :1].contiguous(), v, g, b), "k of another shape: ValueError")
    check(raises(ValueError, "g has shape (2, 10, 2, 4), expected (2, 10, 2)", f, q, k, v,
                 g.unsqueeze(-1).expand(2, 10, 2, 4).contiguous(), b), "a per-channel g for GDN: ValueError with shapes")
    check(raises(ValueError, "grouped-value", f, q, k, torch.zeros(2, 10, 4, 3, dtype=torch.float64), g, b),
          "v with other heads (GVA): ValueError")
    check(raises(ValueError, "4-D", f, q[0], k[0], v[0], g[0], b[0]), "3-D inputs (no batch): ValueError")
    check(raises(TypeError, "float32 or float64", f, q.half(), k.half(), v.half(), g.half(), b.half()),
          "float16 on the CPU: TypeError")
    check(raises(TypeError, "k is torch.float32, q torch.float64", f, q, k.float(), v, g, b),
          "mixed dtypes on the CPU: TypeError naming both")
    check(raises(TypeError, "beta is torch.float32", f, q, k, v, g, b.float()), "beta in another dtype: TypeError")
    check(raises(ValueError, "initial_state has shape", f, q, k, v, g, b, initial_state=torch.zeros(2, 2, 3, 4,
          dtype=torch.float64)), "initial_state [B,H,V,K] (transposed): ValueError")
    check(raises(NotImplementedError, "cu_seqlens", f, q, k, v, g, b, cu_seqlens=torch.tensor([0, 5, 10])),
          "cu_seqlens (varlen): NotImplementedError")
    check(raises(NotImplementedError, "head_first", f, q, k, v, g, b, head_first=True),
          "head_first=True: NotImplementedError")
    check(raises(TypeError, "unexpected keyword argument 'betta'", f, q, k, v, g, b, betta=1),
          "an unknown keyword: TypeError")
    check(raises(NotImplementedError, "use_gate_in_kernel", kg.chunk_kda, q, k, v,
                 g.unsqueeze(-1).expand(2, 10, 2, 4).contiguous(), b, use_gate_in_kernel=True),
          "chunk_kda use_gate_in_kernel=True: NotImplementedError")
    check(raises(ValueError, "not both", kg.chunk_simple_gla, q, k, v, g, g_gamma=g[0, 0]),
          "chunk_simple_gla with g and g_gamma: ValueError")
    check(raises(ValueError, "beta is required", f, q, k, v, g, None), "GDN without beta: ValueError")
    check(raises(NotImplementedError, "initial_state", kg.chunk_linear_attn, q, k, v, initial_state=x["initial_state"]),
          "chunk_linear_attn normalize=True with an initial state: NotImplementedError")


def cpu_main():
    cpu_gradcheck()
    cpu_oracle()
    cpu_reference()
    cpu_chunked()
    cpu_fla_options()
    cpu_refusals()


# ---- CUDA -----------------------------------------------------------------------------------


def cuda_main():
    if not torch.cuda.is_available():
        print("SKIP: PyTorch sees no CUDA GPU")
        return 77
    if torch.cuda.get_device_capability() != (9, 0):
        print("SKIP: libgdn is built for sm_90a only; this GPU is sm_%d%d" % torch.cuda.get_device_capability())
        return 77
    try:
        from kgate_gdn import _lib

        _lib.cuda()
    except RuntimeError as e:
        print("SKIP: %s" % e)
        return 77
    dev = "cuda"
    # each member through both kernel sets: the sequential ones (K = 32, V = 48 take only them) and
    # the chunk-parallel ones, the default where they take the call (K = 256: only they do)
    for m in MEMBERS:
        shapes = [("seq", (2, 200, 2, 64, 64)), ("seq", (1, 77, 3, 32, 48)), ("auto", (2, 200, 2, 64, 64)),
                  ("auto", (1, 77, 3, 32, 48)), ("auto", (1, 130, 2, 128, 128))]
        if m not in ("gla", "kda"):  # their chunk-parallel kernels take K <= 128
            shapes.append(("chunk", (1, 70, 1, 256, 64)))
        for mode, shape in shapes:
            B, T, H, K, V = shape
            kg.set_kernels(mode)
            for dtype, bar in ((torch.bfloat16, 0.0033), (torch.float32, None)):
                if mode == "chunk" and m == "ssd" and dtype == torch.float32:
                    continue  # no fp32 SSD backward for K = 256: the chunk-parallel one is bf16 only
                dims = kg.ops._lib.Dims(*shape)
                path = kg.kernels(m, dims, dtype)
                want = ("seq", "seq") if mode == "seq" or K == 32 else \
                    ("chunk", "seq" if (m == "ssd" and dtype == torch.float32) else "chunk")
                check(path == want, "cuda %s %s %s B,T,H,K,V=%s: kernels %s (expected %s)" % (
                    m, str(dtype).replace("torch.", ""), mode, shape, path, want))
                x = inputs(m, *shape, dtype=dtype, device=dev, seed=31)
                gen = torch.Generator().manual_seed(7)
                dO = torch.randn(B, T, H, V, generator=gen, dtype=torch.float64).to(dev, dtype)
                dST = torch.randn(B, H, K, V, generator=gen, dtype=torch.float64).to(dev, torch.float32)
                got, ref = against_oracle(m, x, dO, dST)  # the oracle sees the rounded inputs, in fp64
                errs = {n: rel_rms(got[n], ref[n]) for n in got}
                worst = max(errs, key=errs.get)
                if bar is None:  # fp32: the chunked fp32 algorithm's own error sets the floor (gdn/README.md)
                    xc = {n: (t.cpu() if t is not None else None) for n, t in x.items()}
                    host = run(m, xc, dO.cpu(), dST.cpu())
                    bar = max(1e-5, 3 * max(rel_rms(host[n], ref[n]) for n in host))
                what = "cuda %s %s %s B,T,H,K,V=%s vs oracle: worst relative RMS %.2e (%s) <= %.2g" % (
                    m, str(dtype).replace("torch.", ""), path[0], shape, errs[worst], worst, bar)
                check(errs[worst] <= bar, what)
                if shape[1] == 200 and dtype == torch.bfloat16:
                    again = run(m, x, dO, dST)
                    check(all(torch.equal(got[n], again[n]) for n in got),
                          "cuda %s bf16 %s: two runs bitwise equal" % (m, path[0]))
                    s = torch.cuda.Stream()
                    with torch.cuda.stream(s):
                        other = run(m, x, dO, dST)
                    torch.cuda.current_stream().wait_stream(s)
                    check(all(torch.equal(got[n], other[n]) for n in got),
                          "cuda %s bf16 %s: on a side stream (torch.cuda.stream) the same bits" % (m, path[0]))
    kg.set_kernels("auto")
    x = inputs("gdn", 2, 10, 2, 4, 3, dtype=torch.bfloat16, device=dev)
    q, k, v, g, b = (x[n] for n in ("q", "k", "v", "g", "beta"))
    f = kg.chunk_gated_delta_rule
    check(raises(TypeError, "g is torch.bfloat16", f, q, k, v, g.bfloat16(), b), "cuda: bf16 g refused (fp32 gates)")
    check(raises(TypeError, "float32 or bfloat16", f, q.half(), k.half(), v.half(), g, b.half()), "cuda: fp16 refused")
    check(raises(ValueError, "every tensor must be on one device", f, q, k, v, g.cpu(), b), "cuda: g on the CPU refused")
    big = torch.zeros(1, 4, 1, 129, dtype=torch.bfloat16, device=dev)
    check(raises(ValueError, "K=129", f, big, big, torch.zeros(1, 4, 1, 8, dtype=torch.bfloat16, device=dev),
                 torch.zeros(1, 4, 1, device=dev), torch.zeros(1, 4, 1, dtype=torch.bfloat16, device=dev)),
          "cuda: K = 129 refused before any launch")
    x = inputs("gdn", 1, 10, 1, 32, 32, dtype=torch.bfloat16, device=dev)
    q, k, v, g, b = (x[n] for n in ("q", "k", "v", "g", "beta"))
    kg.set_kernels("chunk")
    check(raises(ValueError, "chunk-parallel kernels take", f, q, k, v, g, b),
          "cuda: K = 32 refused under set_kernels('chunk') (the chunk-parallel kernels take 64, 128, 256)")
    kg.set_kernels("auto")
    check(raises(ValueError, "not one of", kg.set_kernels, "fast"), "set_kernels('fast') refused")
    x = inputs("ssd", 1, 70, 1, 256, 64, dtype=torch.float32, device=dev)
    leaves = [x[n].requires_grad_(True) for n in ("q", "k", "v")]
    o, _ = kg.chunk_simple_gla(*leaves, x["g"])
    check(raises(NotImplementedError, "no backward", o.sum().backward),
          "cuda: fp32 SSD at K = 256 runs forward, refuses the backward (neither kernel set has it)")
    cuda_chunked()
    return 0


def cuda_chunked():
    """train.py's reference on the GPU as train.py runs it (fp32, deterministic algorithms on):
    every op it uses is allowed there, and its outputs and gradients are the oracle's."""
    torch.use_deterministic_algorithms(True)
    try:
        for m in MEMBERS:
            shape = (2, 200, 2, 64, 64)
            x = inputs(m, *shape, dtype=torch.float32, device="cuda", seed=41)
            gen = torch.Generator().manual_seed(8)
            dO = torch.randn(2, 200, 2, 64, generator=gen, dtype=torch.float64)
            dST = torch.randn(2, 2, 64, 64, generator=gen, dtype=torch.float64)
            ref = kg.oracle(m, x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["initial_state"],
                            dO=dO, dST=dST)
            try:
                got = grads_of(kg.chunked, m, x, dO.float().cuda(), dST.float().cuda())
            except RuntimeError as e:
                check(False, "cuda reference.chunked %s under use_deterministic_algorithms: %s" % (m, e))
                continue
            errs = {n: rel_rms(got[n], ref[n]) for n in got if got[n] is not None}
            w = max(errs, key=errs.get)
            check(errs[w] <= 2e-5, "cuda reference.chunked %s fp32 B,T,H,K,V=%s vs oracle: worst relative RMS %.1e "
                  "(%s) <= 2e-05" % (m, shape, errs[w], w))
    finally:
        torch.use_deterministic_algorithms(False)


if __name__ == "__main__":
    torch.set_num_threads(1)
    if "--cuda" in sys.argv[1:]:
        rc = cuda_main()
        if rc == 77:
            sys.exit(77)
    else:
        cpu_main()
    print("%d failed" % fails)
    sys.exit(1 if fails else 0)
