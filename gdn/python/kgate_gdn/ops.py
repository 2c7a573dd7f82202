"""ops.py: the five members as torch.autograd.Functions over libgdn, behind flash-linear-attention's
calls (argument names, [B, T, H, D] layout, return values (o, final_state)).

CUDA tensors go to libgdn.so (fp32 or bf16 q, k, v, beta; fp32 g and states) on PyTorch's current
stream of the tensors' device: its chunk-parallel kernels (gdn_cuda_fwd_tc, gdn_cuda_bwd_tc) where
they take the call, else the sequential ones (gdn_cuda_fwd, gdn_cuda_bwd); KGATE_GDN_KERNELS or
set_kernels() picks otherwise (kernels()). CPU tensors go to libgdn_host.so's chunked algorithm
(float32 or float64 throughout, chunk 64 as the kernels). libgdn's layout is FLA's, so tensors are passed by
data pointer as they are: nothing is transposed or copied. An input that does not fit (dtype,
device, shape, strides) is refused with a message naming it; nothing is cast or made contiguous
behind the caller's back.
"""

import ctypes
import os

import torch

from . import _lib

# name -> (enum gdn_family, gate: None / "head" / "channel", delta)
MEMBERS = {
    "linear": (_lib.LINEAR, None, False),
    "gla": (_lib.GLA, "channel", False),
    "ssd": (_lib.SSD, "head", False),
    "gdn": (_lib.GDN, "head", True),
    "kda": (_lib.KDA, "channel", True),
}


def _ptr(t):
    return None if t is None or t.numel() == 0 else t.data_ptr()


def _in(q, k, v, g, b, S0):
    return _lib.In(_ptr(q), _ptr(k), _ptr(v), _ptr(g), _ptr(b), _ptr(S0))


# ---- which CUDA kernels ----------------------------------------------------------------------

KERNELS = ("auto", "chunk", "seq")
_kernels = [os.environ.get("KGATE_GDN_KERNELS", "auto")]


def set_kernels(mode):
    """The CUDA kernels every later call takes: "auto" (the default; KGATE_GDN_KERNELS sets another)
    the chunk-parallel ones (gdn_cuda_fwd_tc / gdn_cuda_bwd_tc) where they take the call, else the
    sequential ones; "chunk" only the chunk-parallel ones (a call they do not take is refused);
    "seq" only the sequential ones. Returns the mode before."""
    if mode not in KERNELS:
        raise ValueError("kgate_gdn.set_kernels: %r is not one of %s" % (mode, ", ".join(KERNELS)))
    before, _kernels[0] = _kernels[0], mode
    return before


def _mode(fn):
    if _kernels[0] not in KERNELS:
        _fail(fn, "KGATE_GDN_KERNELS=%s is not one of %s" % (_kernels[0], ", ".join(KERNELS)))
    return _kernels[0]


def _aligned(ts, n):
    return all(t is None or t.numel() == 0 or t.data_ptr() % n == 0 for t in ts)


def kernels(member, dims, dtype, tensors=()):
    """("chunk" or "seq" for the forward, the same for the backward) on CUDA for this call under
    the current mode, or the reason neither takes it (a str). The chunk-parallel kernels take
    K, V in {64, 128, 256} (GLA, KDA: K <= 128) and bf16 q, k, v on 16-byte boundaries; their SSD
    backward is bf16 only (an fp32 SSD call runs the chunk-parallel forward, the sequential
    backward); the sequential ones take 1 <= K, V <= 128."""
    lib, fam = _lib.cuda(), MEMBERS[member][0]
    dt = _lib.DTYPE_BF16 if dtype == torch.bfloat16 else _lib.DTYPE_F32
    mode = _kernels[0]
    seq = lib.gdn_cuda_supported(fam, ctypes.byref(dims)) == 0
    chunk_fwd = mode != "seq" and lib.gdn_cuda_fwd_tc_supported(fam, ctypes.byref(dims)) == 0 and \
        _aligned(tensors, 16 if dt == _lib.DTYPE_BF16 else 4)
    chunk_bwd = chunk_fwd and lib.gdn_cuda_bwd_tc_supported(fam, dt, ctypes.byref(dims)) == 0
    if mode == "chunk":
        if not chunk_fwd:
            return "the chunk-parallel kernels take K, V in {64, 128, 256} (GLA, KDA: K <= 128) and bf16 q, k, v " \
                "on 16-byte boundaries (KGATE_GDN_KERNELS=chunk)"
        if not chunk_bwd:
            return "the chunk-parallel backward of %s takes bf16 only (KGATE_GDN_KERNELS=chunk)" % member
        return "chunk", "chunk"
    if not chunk_fwd and not seq:
        return "libgdn's kernels take 1 <= K, V <= 128 (sequential) or K, V in {64, 128, 256} (chunk-parallel), " \
            "B * H <= 65535"
    fwd = "chunk" if chunk_fwd else "seq"
    bwd = "chunk" if chunk_bwd else "seq" if seq else None  # None: a forward without a backward
    return fwd, bwd


# ---- validation ------------------------------------------------------------------------------


def _fail(fn, msg, exc=ValueError):
    raise exc("kgate_gdn.%s: %s" % (fn, msg))


def validate(fn, member, q, k, v, g, beta, S0):
    """Checks every tensor against what libgdn takes; returns the dims and, on CUDA, the kernels
    (kernels()). Raises TypeError (dtype) or ValueError (device, shape, strides) naming the tensor
    and what to do."""
    _, gate, delta = MEMBERS[member]
    named = [("q", q), ("k", k), ("v", v)]
    if gate is not None:
        if g is None:
            _fail(fn, "g is required for this member")
        named.append(("g", g))
    if delta:
        if beta is None:
            _fail(fn, "beta is required for this member")
        named.append(("beta", beta))
    if S0 is not None:
        named.append(("initial_state", S0))
    for name, t in named:
        if not isinstance(t, torch.Tensor):
            _fail(fn, "%s must be a torch.Tensor, not %s" % (name, type(t).__name__), TypeError)
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        _fail(fn, "q, k, v must be 4-D [B, T, H, K] / [B, T, H, V] (got %s, %s, %s)" % (
            tuple(q.shape), tuple(k.shape), tuple(v.shape)))
    B, T, H, K = q.shape
    V = v.shape[3]
    if tuple(k.shape) != (B, T, H, K):
        _fail(fn, "k has shape %s, q %s: they must be equal [B, T, H, K]" % (tuple(k.shape), tuple(q.shape)))
    if tuple(v.shape[:3]) != (B, T, H):
        _fail(fn, "v has shape %s: its B, T, H must be q's %s (libgdn has no grouped-value heads)" % (
            tuple(v.shape), (B, T, H)))
    want = {"g": (B, T, H) if gate == "head" else (B, T, H, K), "beta": (B, T, H), "initial_state": (B, H, K, V)}
    for name, t in named[3:]:
        if tuple(t.shape) != want[name]:
            _fail(fn, "%s has shape %s, expected %s" % (name, tuple(t.shape), want[name]))
    dev = q.device
    for name, t in named:
        if t.device != dev:
            _fail(fn, "%s is on %s, q on %s: every tensor must be on one device" % (name, t.device, dev))
    if dev.type not in ("cpu", "cuda"):
        _fail(fn, "device %s: libgdn runs on CUDA (sm_90) or the CPU" % dev)
    for name, t in named:
        if not t.is_contiguous():
            _fail(fn, "%s is not contiguous (shape %s, strides %s): libgdn reads row-major [B, T, H, D]; "
                  "pass %s.contiguous() (kgate_gdn never copies silently)" % (name, tuple(t.shape), t.stride(), name))
    dt = q.dtype
    if dev.type == "cuda":
        if dt not in (torch.float32, torch.bfloat16):
            _fail(fn, "q is %s: libgdn's kernels take float32 or bfloat16 on CUDA" % dt, TypeError)
        same = [("k", k), ("v", v)] + ([("beta", beta)] if delta else [])
        fp32 = ([("g", g)] if gate else []) + ([("initial_state", S0)] if S0 is not None else [])
        for name, t in same:
            if t.dtype != dt:
                _fail(fn, "%s is %s, q %s: q, k, v%s share one dtype" % (
                    name, t.dtype, dt, ", beta" if delta else ""), TypeError)
        for name, t in fp32:
            if t.dtype != torch.float32:
                _fail(fn, "%s is %s: libgdn takes %s in float32 on CUDA; pass %s.float() (exact for bf16)" % (
                    name, t.dtype, name, name), TypeError)
    else:
        if dt not in (torch.float32, torch.float64):
            _fail(fn, "q is %s: the CPU path (the host chunked algorithm) takes float32 or float64" % dt, TypeError)
        for name, t in named:
            if t.dtype != dt:
                _fail(fn, "%s is %s, q %s: on the CPU every tensor has q's dtype" % (name, t.dtype, dt), TypeError)
    dims = _lib.Dims(B, T, H, K, V)
    path = None
    if dev.type == "cuda":
        _mode(fn)
        path = kernels(member, dims, dt, [q, k, v])
        if isinstance(path, str):
            _fail(fn, "B=%d T=%d H=%d K=%d V=%d: not supported: %s" % (B, T, H, K, V, path))
    return dims, path


# ---- the calls into libgdn -------------------------------------------------------------------


def _stream(t):
    return ctypes.c_void_p(torch.cuda.current_stream(t.device).cuda_stream)


def _workspace(nbytes, device):
    """Device scratch of nbytes (None when 0), from PyTorch's allocator (256-byte aligned)."""
    return torch.empty(nbytes, dtype=torch.uint8, device=device) if nbytes else None


def forward(member, dims, q, k, v, g, beta, S0, scale, want_state, path="seq"):
    """path: "chunk" (gdn_cuda_fwd_tc) or "seq" (gdn_cuda_fwd) on CUDA."""
    fam = MEMBERS[member][0]
    B, H, K, V = dims.B, dims.H, dims.K, dims.V
    o = torch.empty_like(v)
    inp = _in(q, k, v, g, beta, S0)
    if q.is_cuda:
        ST = torch.empty(B, H, K, V, dtype=torch.float32, device=q.device) if want_state else None
        dt = _lib.DTYPE_BF16 if q.dtype == torch.bfloat16 else _lib.DTYPE_F32
        lib = _lib.cuda()
        with torch.cuda.device(q.device):
            if path == "chunk":
                n = lib.gdn_cuda_fwd_tc_workspace(fam, dt, ctypes.byref(dims))
                ws = _workspace(n, q.device)
                rc = lib.gdn_cuda_fwd_tc(fam, dt, ctypes.byref(dims), _lib.nan_or(scale), ctypes.byref(inp),
                                         _ptr(o), _ptr(ST), _ptr(ws), n, _stream(q))
            else:
                rc = lib.gdn_cuda_fwd(fam, dt, ctypes.byref(dims), _lib.nan_or(scale), ctypes.byref(inp),
                                      _ptr(o), _ptr(ST), _stream(q))
        _lib.check_cuda(rc, "gdn_cuda_fwd_tc" if path == "chunk" else "gdn_cuda_fwd")
    else:
        ST = q.new_empty(B, H, K, V) if want_state else None
        sfx = "f64" if q.dtype == torch.float64 else "f32"
        rc = getattr(_lib.host(), "gdn_chunk_fwd_" + sfx)(fam, ctypes.byref(dims), _lib.CHUNK, _lib.nan_or(scale),
                                                          ctypes.byref(inp), _ptr(o), _ptr(ST))
        _lib.check_host(rc, "gdn_chunk_fwd_" + sfx)
    return o, ST


def backward(member, dims, q, k, v, g, beta, S0, scale, dO, dST, need, path="seq"):
    """need: (dg, db, dS0) wanted; path: "chunk" (gdn_cuda_bwd_tc) or "seq" (gdn_cuda_bwd) on CUDA.
    Returns dq, dk, dv, dg, db, dS0 (None where not wanted)."""
    fam = MEMBERS[member][0]
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    dg = torch.empty_like(g) if need[0] else None
    inp = _in(q, k, v, g, beta, S0)
    if q.is_cuda:
        db = torch.empty(beta.shape, dtype=torch.float32, device=q.device) if need[1] else None
        dS0 = torch.empty_like(S0) if need[2] else None
        lib = _lib.cuda()
        dt = _lib.DTYPE_BF16 if q.dtype == torch.bfloat16 else _lib.DTYPE_F32
        chunk = path == "chunk"
        with torch.cuda.device(q.device):
            if chunk:
                ws_bytes = lib.gdn_cuda_bwd_tc_workspace(fam, dt, ctypes.byref(dims))
            else:
                ws_bytes = lib.gdn_cuda_bwd_workspace(fam, ctypes.byref(dims))
            ws = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device=q.device)
            out = _lib.Grad(_ptr(dq), _ptr(dk), _ptr(dv), _ptr(dg), _ptr(db), _ptr(dS0))
            call = lib.gdn_cuda_bwd_tc if chunk else lib.gdn_cuda_bwd
            rc = call(fam, dt, ctypes.byref(dims), _lib.nan_or(scale), ctypes.byref(inp), _ptr(dO), _ptr(dST),
                      ctypes.byref(out), _ptr(ws), ws_bytes, _stream(q))
        _lib.check_cuda(rc, "gdn_cuda_bwd_tc" if chunk else "gdn_cuda_bwd")
        if db is not None and db.dtype != beta.dtype:
            db = db.to(beta.dtype)  # libgdn accumulates db in fp32; autograd wants beta's dtype
    else:
        db = torch.empty_like(beta) if need[1] else None
        dS0 = torch.empty_like(S0) if need[2] else None
        out = _lib.Grad(_ptr(dq), _ptr(dk), _ptr(dv), _ptr(dg), _ptr(db), _ptr(dS0))
        sfx = "f64" if q.dtype == torch.float64 else "f32"
        rc = getattr(_lib.host(), "gdn_chunk_bwd_" + sfx)(fam, ctypes.byref(dims), _lib.CHUNK, _lib.nan_or(scale),
                                                          ctypes.byref(inp), _ptr(dO), _ptr(dST),
                                                          ctypes.byref(out))
        _lib.check_host(rc, "gdn_chunk_bwd_" + sfx)
    return dq, dk, dv, dg, db, dS0


# ---- one autograd.Function per member --------------------------------------------------------


def _function(member, cls_name):
    _, gate, delta = MEMBERS[member]

    def fwd(ctx, q, k, v, g, beta, initial_state, scale, output_final_state, fn):
        dims, path = validate(fn, member, q, k, v, g if gate else None, beta if delta else None, initial_state)
        g = g if gate else None
        beta = beta if delta else None
        ctx.set_materialize_grads(False)
        o, ST = forward(member, dims, q, k, v, g, beta, initial_state, scale, output_final_state,
                        path[0] if path else "seq")
        ctx.save_for_backward(q, k, v, g, beta, initial_state)
        ctx.dims, ctx.scale = (dims.B, dims.T, dims.H, dims.K, dims.V), scale
        ctx.fn, ctx.bwd_path = fn, path[1] if path else "seq"
        ctx.state_dtype = torch.float32 if q.is_cuda else q.dtype
        if ST is not None:
            return o, ST
        return o, None

    def bwd(ctx, do, dST):
        q, k, v, g, beta, S0 = ctx.saved_tensors
        dims = _lib.Dims(*ctx.dims)
        if do is None:
            do = torch.zeros_like(v)
        # the incoming gradients are autograd's, not the caller's inputs: a contiguous copy of
        # them changes nothing but the strides
        do = do.to(v.dtype).contiguous()
        if dST is not None:
            dST = dST.to(ctx.state_dtype).contiguous()
        if ctx.bwd_path == "chunk" and do.data_ptr() % 16:
            do = do.clone()  # the chunk-parallel backward reads bf16 dO 16 bytes at a time
        need = (g is not None and ctx.needs_input_grad[3], beta is not None and ctx.needs_input_grad[4],
                S0 is not None and ctx.needs_input_grad[5])
        if ctx.bwd_path is None:
            _fail(ctx.fn, "B=%d T=%d H=%d K=%d V=%d: no backward for %s %s here: the chunk-parallel backward of "
                  "SSD takes bf16 only, the sequential one K, V <= 128" % (*ctx.dims, member, q.dtype),
                  NotImplementedError)
        dq, dk, dv, dg, db, dS0 = backward(member, dims, q, k, v, g, beta, S0, ctx.scale, do, dST, need,
                                           ctx.bwd_path)
        return dq, dk, dv, dg, db, dS0, None, None, None

    return type(cls_name, (torch.autograd.Function,), {
        "forward": staticmethod(fwd), "backward": staticmethod(bwd),
        "__doc__": "libgdn's %s: apply(q, k, v, g, beta, initial_state, scale, output_final_state, name)" % member})


LinearAttnFunction = _function("linear", "LinearAttnFunction")
GLAFunction = _function("gla", "GLAFunction")
SimpleGLAFunction = _function("ssd", "SimpleGLAFunction")
GatedDeltaRuleFunction = _function("gdn", "GatedDeltaRuleFunction")
KDAFunction = _function("kda", "KDAFunction")
FUNCTIONS = {"linear": LinearAttnFunction, "gla": GLAFunction, "ssd": SimpleGLAFunction,
             "gdn": GatedDeltaRuleFunction, "kda": KDAFunction}


# ---- flash-linear-attention's entry points ---------------------------------------------------


def _options(fn, kwargs, accepted):
    """FLA options that libgdn does not implement are accepted only at their default; anything
    else is refused, and an unknown name is a TypeError as in any Python call."""
    for name, value in kwargs.items():
        if name not in accepted:
            raise TypeError("kgate_gdn.%s() got an unexpected keyword argument '%s'" % (fn, name))
        if not (value is accepted[name] or (value == accepted[name] and type(value) is type(accepted[name]))):
            raise NotImplementedError("kgate_gdn.%s: %s=%r is not supported (libgdn takes fixed-length sequences "
                                      "in [B, T, H, D] layout; only %s=%r)" % (fn, name, value, name, accepted[name]))


_COMMON = {"cu_seqlens": None, "cu_seqlens_cpu": None, "head_first": False, "chunk_size": 64}


def _l2norm(x):
    """FLA's use_qk_l2norm_in_kernel: x / sqrt(sum(x^2) + 1e-6) over the last dim, in fp32 (fp64
    for fp64 x), back in x's dtype (plain PyTorch ops, so autograd differentiates it)."""
    xf = x if x.dtype == torch.float64 else x.float()
    return (xf * torch.rsqrt((xf * xf).sum(-1, keepdim=True) + 1e-6)).to(x.dtype)


def _run(member, fn, q, k, v, g, beta, scale, initial_state, output_final_state):
    o, ST = FUNCTIONS[member].apply(q, k, v, g, beta, initial_state, scale, bool(output_final_state), fn)
    return o, (ST if output_final_state else None)


def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
                           use_qk_l2norm_in_kernel=False, **kwargs):
    """GDN: S' = exp(g) S; S = S' + beta k (v - S'^T k)^T; o = scale S^T q. q, k [B,T,H,K],
    v [B,T,H,V], g, beta [B,T,H], initial_state [B,H,K,V]. Returns (o, final_state or None)."""
    _options("chunk_gated_delta_rule", kwargs, dict(_COMMON, use_beta_sigmoid_in_kernel=False,
                                                    allow_neg_eigval=False, state_v_first=False))
    if use_qk_l2norm_in_kernel:
        q, k = _l2norm(q), _l2norm(k)
    return _run("gdn", "chunk_gated_delta_rule", q, k, v, g, beta, scale, initial_state, output_final_state)


def chunk_kda(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
              use_qk_l2norm_in_kernel=False, **kwargs):
    """KDA: as GDN with a per-channel gate g [B,T,H,K] (decay first, then the delta correction)."""
    _options("chunk_kda", kwargs, dict(_COMMON, use_gate_in_kernel=False, use_beta_sigmoid_in_kernel=False,
                                       allow_neg_eigval=False, safe_gate=False, lower_bound=None, A_log=None,
                                       dt_bias=None, state_v_first=False, transpose_state_layout=False,
                                       disable_recompute=False, return_intermediate_states=False))
    if use_qk_l2norm_in_kernel:
        q, k = _l2norm(q), _l2norm(k)
    return _run("kda", "chunk_kda", q, k, v, g, beta, scale, initial_state, output_final_state)


def chunk_gla(q, k, v, g, scale=None, initial_state=None, output_final_state=False, **kwargs):
    """GLA: S = Diag(exp(g)) S + k v^T, g [B,T,H,K]; o = scale S^T q."""
    _options("chunk_gla", kwargs, dict(_COMMON))
    return _run("gla", "chunk_gla", q, k, v, g, None, scale, initial_state, output_final_state)


def chunk_simple_gla(q, k, v, g=None, g_gamma=None, scale=None, initial_state=None, output_final_state=False,
                     **kwargs):
    """SSD / simple GLA: S = exp(g) S + k v^T with one gate per head, g [B,T,H]; or g_gamma [H], a
    data-independent decay (broadcast to [B,T,H] by PyTorch ops, so its gradient is the sum);
    neither: linear attention."""
    _options("chunk_simple_gla", kwargs, dict(_COMMON))
    if g is not None and g_gamma is not None:
        _fail("chunk_simple_gla", "give g or g_gamma, not both")
    if g_gamma is not None:
        if not isinstance(g_gamma, torch.Tensor) or g_gamma.dim() != 1 or q.dim() != 4 or \
                g_gamma.shape[0] != q.shape[2]:
            _fail("chunk_simple_gla", "g_gamma must be a 1-D tensor of H = q.shape[2] entries")
        B, T, H = q.shape[:3]
        g = g_gamma.view(1, 1, H).expand(B, T, H).contiguous()
    if g is None:
        return _run("linear", "chunk_simple_gla", q, k, v, None, None, scale, initial_state, output_final_state)
    return _run("ssd", "chunk_simple_gla", q, k, v, g, None, scale, initial_state, output_final_state)


def chunk_linear_attn(q, k, v, scale=None, initial_state=None, output_final_state=False, normalize=True,
                      **kwargs):
    """Linear attention: S = S + k v^T; o = scale S^T q. normalize (FLA's default) divides o by
    (scale q_t) . sum_{s<=t} k_s + 1e-10, in fp32 (fp64 for fp64 inputs) PyTorch ops after the
    kernel."""
    _options("chunk_linear_attn", kwargs, dict(_COMMON))
    o, ST = _run("linear", "chunk_linear_attn", q, k, v, None, None, scale, initial_state, output_final_state)
    if normalize:
        if initial_state is not None:
            raise NotImplementedError("kgate_gdn.chunk_linear_attn: normalize=True with an initial_state needs the "
                                      "key sum of the earlier tokens, which this call does not take; pass "
                                      "normalize=False")
        s = q.shape[-1] ** -0.5 if scale is None else scale
        up = (lambda t: t) if q.dtype == torch.float64 else (lambda t: t.float())
        z = (up(q) * s * up(k).cumsum(1)).sum(-1, keepdim=True) + 1e-10
        o = (up(o) / z).to(o.dtype)
    return o, ST
