"""_lib.py: ctypes over libgdn's two C ABIs, nothing else.

libgdn_host.so (gdn/local.mk, plain C): the host chunked algorithm (gdn/chunk_host.h) and the
fp64 oracle (gdn/oracle.h) on host pointers. libgdn.so (nvcc, sm_90a): the CUDA kernels
(gdn/libgdn.h) on device pointers and a cudaStream_t. Both are found in KGATE_GDN_LIBDIR (a
build tree's gdn/ folder) if set, else in the gdn/ folder this package sits in (an in-tree
build); libtool puts libgdn_host.so in .libs/ there. Loaded on first use; a missing library
is an error that says what to build, never a silent fallback.
"""

import ctypes
import math
import os

# enum gdn_family (gdn/oracle.h)
LINEAR, GLA, SSD, GDN, KDA = range(5)
# enum gdn_arith
EXACT, W32, W64 = range(3)
# enum gdn_dtype (gdn/libgdn.h)
DTYPE_F32, DTYPE_BF16 = 0, 1
CHUNK = 64  # GDN_CHUNK_DEFAULT, the kernels' chunk

_P = ctypes.c_void_p


class Dims(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in ("B", "T", "H", "K", "V")]


class In(ctypes.Structure):  # struct gdn_in, struct gdn_in_f32 and struct gdn_dev_in alike
    _fields_ = [(n, _P) for n in ("q", "k", "v", "g", "b", "S0")]


class Grad(ctypes.Structure):  # struct gdn_grad, gdn_grad_f32 and gdn_dev_grad alike
    _fields_ = [(n, _P) for n in ("dq", "dk", "dv", "dg", "db", "dS0")]


_here = os.path.dirname(os.path.abspath(__file__))
_libs = {}


def _candidates(name):
    dirs = []
    env = os.environ.get("KGATE_GDN_LIBDIR")
    if env:
        dirs.append(env)
    else:
        dirs.append(os.path.normpath(os.path.join(_here, "..", "..")))  # gdn/
    out = []
    for d in dirs:
        out += [os.path.join(d, name), os.path.join(d, ".libs", name)]
    return out


def _load(name, what):
    if name in _libs:
        return _libs[name]
    tried = _candidates(name)
    for path in tried:
        if os.path.exists(path):
            lib = ctypes.CDLL(path)
            _libs[name] = lib
            _declare(name, lib)
            return lib
    raise RuntimeError(
        "kgate_gdn: %s not found (looked for %s); build it with `make` in the kgate build tree "
        "(%s), or set KGATE_GDN_LIBDIR to that build tree's gdn/ folder" % (name, ", ".join(tried), what)
    )


def _declare(name, lib):
    i64, dbl, flt, i32 = ctypes.c_int64, ctypes.c_double, ctypes.c_float, ctypes.c_int
    pd, pi, pg = ctypes.POINTER(Dims), ctypes.POINTER(In), ctypes.POINTER(Grad)
    if name == "libgdn_host.so":
        for sfx, sc in (("f64", dbl), ("f32", flt)):
            f = getattr(lib, "gdn_chunk_fwd_" + sfx)
            f.argtypes, f.restype = [i32, pd, i64, sc, pi, _P, _P], i32
            f = getattr(lib, "gdn_chunk_bwd_" + sfx)
            f.argtypes, f.restype = [i32, pd, i64, sc, pi, _P, _P, pg], i32
        lib.gdn_oracle_fwd.argtypes, lib.gdn_oracle_fwd.restype = [i32, i32, pd, dbl, pi, _P, _P], i32
        lib.gdn_oracle_bwd.argtypes, lib.gdn_oracle_bwd.restype = [i32, i32, pd, dbl, pi, _P, _P, pg], i32
        lib.gdn_strerror.argtypes, lib.gdn_strerror.restype = [i32], ctypes.c_char_p
    else:
        lib.gdn_cuda_supported.argtypes, lib.gdn_cuda_supported.restype = [i32, pd], i32
        lib.gdn_cuda_bwd_workspace.argtypes, lib.gdn_cuda_bwd_workspace.restype = [i32, pd], ctypes.c_size_t
        lib.gdn_cuda_fwd.argtypes = [i32, i32, pd, dbl, pi, _P, _P, _P]
        lib.gdn_cuda_fwd.restype = i32
        lib.gdn_cuda_bwd.argtypes = [i32, i32, pd, dbl, pi, _P, _P, pg, _P, ctypes.c_size_t, _P]
        lib.gdn_cuda_bwd.restype = i32
        # the chunk-parallel kernels (gdn_cuda_*_tc): the default where they support the call
        lib.gdn_cuda_fwd_tc_supported.argtypes, lib.gdn_cuda_fwd_tc_supported.restype = [i32, pd], i32
        lib.gdn_cuda_fwd_tc_workspace.argtypes = [i32, i32, pd]
        lib.gdn_cuda_fwd_tc_workspace.restype = ctypes.c_size_t
        lib.gdn_cuda_fwd_tc.argtypes = [i32, i32, pd, dbl, pi, _P, _P, _P, ctypes.c_size_t, _P]
        lib.gdn_cuda_fwd_tc.restype = i32
        lib.gdn_cuda_bwd_tc_supported.argtypes, lib.gdn_cuda_bwd_tc_supported.restype = [i32, i32, pd], i32
        lib.gdn_cuda_bwd_tc_workspace.argtypes = [i32, i32, pd]
        lib.gdn_cuda_bwd_tc_workspace.restype = ctypes.c_size_t
        lib.gdn_cuda_bwd_tc.argtypes = [i32, i32, pd, dbl, pi, _P, _P, pg, _P, ctypes.c_size_t, _P]
        lib.gdn_cuda_bwd_tc.restype = i32
        lib.gdn_cuda_strerror.argtypes, lib.gdn_cuda_strerror.restype = [i32], ctypes.c_char_p
        lib.gdn_cuda_last_error.argtypes, lib.gdn_cuda_last_error.restype = [], ctypes.c_char_p


def host():
    return _load("libgdn_host.so", "plain C, no nvcc needed")


def cuda():
    return _load("libgdn.so", "configure must find nvcc; the kernels are sm_90a (H100/H200) only")


def nan_or(scale):
    """The scale argument of every entry point: NAN means 1/sqrt(K), computed in C."""
    return math.nan if scale is None else float(scale)


def check_host(rc, call):
    if rc != 0:
        raise RuntimeError("kgate_gdn: %s failed: %s (%d)" % (call, host().gdn_strerror(rc).decode(), rc))


def check_cuda(rc, call):
    if rc != 0:
        lib = cuda()
        detail = lib.gdn_cuda_last_error().decode()
        raise RuntimeError(
            "kgate_gdn: %s failed: %s (%d)%s"
            % (call, lib.gdn_cuda_strerror(rc).decode(), rc, (": " + detail) if detail else "")
        )
