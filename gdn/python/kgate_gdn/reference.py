"""reference.py: what the libgdn calls are checked against.

recurrent(): the recurrence of gdn/oracle.h written in plain PyTorch, one time step at a time,
vectorised over batch and heads, differentiated by autograd (train.py's reference runs; the tests
check it against the oracle too). oracle(): the fp64 oracle of libgdn_host.so (GDN_EXACT, Neumaier
dot products; forward and analytic backward) on CPU float64 copies of the inputs.
"""

import ctypes

import torch

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
