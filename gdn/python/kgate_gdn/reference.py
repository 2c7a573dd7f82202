"""reference.py: what the libgdn calls are checked against, and what train.py trains through.

recurrent(): the recurrence of gdn/oracle.h written in plain PyTorch, one time step at a time,
vectorised over batch and heads, differentiated by autograd (the tests check it against the
oracle). chunked(): the same recurrences in the chunk-parallel form (causal products inside a
chunk with decay ratios, the state carried across chunks, the delta members through the WY/UT
representation and a unit-lower-triangular solve), plain PyTorch and autograd too; the tests
check it against recurrent() and the oracle, and train.py's reference runs use it because it
makes T / 64 sequential steps instead of T. oracle(): the fp64 oracle of libgdn_host.so
(GDN_EXACT, Neumaier dot products; forward and analytic backward) on CPU float64 copies of the
inputs.
"""

import ctypes

import torch
import torch.nn.functional as F

from . import _lib
from .ops import MEMBERS


def recurrent(member, q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False):
    """The member's recurrence in the inputs' dtype ([B,T,H,D] layout as the chunk_* calls):
    S' = Diag(exp(g_t)) S;  non-delta S = S' + k v^T;  delta S = S' + beta k (v - S'^T k)^T;
    o_t = scale S^T q_t. Returns (o, final_state or None)."""
    _, gate, delta = MEMBERS[member]
    B, T, H, K = q.shape
    V = v.shape[-1]
    s = K ** -0.5 if scale is None else scale
    # time-major copies, so that each step reads contiguous [B, H, D] slices
    qt = (q * s).permute(1, 0, 2, 3).contiguous()
    kt = k.permute(1, 0, 2, 3).contiguous()
    vt = v.permute(1, 0, 2, 3).contiguous()
    at = None
    if gate is not None:
        a = g.exp()
        at = (a.unsqueeze(-1) if gate == "head" else a).permute(1, 0, 2, 3).contiguous()  # [T,B,H,K|1]
        at = at.unsqueeze(-1)  # [T,B,H,K|1,1]
    bt = beta.permute(1, 0, 2).unsqueeze(-1).contiguous() if delta else None  # [T,B,H,1]
    S = initial_state if initial_state is not None else q.new_zeros(B, H, K, V)
    outs = []
    for t in range(T):
        if at is not None:
            S = S * at[t]
        kk = kt[t].unsqueeze(-1)  # [B,H,K,1]
        if delta:
            u = (kt[t].unsqueeze(-2) @ S).squeeze(-2)  # S'^T k: [B,H,V]
            w = bt[t] * (vt[t] - u)
            S = torch.addcmul(S, kk, w.unsqueeze(-2))
        else:
            S = torch.addcmul(S, kk, vt[t].unsqueeze(-2))
        outs.append((qt[t].unsqueeze(-2) @ S).squeeze(-2))
    o = torch.stack(outs, 1) if T > 0 else v.new_zeros(B, 0, H, V)
    return o, (S if output_final_state else None)


# ---- chunked(): the chunk-parallel form ------------------------------------------------------
#
# Inside a chunk of C steps with initial state S0, G_t = sum_{s<=t} g_s (per key channel, or per
# head broadcast over K) and D_ts = exp(G_t - G_s) for s <= t (<= 1, never formed for s > t, so no
# exp of a positive number). Unrolled, S_t = Diag(exp G_t) S0 + sum_{s<=t} Diag(D_ts) k_s u_s^T with
# u_s = v_s (non-delta) or u_s = beta_s (v_s - S'_s^T k_s) (delta), hence
#   o_t    = scale (q_t exp G_t)^T S0 + sum_{s<=t} A_ts u_s,    A_ts = scale sum_c q_tc k_sc D_tsc
#   S_C    = Diag(exp G_C) S0 + sum_s (k_s exp(G_C - G_s)) u_s^T
# and for the delta members, with M_ts = sum_c k_tc k_sc D_tsc (s < t) and L = I + diag(beta) M
# (unit lower triangular): L U = diag(beta) (V - (K exp G) S0), i.e. U = L^-1 diag(beta) V -
# L^-1 diag(beta) (K exp G) S0 (the WY/UT form): two solves per chunk, independent of S0.


def _cumsum_tril(C, like):
    """[C, C] lower-triangular ones: tri @ g is the inclusive cumulative sum over a chunk (a matmul,
    not torch.cumsum, whose CUDA kernel torch.use_deterministic_algorithms refuses)."""
    return torch.ones(C, C, dtype=like.dtype, device=like.device).tril()


def _decayed(x, y, G, gate, sub, strict):
    """[..., C, C]: P_ts = sum_c x_tc y_sc exp(G_tc - G_sc) for s <= t (s < t when strict), 0
    above. x, y [..., C, K]; G [..., C, K|1] or None (no gate). A per-channel gate needs the
    decay ratio per channel, [C, C, K]: formed only inside sub-chunks of `sub` steps; between
    sub-chunks the ratio factors through the last step p of the earlier ones,
    exp(G_t - G_s) = exp(G_t - G_p) exp(G_p - G_s) with both factors <= 1."""
    C = x.shape[-2]
    mask = torch.ones(C, C, dtype=torch.bool, device=x.device).tril(-1 if strict else 0)
    if gate != "channel":
        P = x @ y.transpose(-1, -2)
        if gate is None:
            return P.masked_fill(~mask, 0)
        Gh = G[..., 0]
        return P * (Gh.unsqueeze(-1) - Gh.unsqueeze(-2)).masked_fill(~mask, float("-inf")).exp()
    K, nb = x.shape[-1], C // sub
    lead = x.shape[:-2]
    xb, yb, Gb = (t.reshape(*lead, nb, sub, K) for t in (x, y, G))
    m = mask[:sub, :sub].unsqueeze(-1)
    D = (Gb.unsqueeze(-2) - Gb.unsqueeze(-3)).masked_fill(~m, float("-inf")).exp()  # [..., nb, t, s, K]
    diag = ((D * yb.unsqueeze(-3)) @ xb.unsqueeze(-1)).squeeze(-1)  # [..., nb, t, s]
    rows = []
    for i in range(nb):
        a, e = i * sub, (i + 1) * sub
        parts = []
        if i > 0:
            Gp = G[..., a - 1:a, :]
            xi = x[..., a:e, :] * (G[..., a:e, :] - Gp).exp()
            ys = y[..., :a, :] * (Gp - G[..., :a, :]).exp()
            parts.append(xi @ ys.transpose(-1, -2))
        parts.append(diag[..., i, :, :])
        if e < C:
            parts.append(x.new_zeros(*lead, sub, C - e))
        rows.append(torch.cat(parts, -1))
    return torch.cat(rows, -2)


def chunked(member, q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
            chunk_size=64, sub_chunk=16):
    """recurrent()'s recurrences (same arguments, layout and results) in the chunk-parallel form,
    in the inputs' dtype: chunks of chunk_size steps (fewer when T is short; the tail is padded
    with k = v = 0, g = 0, beta = 0, which leaves the state as it is), per-channel gates in
    sub-chunks of sub_chunk steps (a divisor of chunk_size). Returns (o, final_state or None)."""
    _, gate, delta = MEMBERS[member]
    if chunk_size < 1 or sub_chunk < 1 or chunk_size % sub_chunk:
        raise ValueError("kgate_gdn.chunked: chunk_size %d must be a positive multiple of sub_chunk %d" % (
            chunk_size, sub_chunk))
    B, T, H, K = q.shape
    V = v.shape[-1]
    s = K ** -0.5 if scale is None else scale
    S = initial_state if initial_state is not None else q.new_zeros(B, H, K, V)
    if T == 0:
        return v.new_zeros(B, 0, H, V), (S if output_final_state else None)
    C = min(chunk_size, -(-T // sub_chunk) * sub_chunk)
    N = -(-T // C)
    pad = N * C - T

    def blocks(x):  # [B, T, H, *] -> [B, H, N, C, *], the tail padded with zeros
        x = x.transpose(1, 2)
        if pad:
            x = F.pad(x, (0, 0) * (x.dim() - 3) + (0, pad))
        return x.reshape(B, H, N, C, *x.shape[3:])

    qb, kb, vb = blocks(q * s), blocks(k), blocks(v)
    G = None
    if gate is not None:
        G = _cumsum_tril(C, g) @ blocks(g if gate == "channel" else g.unsqueeze(-1))  # [B,H,N,C,K|1]
        GC = G[..., -1:, :]
        qS0 = qb * G.exp()  # q's read of the chunk's initial state
        kST = kb * (GC - G).exp()  # k's write into the chunk's final state
        decay = GC.exp().transpose(-1, -2)  # [B,H,N,K|1,1]: the state's decay over the chunk
    else:
        qS0, kST = qb, kb
    A = _decayed(qb, kb, G, gate, sub_chunk, strict=False)  # [B,H,N,C,C]
    if delta:
        bb = blocks(beta).unsqueeze(-1)  # [B,H,N,C,1]
        L = torch.eye(C, dtype=q.dtype, device=q.device) + bb * _decayed(kb, kb, G, gate, sub_chunk, strict=True)
        kS0 = kb * G.exp() if gate is not None else kb
        X = torch.linalg.solve_triangular(L, torch.cat([bb * vb, bb * kS0], -1), upper=False, unitriangular=True)
        Uv, W = X[..., :V], X[..., V:]  # u = Uv - W S0
    starts, us = [], []
    for n in range(N):  # the only sequential part: N = T / C steps
        starts.append(S)
        if delta:
            u = Uv[:, :, n] - W[:, :, n] @ S
            us.append(u)
        else:
            u = vb[:, :, n]
        S = (S * decay[:, :, n] if gate is not None else S) + kST[:, :, n].transpose(-1, -2) @ u
    U = torch.stack(us, 2) if delta else vb
    o = qS0 @ torch.stack(starts, 2) + A @ U  # [B,H,N,C,V]
    o = o.reshape(B, H, N * C, V)[:, :, :T].transpose(1, 2)
    return o, (S if output_final_state else None)


def _f64(t):
    return None if t is None else t.detach().to("cpu", torch.float64).contiguous()


def oracle(member, q, k, v, g=None, beta=None, scale=None, initial_state=None, dO=None, dST=None,
           arith=_lib.EXACT):
    """The oracle's o, ST and (when dO is given) the gradients of sum(dO * o) + sum(dST * ST), all
    fp64 on the CPU, as a dict: o, ST, dq, dk, dv, dg, db, dS0 (None where the member has none)."""
    fam, gate, delta = MEMBERS[member]
    q, k, v, S0 = _f64(q), _f64(k), _f64(v), _f64(initial_state)
    g = _f64(g) if gate else None
    beta = _f64(beta) if delta else None
    B, T, H, K = q.shape
    V = v.shape[-1]
    dims = _lib.Dims(B, T, H, K, V)
    p = lambda t: None if t is None or t.numel() == 0 else t.data_ptr()  # noqa: E731
    inp = _lib.In(p(q), p(k), p(v), p(g), p(beta), p(S0))
    lib = _lib.host()
    o, ST = torch.empty_like(v), q.new_empty(B, H, K, V)
    _lib.check_host(lib.gdn_oracle_fwd(fam, arith, ctypes.byref(dims), _lib.nan_or(scale), ctypes.byref(inp),
                                       p(o), p(ST)), "gdn_oracle_fwd")
    r = {"o": o, "ST": ST}
    if dO is not None:
        dO, dST = _f64(dO), _f64(dST)
        gr = {"dq": torch.empty_like(q), "dk": torch.empty_like(k), "dv": torch.empty_like(v),
              "dg": torch.empty_like(g) if g is not None else None,
              "db": torch.empty_like(beta) if beta is not None else None,
              "dS0": torch.empty_like(S0) if S0 is not None else None}
        out = _lib.Grad(*(p(gr[n]) for n in ("dq", "dk", "dv", "dg", "db", "dS0")))
        _lib.check_host(lib.gdn_oracle_bwd(fam, arith, ctypes.byref(dims), _lib.nan_or(scale), ctypes.byref(inp),
                                           p(dO), p(dST), ctypes.byref(out)), "gdn_oracle_bwd")
        r.update(gr)
    return r
