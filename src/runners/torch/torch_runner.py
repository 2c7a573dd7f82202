"""torch_runner.py: kgate's worker for KernelBench-format kernels.

kgate starts two of these per pair, each speaking the same protocol as kgate's own workers
(src/worker/proto.h: one fixed-layout request, one reply, over a SOCK_SEQPACKET socket on fd 3;
bulk data in a shared memfd passed with each request). The *oracle* worker (role 0) imports the
problem file: it describes the problem (module constants, inputs, outputs), draws inputs with
get_inputs() and runs the reference Model in float64 (the oracle) or in the problem's dtype
(the working-precision reference). The *candidate* worker (role 1) imports the candidate and
runs ModelNew on the inputs it is sent; it never receives an expected output.

The file's sections, each under a `# ---- ` ruler, in this order:
  protocol       the ctypes mirror of src/worker/proto.h, field for field (tests/proto_layout.sh
                 compares its sizes and offsets with the C compiler's)
  shared memory  the judge's memfd, passed with each request and kept mapped between them
  sandbox        seal(): what the process gives up before any candidate code runs
  loading        LOAD: importing the problem and the candidate; the problem's constants, models
  inputs         DESCRIBE and INPUTS: the problem's description, get_inputs() draws (the judge
                 applies the input distribution to the values drawn)
  oracle modes   ORACLE: the reference in float64, in working precision, with sequential sums
  runs           RUN: ModelNew on the judge's inputs; allocator poisoning and the canary
  standard test  STANDARD: KernelBench's own check, in this process
  sampling       SAMPLE: cases too large to ship, drawn and read back on the device
  profiling      the kernels a call launches (the decoy check, the resources view)
  serving        the request loop: Worker, whose commands are the sections' methods
  zygote         the fork server
  main           the command line: FD, --layout, --zygote NAME
Worker is assembled from one plain class per command section, so that a command's methods sit
with the helpers they use; the state they share is set in Worker.__init__ (serving).
"""

import contextlib
import copy
import ctypes as C
import gc
import hashlib
import importlib.util
import io
import json
import math
import mmap
import os
import random
import re
import select
import signal
import socket
import sys
import threading
import time
import traceback
import types
import warnings


# ---- protocol: the ctypes mirror of src/worker/proto.h -------------------------------------------

MAGIC = 0x6B676174
MAX_ARGS, NAME_MAX, MAX_RANK, MAX_SYMS, OP_MAX_IO, MAX_RECS = 32, 64, 8, 32, 8, 16

# enum kg_cmd
LOAD, RUN, ORACLE, QUIT, DESCRIBE, INPUTS, STANDARD, SAMPLE, RESIDENT = 1, 2, 3, 4, 5, 6, 7, 8, 9
RES_CALIBRATE, RES_JUDGE, RES_FETCH, RES_DROP, RES_CLASSES = 1, 2, 3, 4, 5
# enum kg_wstatus
(OK, REFUSED, COMPILE, ENTRY, LAUNCH, CUDAERR, UNAVAILABLE, BAD_REQUEST, CRASH, TIMEOUT, MISMATCH,
 EXCEPTION, PROGRESS, OOM, INTERRUPTED) = range(15)
# enum kg_argkind, enum kg_io
ARG_TENSOR, ARG_INT, ARG_LONG, ARG_FLOAT, ARG_DOUBLE = range(5)
IO_IN, IO_OUT, IO_INOUT, IO_SCRATCH = range(4)
# run flags
RUN_REUSE, RUN_SIDE_STREAM, RUN_BUSY_DEFAULT, RUN_PAIR, RUN_NO_LAUNCH, RUN_PROFILE, RUN_LENIENT, RUN_CANARY = (
    1, 2, 4, 8, 16, 32, 64, 128)
RUN_NO_TF32, RUN_SYNC_DEVICE, RUN_DIGEST, RUN_DIGEST_ALSO = 256, 512, 1024, 2048
OUT_SHARES_INPUT, OUT_OOB_WRITE, INPUTS_AS_SENT, OUT_LATE_WRITE, INPUTS_KEPT = 1, 2, 4, 8, 16
# enum kg_fill
FILL_SENTINEL_A, FILL_SENTINEL_B, FILL_ZERO, FILL_GARBAGE = range(4)
DESCRIBE_META = 1  # DESCRIBE: the meta device only, or an error
# enum kg_dtype
DTYPES = ["f64", "f32", "f16", "bf16", "i32", "i64", "u8", "bool"]
COMPARE_BLOCK = 1 << 24  # elements a comparison on the worker's GPU takes at once
# ... on the CPU: each block's temporaries (a dozen float64 tensors) stay below glibc's mmap
# threshold and are reused, where 2^24-element ones were fresh mappings faulted in page by page
# (measured on a 2-core VM, 8.4M elements: compare 5.3 s -> 0.33 s, scale_of 1.0 -> 0.03 s)
CPU_COMPARE_BLOCK = 1 << 18


# glibc's largest mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit): a CPU allocation above it
# is a fresh mapping, so a poisoned buffer freed before it poisons nothing (measured with torch
# 1.13: a 40 MB torch.empty after a freed poisoned 81 MB buffer held 0-0.3% poison, 10 MB 99.99%)
CPU_POISON_MAX = 32 << 20


def block_of(t):
    """The elements a comparison of tensor t takes at once (COMPARE_BLOCK, CPU_COMPARE_BLOCK)."""
    return COMPARE_BLOCK if t.is_cuda else CPU_COMPARE_BLOCK
LATE_SAMPLE = 1 << 26  # bytes of an output kept to tell a late write: all of a smaller one, else evenly spaced
CANARY_READ = 64 << 20  # bytes of each free part the canary reads back (a write past an end lands at its start)
SLACK_KEPT = 256 << 20  # bytes of cached, unallocated device memory a worker keeps between calls (give_back_cache)
# the commands whose memory goes back after each: the oracle's, and the candidate's RUN (its caching
# allocator held the peak of the largest case between runs: on the H100 l1_42's kernel worker held
# 22.0 GiB after its last run for 4.29 GB of tensors, and the audit kept other checks waiting for it)
GIVES_BACK = (DESCRIBE, INPUTS, ORACLE, RESIDENT, RUN)


class ReqLoad(C.Structure):
    _fields_ = [("runner", C.c_int32), ("dtype", C.c_int32), ("returns_int", C.c_int32),
                ("oracle", C.c_int32), ("nargs", C.c_int32), ("argkind", C.c_int32 * MAX_ARGS),
                ("path", C.c_char * 1024), ("entry", C.c_char * NAME_MAX), ("cache_dir", C.c_char * 1024),
                ("cc", C.c_char * 256), ("cuda_home", C.c_char * 512), ("aux_path", C.c_char * 1024),
                ("role", C.c_int32), ("flags", C.c_int32), ("mem_limit", C.c_uint64)]


class ReqArg(C.Structure):
    _fields_ = [("kind", C.c_int32), ("alias", C.c_int32), ("io", C.c_int32), ("dtype", C.c_int32),
                ("rank", C.c_int32), ("pad", C.c_int32), ("dims", C.c_int64 * MAX_RANK),
                ("off", C.c_uint64), ("off2", C.c_uint64), ("bytes", C.c_uint64), ("guard", C.c_uint64),
                ("ival", C.c_int64), ("fval", C.c_double), ("tag", C.c_uint64)]


class ReqRun(C.Structure):
    _fields_ = [("flags", C.c_uint32), ("nargs", C.c_int32), ("fill", C.c_int32), ("fill_byte", C.c_int32),
                ("fill_seed", C.c_uint64), ("args", ReqArg * MAX_ARGS), ("grid", C.c_int64 * 3),
                ("block", C.c_int64 * 3), ("smem", C.c_int64), ("shm_size", C.c_uint64),
                ("nsym", C.c_int32), ("pad2", C.c_int32), ("sym_names", (C.c_char * NAME_MAX) * MAX_SYMS),
                ("sym_values", C.c_int64 * MAX_SYMS)]


class ReqTensor(C.Structure):
    _fields_ = [("rank", C.c_int32), ("kind", C.c_int32), ("dtype", C.c_int32), ("data_dtype", C.c_int32),
                ("dims", C.c_int64 * MAX_RANK), ("off", C.c_uint64), ("value", C.c_double)]


class ReqProblem(C.Structure):
    _fields_ = [("nsym", C.c_int32), ("dist", C.c_int32), ("seed", C.c_uint64),
                ("sym_names", (C.c_char * NAME_MAX) * MAX_SYMS), ("sym_values", C.c_int64 * MAX_SYMS),
                ("ntensor", C.c_int32), ("flags", C.c_int32), ("off", C.c_uint64 * MAX_ARGS),
                ("bytes", C.c_uint64 * MAX_ARGS), ("shm_size", C.c_uint64), ("tol", C.c_double)]


class ReqOracle(C.Structure):
    _fields_ = [("working", C.c_int32), ("n_in", C.c_int32), ("n_out", C.c_int32), ("nsym", C.c_int32),
                ("inp", ReqTensor * OP_MAX_IO), ("out", ReqTensor * OP_MAX_IO),
                ("sym_names", (C.c_char * NAME_MAX) * MAX_SYMS), ("sym_values", C.c_int64 * MAX_SYMS),
                ("shm_size", C.c_uint64), ("resident", C.c_uint64), ("resident_set", C.c_int32),
                ("pad3", C.c_int32)]


class ReqUnion(C.Union):
    _fields_ = [("load", ReqLoad), ("run", ReqRun), ("oracle", ReqOracle), ("problem", ReqProblem)]


class Req(C.Structure):
    _fields_ = [("magic", C.c_uint32), ("cmd", C.c_uint32), ("u", ReqUnion)]


class FuncAttrs(C.Structure):
    _fields_ = [(n, C.c_int32) for n in ("valid", "regs", "smem_static", "local_bytes", "max_threads",
                                          "const_bytes", "ptx_version", "binary_version", "tmem_cols")]


class DevInfo(C.Structure):
    _fields_ = ([("valid", C.c_int32), ("name", C.c_char * 128)] +
                [(n, C.c_int32) for n in ("cc_major", "cc_minor", "sm_count", "device_count")] +
                [("max_threads_per_block", C.c_int64), ("max_block", C.c_int64 * 3), ("max_grid", C.c_int64 * 3)] +
                [(n, C.c_int64) for n in ("max_smem_block", "max_smem_optin", "regs_per_block", "regs_per_sm",
                                          "max_threads_per_sm", "smem_per_sm", "max_blocks_per_sm",
                                          "reserved_smem_per_block", "total_mem")])


class LaunchRec(C.Structure):
    _fields_ = [("name", C.c_char * 128), ("grid", C.c_int32 * 3), ("block", C.c_int32 * 3),
                ("regs", C.c_int32), ("smem_static", C.c_int32), ("smem_dynamic", C.c_int32),
                ("local_bytes", C.c_int32), ("seconds", C.c_double), ("start_ns", C.c_uint64),
                ("end_ns", C.c_uint64)]


class Reply(C.Structure):
    _fields_ = [("magic", C.c_uint32), ("status", C.c_int32), ("code", C.c_int32), ("flags", C.c_int32),
                ("seconds", C.c_double), ("compile_seconds", C.c_double), ("compiler", C.c_char * 64),
                ("attrs", FuncAttrs), ("dev", DevInfo), ("nlaunch", C.c_int32), ("cupti_ok", C.c_int32),
                ("launch", LaunchRec * MAX_RECS), ("pair_overlap", C.c_double), ("pair_shorter", C.c_double),
                ("pair_clock", C.c_int32), ("pad2", C.c_int32), ("dev_peak", C.c_uint64), ("dev_held", C.c_uint64),
                ("digest", C.c_uint64 * MAX_ARGS),
                ("prefilled", C.c_int64 * MAX_ARGS), ("msg", C.c_char * 4096)]


def layout():
    """Sizes and offsets, compared with the C compiler's by tests/proto_layout.sh."""
    return {"kg_req": C.sizeof(Req), "kg_reply": C.sizeof(Reply), "kg_req_run": C.sizeof(ReqRun),
            "kg_req_arg": C.sizeof(ReqArg), "kg_req_load": C.sizeof(ReqLoad),
            "kg_req_oracle": C.sizeof(ReqOracle), "kg_req_problem": C.sizeof(ReqProblem),
            "kg_req_tensor": C.sizeof(ReqTensor), "kg_dev_info": C.sizeof(DevInfo),
            "kg_launch_rec": C.sizeof(LaunchRec), "reply.msg": Reply.msg.offset,
            "reply.launch": Reply.launch.offset, "run.sym_values": ReqRun.sym_values.offset,
            "oracle.shm_size": ReqOracle.shm_size.offset, "oracle.resident": ReqOracle.resident.offset,
            "problem.shm_size": ReqProblem.shm_size.offset,
            "reply.pair_overlap": Reply.pair_overlap.offset, "reply.digest": Reply.digest.offset,
            "reply.dev_peak": Reply.dev_peak.offset, "reply.dev_held": Reply.dev_held.offset}


class Refused(Exception):
    """A request this worker cannot serve; carries the reply status."""

    def __init__(self, status, msg):
        super().__init__(msg)
        self.status = status


def text(field):
    return bytes(field).split(b"\0", 1)[0].decode("utf-8", "replace")


def tail(s, n=3500):
    return s if len(s) <= n else "..." + s[-n:]


def failure(e, first_max=None, tail_max=3500):
    """An exception in the words the judge reads: its type and first line, then the traceback's
    tail (the tail alone began mid-stack, and an audit reads "out of memory" in the first line)."""
    first = (str(e).strip().splitlines() or [""])[0]
    return "%s: %s\n%s" % (type(e).__name__, first[:first_max], tail(traceback.format_exc(), tail_max))


# ---- shared memory: the judge's memfd, passed with each request, kept mapped ---------------------


def passed_fd(anc):
    """The descriptor a request came with (SCM_RIGHTS), or -1."""
    shm_fd = -1
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            shm_fd = int.from_bytes(payload[:4], sys.byteorder)
    return shm_fd


def shm_size(req):
    """How much of the shared memory the request uses (0: none)."""
    sizes = {RUN: req.u.run.shm_size, ORACLE: req.u.oracle.shm_size, RESIDENT: req.u.oracle.shm_size,
             DESCRIBE: req.u.problem.shm_size,
             INPUTS: req.u.problem.shm_size, SAMPLE: req.u.problem.shm_size}
    return sizes.get(req.cmd, 0)


MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)  # Python < 3.13 lacks the name


class SharedMemory:
    """The judge's shared memory stays mapped between requests (mapping it afresh each time cost a
    page fault per page per request). Each run comes in a segment of its own, and the judge
    hands a freed segment to a later run: the last few segments stay mapped, by inode, and a new
    memfd (or one grown past its mapping) is mapped anew. Each worker gets its own memfds, so
    what stays mapped here is only this worker's own traffic. (Registering the mappings with the
    CUDA driver, page-locked, was measured on the H200: no faster at KernelBench's sizes, the
    registration eating what the copies saved.) A new mapping's first size bytes are populated
    at once (MADV_POPULATE_WRITE): the judge has faulted the segment's pages in (kg_seg_touch),
    and mapping them here one fault per page, on first access, cost 0.3 s a GB on the H200."""

    KEPT = 8  # a gate holds up to six runs' segments at once

    def __init__(self):
        self.mapped = []  # [((st_dev, st_ino), mmap)], the most recently used last

    def view(self, shm_fd, size):
        """The mapping of shm_fd, at least size bytes; None when the request uses none."""
        if not size:
            return None
        st = os.fstat(shm_fd)
        key = (st.st_dev, st.st_ino)
        for i, (k, m) in enumerate(self.mapped):
            if k == key:
                del self.mapped[i]
                if len(m) >= size:
                    self.mapped.append((k, m))
                    return m
                self.close(m)
                break
        while len(self.mapped) >= self.KEPT:
            self.close(self.mapped.pop(0)[1])
        m = mmap.mmap(shm_fd, max(st.st_size, size))
        try:  # only what this request uses: a reused segment may be far larger
            m.madvise(MADV_POPULATE_WRITE, 0, min(size, len(m)))
        except (OSError, ValueError):  # kernels before 5.14: faulted in on first access, as before
            pass
        self.mapped.append((key, m))
        return m

    @staticmethod
    def close(m):
        try:
            m.close()
        except BufferError:  # a tensor still views it; it goes when the tensor does
            pass


# ---- sandbox: sealed before any candidate code runs ----------------------------------------------

CAPSET = {"x86_64": 126, "aarch64": 91, "ppc64le": 184, "riscv64": 91}  # capset(2) numbers


def seal():
    """Before any candidate code, while this process has a single thread (credentials are per
    thread; threads made later inherit these): memory closed to other processes (the oracle
    worker will hold expected outputs), no_new_privs, every capability dropped, so that not even
    a root worker can read the judge's or the oracle worker's memory (see src/sandbox.h).
    KGATE_SANDBOX=0 turns it off. None, or why it could not be done."""
    if os.environ.get("KGATE_SANDBOX") == "0":
        return None
    lc = C.CDLL(None, use_errno=True)
    ul = C.c_ulong
    lc.prctl(4, ul(0), ul(0), ul(0), ul(0))  # PR_SET_DUMPABLE 0
    if lc.prctl(38, ul(1), ul(0), ul(0), ul(0)):  # PR_SET_NO_NEW_PRIVS
        return "prctl(PR_SET_NO_NEW_PRIVS): %s" % os.strerror(C.get_errno())
    for cap in range(64):  # the bounding set (only a privileged worker may, and must, drop it)
        if lc.prctl(24, ul(cap), ul(0), ul(0), ul(0)) and C.get_errno() == 22:  # PR_CAPBSET_DROP; EINVAL
            break
    nr = CAPSET.get(os.uname().machine)
    if nr is None:
        return "no capset system call number known for %s" % os.uname().machine
    header = (C.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (C.c_uint32 * 6)()  # effective, permitted, inheritable: all empty
    if lc.syscall(C.c_long(nr), header, data):
        return "capset (dropping every capability): %s" % os.strerror(C.get_errno())
    return None


# ---- loading: the problem and the candidate (LOAD), the problem's constants and models -----------

KERNEL_SEED = 42  # KernelBench seeds the RNG with 42 before each constructor


def frozen(v):
    """v (init inputs: numbers, strings, lists, tuples, dicts of them) as a hashable value, or None
    for anything else."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return (type(v).__name__, v)
    if isinstance(v, (list, tuple)):
        items = [frozen(x) for x in v]
        return None if any(x is None for x in items) else (type(v).__name__, tuple(items))
    if isinstance(v, dict):
        items = [(frozen(a), frozen(b)) for a, b in v.items()]
        return None if any(a is None or b is None for a, b in items) else ("dict", tuple(items))
    return None


def code_names(cls):
    """Every name the code of cls may look up: co_names of its methods and of its bases from the
    same module, of the functions and classes of that module they name (through decorators and
    partials), and of nested code. A lookup by string (globals()[...], eval) is not seen."""
    mod = sys.modules.get(cls.__module__)
    names, seen, todo = set(), set(), [cls]
    while todo:
        o = todo.pop()
        if o is None or id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, type):
            todo += [v for b in o.__mro__ if b.__module__ == cls.__module__ for v in vars(b).values()]
            continue
        if isinstance(o, (staticmethod, classmethod)):
            todo.append(o.__func__)
            continue
        if isinstance(o, property):
            todo += [o.fget, o.fset, o.fdel]
            continue
        # a decorated function's own code, a partial's function, the functions a closure holds
        todo += [getattr(o, "__wrapped__", None), getattr(o, "func", None)]
        for cell in getattr(o, "__closure__", None) or ():
            try:
                todo.append(cell.cell_contents if callable(cell.cell_contents) else None)
            except ValueError:  # an empty cell
                pass
        code = o if isinstance(o, types.CodeType) else getattr(o, "__code__", None)
        if not isinstance(code, types.CodeType):
            continue
        names.update(code.co_names)
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        for n in code.co_names:
            v = getattr(mod, n, None)
            if callable(v) and getattr(v, "__module__", None) == cls.__module__:
                todo.append(v)
    return names


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise Refused(COMPILE, "%s: not a Python file" % path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    d = os.path.dirname(os.path.abspath(path))
    if d not in sys.path:
        sys.path.insert(0, d)
    spec.loader.exec_module(mod)
    return mod


def located(path, what):
    """PATH:LINE: the exception being handled, at the deepest line of PATH it passed through."""
    e = sys.exc_info()[1]
    real = os.path.realpath(path)
    same = lambda f: f is not None and (f == path or os.path.realpath(f) == real)  # noqa: E731
    line = e.lineno if isinstance(e, SyntaxError) and same(e.filename) else None
    for fr in traceback.extract_tb(e.__traceback__):
        if same(fr.filename):
            line = fr.lineno
    head = "%s:%s: %s: %s: %s" % (path, line if line else "?", what, type(e).__name__,
                                  e.msg if isinstance(e, SyntaxError) else e)
    return head + "\n" + tail(traceback.format_exc(), 3000)


class Loading:
    """Worker's LOAD, and what every command uses: the problem's constants, its models, dtypes."""

    def load(self, req, rep):
        """PyTorch and its device, the problem, and (roles 1 and 2) the candidate; the reply
        carries the time the two imports took and what they ran under."""
        l = req.u.load
        torch = self.start_torch()
        self.role = l.role
        cache = text(l.cache_dir)
        problem = text(l.aux_path) or text(l.path)
        t0 = time.time()
        self.import_problem(problem)
        if self.role >= 1:  # 1: the candidate; 2: the standard test (problem and candidate)
            self.progress()  # the candidate's own code runs next, under the judge's run limit
            self.import_candidate(text(l.path), cache)
        rep.compile_seconds = time.time() - t0
        rep.compiler = ("python %d.%d, torch %s, %s" % (sys.version_info[0], sys.version_info[1],
                                                      torch.__version__, self.device)).encode()[:63]
        return OK

    def progress(self):
        """The interim reply to LOAD: what follows is the candidate's code (its time limit)."""
        if self.sock is not None:
            rep = Reply()
            rep.magic = MAGIC
            rep.status = PROGRESS
            rep.nlaunch = -1
            self.sock.sendmsg([bytes(rep)])

    def start_torch(self):
        """PyTorch imported, its threads set, its device chosen (and there the CUDA context made)."""
        try:
            import torch  # noqa: imported here so the layout test runs without torch
        except Exception as e:  # pragma: no cover - depends on the machine
            raise Refused(UNAVAILABLE, "PyTorch is not importable by %s: %s" % (sys.executable, e))
        self.torch = torch
        threads = os.environ.get("KGATE_TORCH_THREADS")
        if threads:  # kgate audit runs many workers at once: each its share of the cores
            torch.set_num_threads(max(1, int(threads)))
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if self.device == "cuda":
            # the CUDA context now, under the load's long limit: seconds on a loaded host, which
            # would otherwise count against the first run's --timeout. No allocation: the
            # standard test's worker must hand out memory as KernelBench's process would.
            torch.cuda.synchronize()
        return torch

    def import_problem(self, problem):
        """The problem file imported, its entry points checked, its integer constants noted."""
        try:
            self.problem = import_file(problem, "kgate_problem")
        except Refused:
            raise
        except Exception:
            raise Refused(COMPILE, located(problem, "the problem does not import"))
        for name in ("Model", "get_inputs", "get_init_inputs"):
            if not hasattr(self.problem, name):
                raise Refused(ENTRY, "%s defines no %s" % (problem, name))
        self.originals = {k: v for k, v in vars(self.problem).items()
                          if type(v) is int and not k.startswith("_")}

    def import_candidate(self, path, cache):
        """The candidate imported (compiling what it builds), with its ModelNew."""
        src = open(path, "rb").read()
        # load_inline extensions are cached by the candidate's content hash
        if cache:
            d = os.path.join(cache, "torch_extensions", hashlib.sha256(src).hexdigest()[:16])
            os.makedirs(d, exist_ok=True)
            os.environ["TORCH_EXTENSIONS_DIR"] = d
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                self.candidate = import_file(path, "kgate_candidate")
        except Exception:
            why = located(path, "the candidate does not import or compile")
            if self.device == "cpu" and re.search(rb"cuda_sources|__global__|import triton|\.cuda\(\)", src):
                # a GPU candidate on a host without one: nothing can be checked here (exit 3)
                raise Refused(UNAVAILABLE, "this host has no CUDA GPU (torch.cuda.is_available() is false) "
                              "and the candidate needs one:\n" + why)
            raise Refused(COMPILE, why)
        if not hasattr(self.candidate, "ModelNew"):
            raise Refused(ENTRY, "entry 'ModelNew' not found in %s" % path)

    def set_symbols(self, names, values, n):
        """Restore the module's constants, then apply the n given ones."""
        for k, v in self.originals.items():
            setattr(self.problem, k, v)
        applied = {}
        for i in range(n):
            name = bytes(names[i]).split(b"\0", 1)[0].decode()
            if name not in self.originals:
                raise Refused(BAD_REQUEST, "the problem has no constant %s" % name)
            setattr(self.problem, name, int(values[i]))
            applied[name] = int(values[i])
        return tuple(sorted(applied.items()))

    def build(self, cls, key, dtype=None, twin=False):
        """The model for the current constants, seeded as KernelBench seeds it. Cases whose
        constants differ only where the model does not look share one (model_key). twin: the
        oracle's, which evaluates both precisions: the other one made from the same init."""
        torch = self.torch
        # a model found must leave every generator as it was: a candidate's noise on the GPU drew
        # the same values each run when this reseeded the device's too (the determinism gate
        # passed noise_gelu on the H200). Only the CPU's is seeded here, and restored.
        state = random.getstate()
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(KERNEL_SEED)
            init = self.problem.get_init_inputs()
            k = (cls.__name__, self.model_key(cls, init, key), dtype)
        random.setstate(state)
        if k not in self.models:
            torch.manual_seed(KERNEL_SEED)
            init = self.problem.get_init_inputs()
            torch.manual_seed(KERNEL_SEED)
            m = cls(*init)
            twin = self.twin(cls, m, dtype) if twin else None
            m, k = self.placed(cls, m, dtype, k, key)
            self.models[k] = m
            if twin is not None:
                t, tk = self.placed(cls, twin[0], twin[1], (k[0], k[1], twin[1]), key)
                self.models.setdefault(tk, t)
        return self.models[k]

    def twin(self, cls, m, dtype):
        """The reference's model in the oracle's other precision (float64 for the working one,
        the working one for float64), as a copy of m made before either is placed: the same
        parameters as a build of its own, without a second init on the host, which at
        KernelBench's sizes is most of a new model's cost (a Linear(16384, 8192) draws 134M
        values on the CPU, seconds); the shapes gate builds both for every init it sweeps.
        (dtype, copy), or None: another class, the twin is already built, or m cannot be copied."""
        torch = self.torch
        if cls is not self.problem.Model or dtype not in (None, torch.float64) or \
                not isinstance(m, torch.nn.Module):
            return None
        other = torch.float64 if dtype is None else None
        try:
            return copy.deepcopy(m), other
        except Exception:  # a module holding what cannot be copied: built on its own when asked
            return None

    def placed(self, cls, m, dtype, k, key):
        """m on the device, in dtype, in eval mode; with its key, which for a lazy module (its
        sizes taken from its first input) is every constant: (model, key)."""
        torch = self.torch
        if isinstance(m, torch.nn.Module):
            m = m.to(self.device)
            if dtype is not None:
                m = m.to(dtype)
            m.eval()
            if any(isinstance(x, torch.nn.modules.lazy.LazyModuleMixin) for x in m.modules()):
                self.names_of[cls] = None
                k = (cls.__name__, ("constants", key), dtype)
        return m, k

    def model_key(self, cls, init, key):
        """What a model of cls depends on among the constants: its init inputs, and the values of
        the problem's constants that its code names (co_names of its methods, of the functions and
        classes of its module they name, and of their nested code). A batch size the model never
        reads then shares one model across the shapes gate's cases (a Linear(8192, 8192) takes
        1.4-1.9 s to build on a 2-core CPU, and each copy stayed on the device; on the H200 the
        shapes gate of two such real pairs took 4.7 and 3.2 s instead of 12.7 and 7.8).
        Init inputs that are not plain values (a tensor, an object), or a lazy module: key, every
        constant."""
        ik = frozen(init)
        if ik is None or (cls in self.names_of and self.names_of[cls] is None):
            return ("constants", key)
        if cls not in self.names_of:
            self.names_of[cls] = code_names(cls)
        names = self.names_of[cls]
        return ("init", ik, tuple((n, getattr(self.problem, n)) for n in sorted(names & set(self.originals))))

    def outputs_of(self, r):
        torch = self.torch
        outs = list(r) if isinstance(r, (tuple, list)) else [r]
        for o in outs:
            if not isinstance(o, torch.Tensor):
                raise Refused(MISMATCH, "forward returned %s, not a tensor" % type(o).__name__)
        return outs

    def dt(self, code):
        t = self.torch
        return [t.float64, t.float32, t.float16, t.bfloat16, t.int32, t.int64, t.uint8, t.bool][code]

    def dtname(self, dtype):
        t = self.torch
        m = {t.float64: "f64", t.float32: "f32", t.float16: "f16", t.bfloat16: "bf16", t.int32: "i32",
             t.int64: "i64", t.uint8: "u8", t.bool: "bool"}
        return m.get(dtype, str(dtype))


# ---- inputs: the problem's description (DESCRIBE) and get_inputs() draws (INPUTS) ----------------

class Inputs:
    """Worker's DESCRIBE and INPUTS."""

    def describe(self, req, shm, rep):
        """The problem at the request's constants: its constants, its inputs' kinds, dtypes and
        shapes, its outputs', the device. At the nominal constants (no symbol given) the reference
        really runs (the kernels it launches are profiled for the decoy check); at the others,
        the probes of the contract's shape inference, it runs on PyTorch's meta device when that
        gave the nominal's description exactly (meta_shapes): shapes and dtypes without memory
        or arithmetic, where a real draw and forward at KernelBench's sizes cost seconds each,
        for every constant. Anything the meta device cannot do falls back to the real run."""
        torch = self.torch
        p = req.u.problem
        doc = {}
        try:
            key = self.set_symbols(p.sym_names, p.sym_values, p.nsym)
            doc["symbols"] = {k: getattr(self.problem, k) for k in self.originals}
            meta_only = bool(p.flags & DESCRIBE_META)  # an estimate: never the real run
            described = self.meta_shapes() if meta_only or (p.nsym and self.meta_describe) else None
            if isinstance(described, Exception):  # the problem itself refuses these constants
                raise described
            if described is None and meta_only:
                raise Refused(UNAVAILABLE, "the meta device cannot describe this problem")
            if described is None:
                model = self.build(self.problem.Model, key)
                torch.manual_seed(KERNEL_SEED)
                inputs = self.draw()
                ins = self.describe_inputs(inputs)
                dev = [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in inputs]
                with torch.no_grad():
                    outs = self.describe_outputs(self.outputs_of(model(*dev)))
                described = ins, outs
                if p.nsym == 0:
                    self.meta_describe = self.meta_shapes() == described
            doc["inputs"], doc["outputs"] = described
            doc["device"] = self.device
            if p.nsym == 0 and not meta_only:
                doc["kernels"] = self.profile(lambda: model(*dev)) if self.device == "cuda" else None
                if doc["kernels"] is None:
                    del doc["kernels"]
        except Refused as e:
            doc = {"error": str(e)}
        except Exception as e:
            doc = {"error": failure(e, 500, 1500)}  # a full device's words first: the pair is checked again
        data = json.dumps(doc).encode()
        if len(data) >= len(shm):
            raise Refused(BAD_REQUEST, "description larger than the shared memory")
        shm[:len(data)] = data
        rep.code = len(data)
        return OK

    def describe_inputs(self, inputs):
        torch = self.torch
        ins = []
        for x in inputs:
            if isinstance(x, torch.Tensor):
                ins.append({"kind": "tensor", "dtype": self.dtname(x.dtype), "shape": list(x.shape)})
            elif isinstance(x, bool) or not isinstance(x, (int, float)):
                raise Refused(BAD_REQUEST, "get_inputs() returns a %s: kgate handles tensors, ints and floats"
                              % type(x).__name__)
            else:
                ins.append({"kind": "int" if isinstance(x, int) else "float", "value": x})
        return ins

    def describe_outputs(self, outs):
        return [{"kind": "tensor", "dtype": self.dtname(o.dtype), "shape": list(o.shape)} for o in outs]

    def meta_shapes(self):
        """(inputs, outputs) described from a model built and run on the meta device at the
        current constants; None where the meta device cannot stand in (a value read with .item(),
        a tensor made on a named device, an op without a meta kernel: an error that names the meta
        device, or a tensor left off it); the exception where the problem itself fails at these
        constants (an error that does not name it: a padding larger than half the kernel), as
        the real run would after drawing its inputs at full size."""
        torch = self.torch
        try:
            with meta_factories(torch), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = self.problem.Model(*self.problem.get_init_inputs())
                if isinstance(model, torch.nn.Module):
                    model.eval()
                inputs = self.problem.get_inputs()
                with torch.no_grad():
                    outs = self.outputs_of(model(*inputs))
            tensors = [x for x in inputs if isinstance(x, torch.Tensor)] + outs
            if isinstance(model, torch.nn.Module):
                tensors += list(model.parameters()) + list(model.buffers())
            if not all(x.is_meta for x in tensors):
                return None
            return self.describe_inputs(inputs), self.describe_outputs(outs)
        except Exception as e:
            return None if "meta" in str(e).lower() or isinstance(e, NotImplementedError) else e

    def draw(self):
        """get_inputs(), on a GPU made there (the factory calls that name no device draw on the GPU,
        from the CUDA generator: other values than the CPU's for the same seed; at real sizes the
        CPU's draws cost seconds a case); KGATE_INPUTS_ON_DEVICE=0 draws on the CPU."""
        torch = self.torch
        if self.device != "cpu" and os.environ.get("KGATE_INPUTS_ON_DEVICE", "1") != "0":
            with torch.device(self.device):
                return self.problem.get_inputs()
        return self.problem.get_inputs()

    def inputs_cmd(self, req, shm, rep):
        torch = self.torch
        p = req.u.problem
        self.set_symbols(p.sym_names, p.sym_values, p.nsym)
        torch.manual_seed(p.seed % (2 ** 64))
        inputs = self.draw()
        if len(inputs) != p.ntensor:
            raise Refused(MISMATCH, "get_inputs() returned %d values, expected %d" % (len(inputs), p.ntensor))
        for i, x in enumerate(inputs):
            if not isinstance(x, torch.Tensor):
                continue
            b = x.detach().contiguous().reshape(-1).view(torch.uint8)  # copied to shm from where it is
            if b.numel() != p.bytes[i]:
                raise Refused(MISMATCH, "input %d has %d bytes, expected %d (the shape inference was wrong)"
                              % (i, b.numel(), p.bytes[i]))
            mv = memoryview(shm)[p.off[i]:p.off[i] + p.bytes[i]]
            torch.frombuffer(mv, dtype=torch.uint8).copy_(b) if b.numel() else None
        return OK


def meta_factories(torch):
    """A mode under which PyTorch's factory calls that name no device make tensors on the meta
    device (what torch.device("meta") as a context does from PyTorch 2.0, here also on 1.13): a
    model built and run under it yields its shapes and dtypes and allocates nothing."""
    from torch.overrides import TorchFunctionMode
    names = ("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "empty", "zeros", "ones",
             "full", "arange", "linspace", "eye", "tensor")
    factories = {getattr(torch, n) for n in names if hasattr(torch, n)}

    class Meta(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in factories and kwargs.get("device") is None:
                kwargs["device"] = "meta"
            return func(*args, **kwargs)

    return Meta()


@contextlib.contextmanager
def no_tf32(torch):
    """TF32 off for cuBLAS and cuDNN during the call, and the candidate's own attempts to turn it on
    (torch.backends.cuda.matmul.allow_tf32 = True, cudnn.allow_tf32 = True,
    torch.set_float32_matmul_precision) ignored meanwhile: the tf32 diagnosis re-runs a failing
    case this way and asks whether the error goes away."""
    C = torch._C
    saved = (C._get_cublas_allow_tf32(), C._get_cudnn_allow_tf32())
    precision = torch.get_float32_matmul_precision() if hasattr(torch, "get_float32_matmul_precision") else None
    cudnn_cls = type(torch.backends.cudnn)
    cudnn_prop = cudnn_cls.__dict__.get("allow_tf32")
    setters = {n: getattr(C, n) for n in ("_set_cublas_allow_tf32", "_set_float32_matmul_precision") if hasattr(C, n)}
    if precision is not None:
        torch.set_float32_matmul_precision("highest")
    C._set_cublas_allow_tf32(False)
    C._set_cudnn_allow_tf32(False)
    for n in setters:
        setattr(C, n, lambda *a, **k: None)
    if cudnn_prop is not None:
        setattr(cudnn_cls, "allow_tf32", property(lambda self: False, lambda self, v: None))
    try:
        yield
    finally:
        for n, f in setters.items():
            setattr(C, n, f)
        if cudnn_prop is not None:
            setattr(cudnn_cls, "allow_tf32", cudnn_prop)
        C._set_cublas_allow_tf32(saved[0])
        C._set_cudnn_allow_tf32(saved[1])
        if precision is not None:
            torch.set_float32_matmul_precision(precision)


# ---- oracle modes: the reference in float64, in working precision, sequential (ORACLE) -----------

def seq_mode(torch):
    """A dispatch mode that evaluates the common reductions the least accurate legitimate way:
    sequential fp32 accumulation (sum and mean along their dims through a float32 cumsum, whose
    last element is the left-to-right sum; mm, addmm, bmm and mv as a k-loop of rank-1 updates).
    PyTorch's own kernels sum pairwise or in blocks, more accurately than a correct kernel must;
    calibrating on them alone would fail correct kernels that accumulate in another fp32 order."""
    from torch.utils._python_dispatch import TorchDispatchMode
    try:
        import numpy as np
    except ImportError:  # seq_sum's device loop gives the same sums, slower
        np = None

    class Seq(TorchDispatchMode):
        replaced = False  # whether any op was evaluated sequentially

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            r = self.dispatch(func, args, kwargs)
            if r is not None:
                self.replaced = True
                return r
            return func(*args, **(kwargs or {}))

        def dispatch(self, func, args, kwargs):
            return seq_dispatch(torch, np, func, args, kwargs)

    return Seq()


SEQ_LIMIT = 1 << 31  # beyond this many multiply-adds the native op is used


def seq_dispatch(torch, np, func, args, kwargs):
    """seq_mode's table: func(*args, **kwargs) evaluated sequentially, or None."""
    aten = torch.ops.aten
    kwargs = kwargs or {}
    x = args[0] if args else None
    f32 = isinstance(x, torch.Tensor) and x.dtype == torch.float32
    # (calls made here are not intercepted again: the mode is inactive inside itself);
    # None: not replaced, the op runs as PyTorch has it
    if f32 and func == aten.sum.dim_IntList and not kwargs.get("dtype"):
        return seq_sum(torch, np, x, list(args[1]) if len(args) > 1 and args[1] is not None else [],
                       args[2] if len(args) > 2 else kwargs.get("keepdim", False))
    if f32 and func == aten.sum.default:
        return seq_sum(torch, np, x, [], False)
    if f32 and func == aten.mean.dim:
        dims = list(args[1]) if args[1] is not None else list(range(x.dim()))
        n = 1
        for d in dims:
            n *= x.shape[d % x.dim()]
        return seq_sum(torch, np, x, dims, args[2] if len(args) > 2 else kwargs.get("keepdim", False)) / n
    if f32 and func == aten.mm.default:
        r = seq_mm(torch, np, x, args[1])
        if r is not None:
            return r
    if f32 and func == aten.mv.default:
        r = seq_mm(torch, np, x, args[1][:, None])
        if r is not None:
            return r[:, 0]
    if f32 and func == aten.addmm.default:
        r = seq_mm(torch, np, args[1], args[2])
        if r is not None:
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            return beta * x + alpha * r
    if f32 and func == aten.convolution.default and x.dim() == 4 and not args[6] and args[8] == 1:
        r = seq_conv2d(torch, np, x, args)
        if r is not None:
            return r
    if f32 and func == aten.bmm.default and x.shape[0]:
        return seq_mm(torch, np, x, args[1])
    return None


def seq_sum(torch, np, x, dims, keepdim):
    """x summed over dims (all of them when none are given) into a float32 accumulator, left to right."""
    nd = x.dim()
    dims = sorted(set(d % nd for d in dims)) if dims else list(range(nd))
    keep = [d for d in range(nd) if d not in dims]
    y = x.permute(keep + dims).reshape([x.shape[d] for d in keep] + [-1])
    # a float32 accumulator, left to right (torch's CPU cumsum accumulates in double, its
    # CUDA cumsum is a scan; numpy's float32 cumsum is the plain loop, on the host)
    s = torch.zeros(y.shape[:-1], dtype=y.dtype, device=y.device)
    n = y.shape[-1]
    if n * max(1, s.numel()) > SEQ_LIMIT or n > (1 << 20):
        s = y.sum(-1)
    elif np is not None and n:
        h = y.detach().reshape(-1, n).cpu().numpy()
        rows = max(1, (1 << 24) // n)
        out = np.concatenate([np.cumsum(h[i:i + rows], axis=-1, dtype=np.float32)[:, -1]
                              for i in range(0, h.shape[0], rows)]) if h.shape[0] else np.zeros(0, np.float32)
        s = torch.from_numpy(out).reshape(s.shape).to(y.device)
    else:
        for j in range(n):
            s += y[..., j]
    if keepdim:
        for d in dims:
            s = s.unsqueeze(d)
    return s


def seq_mm(torch, np, a, b):
    """a @ b as a k-loop of rank-1 updates, a and b matrices or batches of them ([..., M, K] and
    [..., K, N], the batch dims equal); None beyond SEQ_LIMIT multiply-adds per matrix. A batch
    goes through one k-loop: every element gets the same products and sums, in the same order,
    as a loop per matrix, in K launches instead of batch x K (at KernelBench's sizes, 131072
    launches for a bmm of 128 matrices, seconds on a GPU). Where there are few outputs
    (SEQ_HOST_OUTPUTS), so that the K launches cost it all (on a GPU a matmul of 256 outputs with
    K = 524288 took about 20 s), the loop runs in numpy on the host (seq_mm_host); on a GPU with
    Triton it is one kernel (seq_mm_device)."""
    M, K = a.shape[-2], a.shape[-1]
    N = b.shape[-1]
    if M * N * K > SEQ_LIMIT:
        return None
    acc = torch.zeros(a.shape[:-1] + (N,), dtype=a.dtype, device=a.device)
    if a.is_cuda and K and acc.numel():
        r = seq_mm_device(torch, a, b, acc)
        if r is not None:
            return r
    if np is not None and K and acc.numel() <= SEQ_HOST_OUTPUTS:
        return seq_mm_host(torch, np, a, b, acc)
    # each product into one buffer, then added: the same two roundings as acc += a * b, without
    # a new M x N temporary per k (on the CPU each was fresh pages), and from a's columns and b's
    # rows made contiguous once (a Linear's x @ W.T reads W's rows as b's columns, one cache line
    # an element): a 64 x 4096 x 4096 product on the CPU took 17.9 s, and 0.5 s this way, bit
    # for bit the same
    return seq_mm_loop(torch, a, b, acc)


def seq_mm_loop(torch, a, b, acc):
    """seq_mm's k-loop by torch ops, on a's device, into acc (zeros): 2K launches on a GPU."""
    tmp = torch.empty_like(acc)
    at, bc = a.transpose(-1, -2).contiguous(), b.contiguous()
    for k in range(a.shape[-1]):
        torch.mul(at[..., k, :, None], bc[..., None, k, :], out=tmp)
        acc.add_(tmp)
    return acc


SEQ_HOST_OUTPUTS = 1 << 15  # seq_mm: up to this many outputs, the k-loop runs in numpy on the host


def seq_mm_host(torch, np, a, b, acc):
    """seq_mm's k-loop on the host, by numpy: the same float32 products a[m, k] * b[k, n], added in
    the same order from a +0 start, so the same bits on every device (an IEEE multiply, then an
    add: no fused multiply-add either way); a numpy step costs about a microsecond, a launch on a
    GPU tens of them."""
    ah, bh = a.detach().cpu().numpy(), b.detach().cpu().numpy()
    run = np.zeros(tuple(acc.shape), np.float32)
    tmp = np.empty_like(run)
    with np.errstate(all="ignore"):  # inf * 0 is NaN here as in torch, without a warning
        for k in range(ah.shape[-1]):
            np.multiply(ah[..., :, k, None], bh[..., None, k, :], out=tmp)
            run += tmp
    return torch.from_numpy(run).to(acc.device)


# seq_mm on a GPU: the k-loop inside one Triton kernel (seq_mm_device); KGATE_SEQ_DEVICE=0: the torch loop
SEQ_DEVICE = os.environ.get("KGATE_SEQ_DEVICE") != "0"
seq_kernel = None  # the Triton kernel once made; False: Triton is missing or failed here


def seq_mm_device(torch, a, b, acc):
    """seq_mm's k-loop on the GPU as one Triton kernel (seq_mm_kernel) instead of 2K launches:
    each output element is still summed from +0 in k order, an IEEE single multiply and then an
    add (no fused multiply-add: enable_fp_fusion off), so the same bits as the torch loop
    (seq_kernel_made checks that on the device first; tests/seq_reference.sh on a GPU too). In
    the shapes gate's cases of a KernelBench gemm (a boundary batch with K = 2048 and 4096) each
    sequential product cost thousands of launches, most of the oracle's time. acc, or None: no
    such kernel here (the torch loop then)."""
    global seq_kernel
    if not SEQ_DEVICE or seq_kernel is False or acc.numel() // (a.shape[-2] * b.shape[-1]) > 65535:
        return None  # (65535: the grid's third dimension, the batch)
    try:
        if seq_kernel is None:
            seq_kernel = seq_kernel_made(torch, a.device)
        if seq_kernel is False:
            return None
        seq_launch(seq_kernel, a, b, acc)
        return acc
    except Exception as e:  # no Triton, or it cannot compile here: the torch loop, from now on
        seq_kernel = False
        print("kgate torch runner: the sequential reference's device kernel is unavailable (%s: %s); "
              "the torch loop instead" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""),
              file=sys.stderr)
        return None


def seq_kernel_made(torch, device):
    """seq_mm_kernel compiled by Triton, once it has summed a small product holding every special
    value (signed zeros, subnormals, an infinity, a NaN) to the torch loop's bits on this device;
    False where it did not (said on the worker's log). Its inputs come from a generator of its own:
    the global ones stay where the reference left them."""
    import triton
    import triton.language
    globals()["tl"] = triton.language  # seq_mm_kernel's body names it
    # one compilation for every shape and stride (Triton would compile again for each new
    # combination of sizes equal to 1 or divisible by 16: the shapes gate's sweep)
    kern = triton.jit(seq_mm_kernel, do_not_specialize=["M", "N", "K", "sab", "sam", "sak", "sbb", "sbk", "sbn"])
    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(2, 37, 67, generator=g), torch.randn(2, 67, 45, generator=g)
    a.view(-1)[::17], b.view(-1)[::13], a.view(-1)[::29], b.view(-1)[::31] = 0.0, -0.0, 1e-40, -3e-39
    a.view(-1)[5], b.view(-1)[3] = math.inf, math.nan
    a, b = a.to(device), b.to(device)
    want = seq_mm_loop(torch, a, b, torch.zeros(2, 37, 45, device=device))
    got = torch.zeros(2, 37, 45, device=device)
    seq_launch(kern, a, b, got)
    if not torch.equal(got.view(torch.int32), want.view(torch.int32)):
        print("kgate torch runner: the sequential reference's device kernel differs from the torch loop "
              "here (a fused multiply-add?); the torch loop instead", file=sys.stderr)
        return False
    return kern


def seq_launch(kern, a, b, acc):
    """acc ([..., M, N], contiguous) = a @ b by the Triton kernel kern, one program per 32 x 32 tile
    of each matrix of the batch."""
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    a3, b3 = a.reshape(-1, M, K), b.reshape(-1, K, N)  # views where they can be
    out = acc.view(-1, M, N)
    grid = ((M + SEQ_TILE - 1) // SEQ_TILE, (N + SEQ_TILE - 1) // SEQ_TILE, out.shape[0])
    kern[grid](a3, b3, out, M, N, K, a3.stride(0), a3.stride(1), a3.stride(2), b3.stride(0), b3.stride(1),
               b3.stride(2), enable_fp_fusion=False)


SEQ_TILE = 32  # seq_mm_kernel: the outputs one program sums (SEQ_TILE x SEQ_TILE)


def seq_mm_kernel(A, B, C, M, N, K, sab, sam, sak, sbb, sbk, sbn):
    """Triton's language (triton.jit applies in seq_mm_device, which also binds tl): program (i, j,
    z) sums outputs [32i, 32i + 32) x [32j, 32j + 32) of matrix z over k = 0 .. K - 1 in order.
    The tile is the literal 32 (SEQ_TILE), not a constexpr parameter, whose annotation would need
    Triton when this file is imported."""
    z = tl.program_id(2).to(tl.int64)
    rm = tl.program_id(0).to(tl.int64) * 32 + tl.arange(0, 32)
    rn = tl.program_id(1).to(tl.int64) * 32 + tl.arange(0, 32)
    am, bn = rm < M, rn < N
    pa = A + z * sab + rm * sam
    pb = B + z * sbb + rn * sbn
    acc = tl.zeros((32, 32), dtype=tl.float32)
    for _ in range(0, K):  # the pointers step, in 64 bits, rather than k * stride in 32
        x = tl.load(pa, mask=am, other=0.0)
        y = tl.load(pb, mask=bn, other=0.0)
        acc = acc + x[:, None] * y[None, :]
        pa += sak
        pb += sbk
    tl.store(C + z * M * N + rm[:, None] * N + rn[None, :], acc, mask=am[:, None] & bn[None, :])


def seq_conv2d(torch, np, x, args):
    """aten.convolution of a 4-d input, no transposition, one group; None: left to PyTorch."""
    # conv2d as im2col and a sequential product, as a direct-convolution kernel sums
    w, bias, stride, padding, dilation = args[1], args[2], args[3], args[4], args[5]
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    cols = torch.nn.functional.unfold(x, (kh, kw), dilation=dilation, padding=padding, stride=stride)
    L = cols.shape[-1]
    prod = seq_mm(torch, np, w.reshape(O, -1).expand(N, O, -1), cols) if N else None  # every sample at once
    if prod is not None:
        ho = (H + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
        wo = (W + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
        y = prod.reshape(N, O, ho, wo) if L == ho * wo else None
        if y is not None:
            return y + bias.reshape(1, O, 1, 1) if bias is not None else y
    return None


def scale_of(torch, x):
    """kg_scale_of: the RMS of the finite values of float64 x, its mantissa rounded to 24 bits (so
    that the order of the sum, the device's here, the judge's serial one there, does not change
    it but with a chance of about 1e-5)."""
    ss, n, step = 0.0, 0, block_of(x)
    for lo in range(0, x.numel(), step):
        b = x[lo:lo + step]
        fin = torch.isfinite(b)
        b = torch.where(fin, b, torch.zeros((), dtype=b.dtype, device=b.device))
        ss += float((b * b).sum())
        n += int(fin.sum())
    if not n:
        return 0.0
    m, e = math.frexp(math.sqrt(ss / n))
    return math.ldexp(round(m * (1 << 24)) / (1 << 24), e)


def hexfloat(v):
    """v exactly, as C's strtod reads it back (float.hex drops a NaN's sign, which kgate prints)."""
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return float.hex(v)


def nonfinite_kind(torch, v):
    """compare.c's kind(): 0 finite, 1 NaN, 2 +Inf, 3 -Inf (int8)."""
    def c(n):
        return torch.full((), n, dtype=torch.int8, device=v.device)
    return torch.where(torch.isnan(v), c(1), torch.where(v == math.inf, c(2), torch.where(v == -math.inf, c(3), c(0))))


def first_true(torch, m):
    """The first index where bool tensor m holds, or -1."""
    if not bool(m.any()):
        return -1
    return int(torch.argmax(m.to(torch.uint8)))


def compare(torch, got, x, r, scale):
    """compare.c's comparison of got (any dtype) with float64 x, calibrated by the reference r when
    r is not None, on their device, in blocks taken in order: the fields of struct kg_cmp, in its
    order (n, scale, max_err, worst, got, exp, rms_rel, nonfinite_mismatch, first_nonfinite_mismatch,
    mismatches, excused, first_excused). Every element error is compare.c's arithmetic, in the same
    IEEE operations, and the worst is the first maximum: the same values and positions; only
    rms_rel's sums go in this device's order."""
    n = got.numel()
    mx, worst, g_w, x_w, num, den = 0.0, -1, 0.0, 0.0, 0.0, 0.0
    nfm, first_nfm, mism, exc, first_exc = 0, -1, 0, 0, -1
    inf = torch.tensor(math.inf, dtype=torch.float64, device=x.device)
    zero = torch.zeros((), dtype=torch.float64, device=x.device)
    step = block_of(x)
    for lo in range(0, n, step):
        g = got[lo:lo + step].to(torch.float64)
        xe = x[lo:lo + step]
        kg, ke = nonfinite_kind(torch, g), nonfinite_kind(torch, xe)
        fin = (kg == 0) & (ke == 0)
        d = (g - xe).abs()
        den_ = xe.abs() + scale
        e = torch.where(d == 0, zero, torch.where(den_ > 0, d / den_, inf))
        e = torch.where(fin, e, torch.where(kg == ke, zero, inf))
        if r is not None:  # non-finite where the working precision is too, of that kind: excused
            excused = (kg != 0) & (kg == nonfinite_kind(torch, r[lo:lo + step].to(torch.float64))) & (kg != ke)
            c = int(excused.sum())
            if c:
                if first_exc < 0:
                    first_exc = lo + first_true(torch, excused)
                exc += c
                e = torch.where(excused, -torch.ones((), dtype=torch.float64, device=x.device), e)
        mism += int((e > 0).sum())
        isinf = torch.isinf(e)
        c = int(isinf.sum())
        if c:
            if first_nfm < 0:
                first_nfm = lo + first_true(torch, isinf)
            nfm += c
        if e.numel():
            i = int(torch.argmax(e))
            m = float(e[i])
            if m >= 0 and (worst < 0 or m > mx):
                mx, worst, g_w, x_w = m, lo + i, float(g[i]), float(xe[i])
        dd = torch.where(fin, g - xe, zero)
        xx = torch.where(fin, xe, zero)
        num += float((dd * dd).sum())
        den += float((xx * xx).sum())
    rms = math.sqrt(num / den) if den > 0 else (math.inf if num > 0 else 0.0)
    if first_nfm >= 0:
        worst, mx = first_nfm, math.inf
        g_w, x_w = float(got[first_nfm].to(torch.float64)), float(x[first_nfm])
    return [n, float(scale), float(mx), worst, g_w, x_w, rms, nfm, first_nfm, mism, exc, first_exc]


def classes(torch, got, x, exact):
    """judge.c's classes_here for got (any dtype) against float64 x, on their device, in blocks:
    (positions whose class (compare.c's kind) differs, or under exact whose value differs as
    float64; the first of them or -1; x's non-finite count)."""
    mism, first, nonfinite = 0, -1, 0
    step = block_of(x)
    for lo in range(0, got.numel(), step):
        xe = x[lo:lo + step]
        kx = nonfinite_kind(torch, xe)
        if exact:
            g = got[lo:lo + step].to(torch.float64)
            bad = (g != xe) & ~(torch.isnan(g) & torch.isnan(xe))
        else:
            bad = nonfinite_kind(torch, got[lo:lo + step]) != kx
        nonfinite += int((kx != 0).sum())
        c = int(bad.sum())
        if c:
            if first < 0:
                first = lo + first_true(torch, bad)
            mism += c
    return mism, first, nonfinite


class OracleModes:
    """Worker's ORACLE."""

    def tensor_from_shm(self, shm, t, dtype):
        """Input t (in shm as its data_dtype: what the judge stores, sent as it is) as dtype on the
        worker's device: one copy, cast on the device (the host side of a real-size case is GBs:
        no staging tensor, no host cast)."""
        torch = self.torch
        n = 1
        for d in range(t.rank):
            n *= t.dims[d]
        shape = [t.dims[d] for d in range(t.rank)]
        if not n:
            return torch.empty(shape, dtype=dtype, device=self.device)
        src = self.dt(t.data_dtype)
        size = torch.empty(0, dtype=src).element_size()
        x = torch.frombuffer(memoryview(shm)[t.off:t.off + size * n], dtype=src).reshape(shape)
        if self.device != "cpu":
            return x.to(self.device).to(dtype)
        return x.clone() if src == dtype else x.to(dtype)  # never a view of shm

    def oracle(self, req, shm, rep):
        torch = self.torch
        o = req.u.oracle
        key = self.set_symbols(o.sym_names, o.sym_values, o.nsym)
        exact = o.working in (0, 2)
        seq = o.working == 4  # the reference with sequential fp32 accumulation (seq_mode)
        args = []
        for i in range(o.n_in):
            t = o.inp[i]
            if t.kind != ARG_TENSOR:
                v = t.value
                args.append(int(v) if float(v).is_integer() and t.kind in (ARG_INT, ARG_LONG) else v)
                continue
            own = self.dt(t.dtype)
            want = torch.float64 if exact and own.is_floating_point else own
            args.append(self.tensor_from_shm(shm, t, want))
        model = self.build(self.problem.Model, key, torch.float64 if exact else None, twin=True)
        tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
        if o.working in (1, 4):  # the working-precision reference: strict fp32, no TF32 shortcuts
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        mode = seq_mode(torch) if seq else None
        try:
            with torch.no_grad(), (mode if mode is not None else contextlib.nullcontext()):
                outs = self.outputs_of(model(*args))
        finally:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
        if mode is not None and not mode.replaced:
            rep.code = 1  # no op was replaced: this is the plain working-precision reference
        if len(outs) != o.n_out:
            raise Refused(MISMATCH, "the reference returned %d outputs, expected %d" % (len(outs), o.n_out))
        for i, y in enumerate(outs):
            t = o.out[i]
            y = y.detach().reshape(-1)
            n = 1
            for d in range(t.rank):
                n *= t.dims[d]
            if y.numel() != n:
                raise Refused(MISMATCH, "reference output %d has %d elements, expected %d" % (i, y.numel(), n))
            if o.resident:
                continue
            if n:  # cast on the device, then straight into shm: no host copy of its own
                torch.frombuffer(memoryview(shm)[t.off:t.off + 8 * n], dtype=torch.float64).copy_(
                    y.to(torch.float64))
        if o.resident:  # kept here, on the device: the judge asks for comparisons (RESIDENT)
            ys = [y.detach().reshape(-1) for y in outs]
            self.resident.setdefault(o.resident, {})[o.resident_set] = \
                [y.to(torch.float64) for y in ys] if o.resident_set == 0 else ys
        return OK

    def run_output(self, shm, o, j, x):
        """A run's output j (o.out[j], in the run's segment) on the device, flat, checked against the
        kept output x's size."""
        t = o.out[j]
        got = self.tensor_from_shm(shm, t, self.dt(t.dtype)).reshape(-1)
        if got.numel() != x.numel():
            raise Refused(BAD_REQUEST, "output %d has %d elements, the kept one %d" % (j, got.numel(), x.numel()))
        return got

    def resident_cmd(self, req, shm, rep):
        """RESIDENT: a kept case calibrated, compared with a run's outputs, fetched or forgotten."""
        torch = self.torch
        o = req.u.oracle
        if o.working == RES_DROP:
            self.resident.pop(o.resident, None)  # its memory goes back after the reply (answer)
            return OK
        case = self.resident.get(o.resident)
        if case is None or 0 not in case:
            raise Refused(BAD_REQUEST, "no oracle case %d is kept in this worker" % o.resident)
        exact = case[0]
        if o.n_out != len(exact):
            raise Refused(BAD_REQUEST, "%d outputs asked of a kept case of %d" % (o.n_out, len(exact)))
        lines = []
        if o.working == RES_CALIBRATE:
            first, second = case.pop(1, None), case.pop(2, None)
            if first is None:
                raise Refused(BAD_REQUEST, "kept case %d has no working-precision evaluation" % o.resident)
            case["ref"], case["scale"] = [], []
            for j, x in enumerate(exact):
                r = first[j]
                if second is not None:  # the first evaluation where it is strictly worse, else the second
                    a, b, r = first[j], second[j], torch.empty_like(first[j])
                    step = block_of(x)
                    for lo in range(0, x.numel(), step):
                        s = slice(lo, lo + step)
                        worse = (a[s].to(torch.float64) - x[s]).abs() > (b[s].to(torch.float64) - x[s]).abs()
                        r[s] = torch.where(worse, a[s], b[s])
                r = r.to(self.dt(o.out[j].dtype))  # rounded to the output's dtype (kg_round)
                scale = scale_of(torch, x)
                c = compare(torch, r, x, r, scale)
                case["ref"].append(r)
                case["scale"].append(scale)
                lines.append("%s %s" % (hexfloat(scale), hexfloat(c[2])))
        elif o.working == RES_JUDGE:
            for j, x in enumerate(exact):
                c = compare(torch, self.run_output(shm, o, j, x), x, case["ref"][j], case["scale"][j])
                lines.append(" ".join(hexfloat(v) if isinstance(v, float) else str(v) for v in c))
        elif o.working == RES_CLASSES:
            for j, x in enumerate(exact):
                got = self.run_output(shm, o, j, x)
                lines.append("%d %d %d" % classes(torch, got, x, bool(o.resident_set) or not got.is_floating_point()))
        elif o.working == RES_FETCH:
            for j, x in enumerate(exact):
                for t, v in ((o.out[j], x), (o.inp[j], case["ref"][j])):
                    if v.numel():
                        torch.frombuffer(memoryview(shm)[t.off:t.off + 8 * v.numel()], dtype=torch.float64).copy_(
                            v.to(torch.float64))
        else:
            raise Refused(BAD_REQUEST, "unknown resident operation %d" % o.working)
        rep.msg = "\n".join(lines).encode()
        return OK


# ---- runs: ModelNew on the judge's inputs (RUN), allocator poisoning and the canary --------------

def late_sample(b):
    """The bytes of an output (b: flat, uint8) a late write is told by: all of them up to LATE_SAMPLE,
    else about that many evenly spaced, an odd stride apart so that every byte of an element is
    sampled somewhere (work that writes late writes blocks, not one byte in a stride)."""
    step = -(-b.numel() // LATE_SAMPLE)
    return b if step <= 1 else b[::step | 1]


MASK64 = (1 << 64) - 1
DIGEST_BLOCK = 1 << 24  # 8-byte words a digest takes at once on a GPU
# ... on the CPU, with its temporaries made once and reused (each new tensor of a block's size
# was fresh memory faulted in page by page: 2.1 s for 64 MB at 2^24, 2-core VM)
CPU_DIGEST_BLOCK = 1 << 18


def signed64(v):
    """v as the int64 torch multiplies by (two's complement)."""
    v &= MASK64
    return v - (1 << 64) if v >> 63 else v


DIGEST_K = [signed64(k) for k in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB)]


def digest(torch, b):
    """A 64-bit hash of the bytes b (flat, uint8, on the worker's device) that depends on every byte
    and on where it is: each 8-byte word w_i mixed with its index (x = (w_i ^ i K0) K1, x ^= x >> 31,
    x *= K2, all mod 2^64) and the results summed mod 2^64, at the device's bandwidth; the tail
    bytes past the last whole word likewise, one byte a word. Two outputs that differ anywhere give
    different digests but with a chance of about 2^-64: what the determinism gate compares where
    the outputs need not leave the worker (RUN_DIGEST)."""
    n8 = b.numel() - b.numel() % 8
    words = b[:n8].view(torch.int64)
    block = DIGEST_BLOCK if words.device.type != "cpu" else CPU_DIGEST_BLOCK
    m = min(block, words.numel())
    h = 0
    if m:
        i, x, t = (torch.empty(m, dtype=torch.int64, device=words.device) for _ in range(3))
        for start in range(0, words.numel(), block):
            w = words[start:start + block]
            k = w.numel()
            ii, xx, tt = i[:k], x[:k], t[:k]
            torch.arange(start, start + k, out=ii)
            torch.mul(ii, DIGEST_K[0], out=xx)
            xx.bitwise_xor_(w).mul_(DIGEST_K[1])
            torch.bitwise_right_shift(xx, 31, out=tt)
            xx.bitwise_xor_(tt.bitwise_and_((1 << 33) - 1)).mul_(DIGEST_K[2])
            h += int(xx.sum())
    for j in range(n8, b.numel()):
        x = ((int(b[j]) ^ (j * 0x9E3779B97F4A7C15)) * 0xBF58476D1CE4E5B9) & MASK64
        h += ((x ^ (x >> 31)) * 0x94D049BB133111EB) & MASK64
    return h & MASK64


def prefilled_count(torch, o, byte):
    """How many elements of o (any dtype) hold byte in every one of their bytes (in blocks, as
    digest)."""
    es = o.element_size()
    b = o.detach().contiguous().reshape(-1).view(torch.uint8)
    if not b.numel():
        return 0
    if es not in (1, 2, 4, 8):
        return int((b.reshape(-1, es) == byte).all(dim=1).sum())
    kind = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[es]
    v = b.view(kind)
    pattern = int.from_bytes(bytes([byte]) * es, "little", signed=es > 1)
    block = DIGEST_BLOCK if v.device.type != "cpu" else CPU_DIGEST_BLOCK
    eq = torch.empty(min(block, v.numel()), dtype=torch.bool, device=v.device)
    n = 0
    for start in range(0, v.numel(), block):
        part = v[start:start + block]
        e = eq[:part.numel()]
        torch.eq(part, pattern, out=e)
        n += int(e.sum())
    return n


class Runs:
    """Worker's RUN, and the caching allocator's memory it prefills and watches."""

    def run(self, req, shm, rep):
        """ModelNew once on the inputs in shm; its outputs, and the inputs with their guards as the
        call left them, written back where they came from. Nothing to compare with is sent."""
        torch = self.torch
        r = req.u.run
        key = self.set_symbols(r.sym_names, r.sym_values, r.nsym)
        model = self.build(self.candidate.ModelNew, key)
        self.lap(None)
        args, outs_expected, bufs, total_out = self.stage_args(r, shm, rep)
        self.lap("stage")
        self.poison(r, total_out)
        self.lap("poison")
        cuda = self.device == "cuda"
        side, delayed, canary, prof = self.prepare_call(r, bufs)
        self.profiling = prof
        self.lap("prepare")
        t0 = time.perf_counter()
        try:
            outs, start, end = self.timed_call(r, model, args, outs_expected, bufs, side, delayed, shm, rep)
        finally:
            self.profile_stop()
        if cuda:
            torch.cuda.synchronize()
            rep.seconds = start.elapsed_time(end) / 1e3
            late = any(not torch.equal(snap, late_sample(o.detach().contiguous().reshape(-1).view(torch.uint8)))
                       for snap, o in self.as_read)
            self.as_read = []
            if late:
                rep.code |= OUT_LATE_WRITE
            self.lap("late")
            if canary is not None and canary[0] is not None:
                self.canary_check(canary[0], canary[1], outs, rep)
        else:
            rep.seconds = time.perf_counter() - t0
        self.lap("after")
        self.write_back(shm, bufs, rep)
        self.lap("write_back", done=True)
        if prof is not None:
            self.records(prof, rep)
        return OK

    def stage_args(self, r, shm, rep):
        """The call's arguments: each input region (data and guards) copied to the device, into the
        same storage as the run before under RUN_REUSE, its data from the copy kept on the device
        where the judge's tag names the same bytes (from_kept); outputs only noted, for the call
        to make."""
        torch = self.torch
        args, outs_expected, bufs, total_out = [], [], [], 0
        reuse = (r.flags & RUN_REUSE) and self.inputs is not None
        self.pristine = {}
        for i in range(r.nargs):
            a = r.args[i]
            if a.kind != ARG_TENSOR:
                args.append(int(a.ival) if a.kind in (ARG_INT, ARG_LONG) else float(a.fval))
                continue
            shape = [a.dims[d] for d in range(a.rank)]
            if a.io == IO_OUT:
                outs_expected.append((i, a, shape))
                total_out += a.bytes
                continue
            region = torch.frombuffer(memoryview(shm)[a.off:a.off + a.bytes + 2 * a.guard], dtype=torch.uint8) \
                if a.bytes + 2 * a.guard else torch.empty(0, dtype=torch.uint8)
            buf = None
            if reuse and i < len(self.inputs) and self.inputs[i] is not None and \
                    self.inputs[i].numel() == a.bytes + 2 * a.guard:
                buf = self.inputs[i]
            kept = self.from_kept(i, a, region)
            if kept is not None:  # the data from the device, the guards (new each run) from shm
                buf = kept.clone() if buf is None else buf.copy_(kept)
                rep.code |= INPUTS_KEPT
            elif buf is not None:
                buf.copy_(region)  # new values written into the same storage
            else:
                buf = region.to(self.device, copy=True)
            bufs.append((i, a, buf))
            self.pristine[i] = kept if kept is not None else self.kept_copy(buf)
            self.keep(i, a, self.pristine[i])
            view = buf[a.guard:a.guard + a.bytes].view(self.dt(a.dtype)).reshape(shape)
            args.append(view)
        self.inputs = [None] * r.nargs
        for i, a, buf in bufs:
            self.inputs[i] = buf
        return args, outs_expected, bufs, total_out

    def prepare_call(self, r, bufs):
        """What the run's flags ask for before the call, in this order: the side stream and its late
        inputs, the canary, a busy default stream, the profiler (started)."""
        torch = self.torch
        cuda = self.device == "cuda"
        side = torch.cuda.Stream() if cuda and (r.flags & RUN_SIDE_STREAM) else None
        delayed = []
        if side is not None:
            # the inputs' producer runs late on the caller's stream: until then they hold NaN
            # bytes, so a kernel on a stream of its own that does not wait reads garbage
            for i, a, buf in bufs:
                delayed.append((buf, buf.clone()))
                buf.fill_(0xFF)
            torch.cuda.synchronize()
        canary = None
        if cuda and (r.flags & RUN_CANARY):
            # one value in every run: an output left unwritten holds it, and must not look like
            # a read outside the inputs (whose guards do change between runs)
            canary = (self.canary_start(0xA5), 0xA5)
        if cuda and (r.flags & RUN_BUSY_DEFAULT):
            torch.cuda.synchronize()
            torch.cuda._sleep(int(5e7))  # ~30 ms of the default stream
        prof = None
        if cuda and (r.flags & RUN_PROFILE):
            from torch.profiler import ProfilerActivity, profile
            prof = profile(activities=[ProfilerActivity.CUDA])
            prof.__enter__()
        return side, delayed, canary, prof

    def timed_call(self, r, model, args, outs_expected, bufs, side, delayed, shm, rep):
        """The call, on the side stream if there is one, between two CUDA events; the outputs, read
        into shm on that same stream."""
        torch = self.torch
        cuda = self.device == "cuda"
        start = end = None
        sync = cuda and bool(r.flags & RUN_SYNC_DEVICE)  # every stream's work done before and after
        if cuda and (side is None or sync):
            # kgate's own work before the call (inputs staged, free memory prefilled) done on the whole
            # device: a kernel that does not wait for the caller's stream meets that race only in
            # placement's side-stream run, whose inputs come late on purpose (on the H200 under load
            # it also met the staging copies and the prefill, and freshness and aliasing named it)
            torch.cuda.synchronize()
        with (torch.cuda.stream(side) if side is not None else contextlib.nullcontext()):
            if delayed:
                torch.cuda._sleep(int(2e7))  # ~12 ms
                for buf, staged in delayed:
                    buf.copy_(staged, non_blocking=True)
            if cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
            with torch.no_grad(), (no_tf32(torch) if r.flags & RUN_NO_TF32 else contextlib.nullcontext()):
                result = model(*args)
            if cuda and not sync:
                end.record()
            if sync:
                torch.cuda.synchronize()
                # after every stream's work: a candidate's work on streams of its own is timed too
                # (its pace, kg_session_projected_seconds: 10 ms blocks on a side stream read 10 us)
                end.record()
            # the call's launches alone: what kgate does with the outputs after it (their digests,
            # conversions, the late-write and canary checks) launches kernels that are not the
            # candidate's (the decoy check found 8 of a torch.mul's 9 "its own": seen on the H100)
            self.profile_stop()
            self.lap("call")
            outs = self.outputs_of(result)
            if len(outs) != len(outs_expected):
                raise Refused(MISMATCH, "ModelNew returned %d outputs, the reference %d"
                              % (len(outs), len(outs_expected)))
            self.read_outputs(r, outs_expected, outs, bufs, shm, rep)
            self.lap("outputs")
        return outs, start, end

    def lap(self, name, done=False):
        """With KGATE_WORKER_TRACE=FILE, the time since the last lap of this RUN (the device
        synchronised first, so each part is its own), appended to FILE as one line per run."""
        path = os.environ.get("KGATE_WORKER_TRACE")
        if not path:
            return
        if self.device == "cuda":
            self.torch.cuda.synchronize()
        now = time.perf_counter()
        if name is None:
            self.laps = []
        else:
            self.laps.append("%s %.4f" % (name, now - self.lap_t))
        self.lap_t = now
        if done:
            with open(path, "a") as f:
                f.write("run %s\n" % " ".join(self.laps))

    def read_outputs(self, r, outs_expected, outs, bufs, shm, rep):
        """Each output checked against the reference's dtype, shape and device (under RUN_LENIENT,
        KernelBench's shape check and a cast), noted when it shares an input's storage, and read
        into its place in shm: on the current stream, as the caller would (work left on another
        stream without synchronisation is not waited for), with no host copy of its own."""
        torch = self.torch
        lenient = bool(r.flags & RUN_LENIENT)  # KernelBench's test: a shape check, then allclose
        ready = []  # every output checked before the first is read
        for j, ((i, a, shape), o) in enumerate(zip(outs_expected, outs)):
            arg = i
            if lenient:
                if list(o.shape) != shape:
                    raise Refused(MISMATCH, "output %d has shape %s, the reference's %s" % (j, list(o.shape), shape))
                o = o.as_subclass(torch.Tensor).to(self.dt(a.dtype)) if type(o) is not torch.Tensor \
                    else o.to(self.dt(a.dtype))
            else:
                if type(o) is not torch.Tensor:
                    raise Refused(MISMATCH, "output %d is a %s, a subclass of torch.Tensor (lazy evaluation?)"
                                  % (j, type(o).__name__))
                if o.dtype != self.dt(a.dtype) or list(o.shape) != shape:
                    raise Refused(MISMATCH, "output %d is %s%s, the reference's is %s%s"
                                  % (j, self.dtname(o.dtype), list(o.shape), DTYPES[a.dtype], shape))
                if o.device.type != torch.device(self.device).type:
                    raise Refused(MISMATCH, "output %d is on %s, the inputs on %s" % (j, o.device, self.device))
                for _, _, buf in bufs:
                    lo = buf.data_ptr()
                    if o.numel() and lo <= o.data_ptr() < lo + buf.numel():
                        rep.code |= OUT_SHARES_INPUT
            ready.append((arg, a, o))
        # each output as read (a sample of its bytes, kept on the device) to compare once the whole
        # device is done: one that changed since was still being written by work the call left on
        # another stream; taken before the read below, in the caller's stream's order
        watch = self.device == "cuda" and not (r.flags & RUN_SYNC_DEVICE)
        self.as_read = []
        digested = bool(r.flags & RUN_DIGEST)  # the outputs stay here: their digests go back instead
        summed = digested or bool(r.flags & RUN_DIGEST_ALSO)  # ... or with them
        for i, a, o in ready:
            b = o.detach().contiguous().reshape(-1).view(torch.uint8)
            if b.numel():
                snap = self.kept_copy(late_sample(b)) if watch else None
                if snap is not None:
                    self.as_read.append((snap, o))
                if not digested:
                    torch.frombuffer(memoryview(shm)[a.off + a.guard:a.off + a.guard + a.bytes],
                                     dtype=torch.uint8).copy_(b)
            if summed:
                rep.digest[i] = digest(torch, b)
                rep.prefilled[i] = -1 if r.fill == FILL_GARBAGE else prefilled_count(torch, o, r.fill_byte)

    def from_kept(self, i, a, region):
        """The copy of input i kept on the device at an earlier run, when the judge's tag says these
        are the same data bytes and the copy still holds them (its checksum as kept: a kernel that
        wrote outside its buffers may have changed it), with this run's guards written into it;
        else None, and no copy kept (it would only add to this run's memory). At real sizes this
        replaces a gigabyte's host-to-device copy per run."""
        k = self.kept.get(i)
        if not a.tag or k is None or k[0] != a.tag or k[1].numel() != a.bytes + 2 * a.guard or \
                self.checksum(k[1], a) != k[2]:
            self.kept.pop(i, None)
            return None
        buf, g, n = k[1], a.guard, a.bytes
        if g:
            buf[:g].copy_(region[:g])
            buf[g + n:].copy_(region[g + n:])
        return buf

    def keep(self, i, a, copy):
        """Keeps the pristine copy of input i for later runs on the same tag."""
        if copy is None or not a.tag or i in self.kept:
            return
        s = self.checksum(copy, a)
        if s is not None:
            self.kept[i] = (a.tag, copy, s)

    def checksum(self, buf, a):
        """The data bytes' sum as 64-bit words, wrapping (a change of any one word changes it),
        computed on the device at its bandwidth; None where the words do not line up."""
        if a.guard % 8 or a.bytes % 8 or not a.bytes:
            return None
        return int(buf[a.guard:a.guard + a.bytes].view(self.torch.int64).sum())

    def kept_copy(self, buf):
        """A copy of an input region as staged, on its device (where it compares at the device's
        bandwidth), to tell after the call whether it changed; None where there is no room."""
        try:
            return buf.clone()
        except (RuntimeError, MemoryError):
            return None

    def write_back(self, shm, bufs, rep):
        """Each input with its guards as the kernel left them, into shm where the outputs are; only
        those the call changed (compared on the device with the copy kept at staging): shm holds
        the others as sent, and when that is all of them the reply says so (INPUTS_AS_SENT), so the
        judge need not compare them again. At real sizes this saves a device-to-host copy and a
        host comparison of every input on every run."""
        torch = self.torch
        as_sent = True
        for i, a, buf in bufs:
            kept = self.pristine.get(i)
            if not buf.numel() or (kept is not None and torch.equal(buf, kept)):
                continue
            as_sent = False
            torch.frombuffer(memoryview(shm)[a.off:a.off + a.bytes + 2 * a.guard], dtype=torch.uint8).copy_(buf)
        self.pristine = {}
        if as_sent:
            rep.code |= INPUTS_AS_SENT

    def raw(self, addr, n):
        """A uint8 view of n bytes of device memory at addr (memory the caching allocator holds)."""
        class Mem:
            pass
        m = Mem()
        m.__cuda_array_interface__ = {"shape": (n,), "typestr": "|u1", "data": (addr, False), "version": 3}
        return self.torch.as_tensor(m, device=self.device)

    def free_blocks(self):
        """(address, size) of every block the CUDA caching allocator holds but has not handed out."""
        out = []
        for seg in self.torch.cuda.memory_snapshot():
            addr = seg["address"]
            for b in seg["blocks"]:
                addr = b.get("address", addr)
                if b["state"] == "inactive" and b["size"]:
                    out.append((addr, b["size"]))
                addr += b["size"]
        return out

    def poison(self, r, total):
        """Fill the memory outputs will be allocated from, as kgate prefills outputs: on the GPU
        every free block of the caching allocator (whichever one torch.empty picks), after making
        sure one is large enough; on the CPU a freed buffer of the right size."""
        torch = self.torch
        n = 2 * total + (1 << 20)
        g = None
        if r.fill == FILL_GARBAGE:
            g = torch.Generator(device=self.device)
            g.manual_seed(int(r.fill_seed) % (2 ** 63))
        if self.device != "cuda":
            if total >= CPU_POISON_MAX:  # outputs this large are mapped afresh by glibc: zero pages,
                return  # never the poisoned ones, 0.17 s a run for 34 MB of outputs (measured)
            buf = torch.randint(0, 256, (n,), dtype=torch.uint8, generator=g) if g is not None else \
                torch.full((n,), r.fill_byte, dtype=torch.uint8)
            del buf
            return
        buf = torch.empty(n, dtype=torch.uint8, device="cuda")
        del buf
        for addr, size in self.free_blocks():
            v = self.raw(addr, size)
            if g is not None:
                v.random_(0, 256, generator=g)
            else:
                v.fill_(r.fill_byte)

    def canary_start(self, byte):
        """Before a call: every free block of the caching allocator set to byte, and allocation
        history on, so that afterwards a changed byte outside anything allocated during the call
        is a write outside every tensor (past the end of an output, usually)."""
        torch = self.torch
        blocks = self.free_blocks()
        for addr, size in blocks:
            self.raw(addr, size).fill_(byte)
        torch.cuda.synchronize()
        try:
            torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python",
                                                     max_entries=1 << 16)
        except Exception:  # an older PyTorch: no history, no check
            return None
        return blocks

    def canary_host(self):
        """The host buffer canary_check reads device memory into: CANARY_READ bytes, pinned when the
        driver allows (a copy to it is one DMA, not staged through bounce buffers), made once."""
        if self.canary_buf is None:
            try:
                self.canary_buf = self.torch.empty(CANARY_READ, dtype=self.torch.uint8, pin_memory=True)
            except RuntimeError:
                self.canary_buf = self.torch.empty(CANARY_READ, dtype=self.torch.uint8)
        return self.canary_buf

    def canary_check(self, blocks, byte, outs, rep):
        torch = self.torch
        torch.cuda.synchronize()
        try:
            snap = torch.cuda.memory._snapshot()
        finally:
            torch.cuda.memory._record_memory_history(enabled=None)
        allocs = []
        for trace in snap.get("device_traces", []):
            allocs += [(e["addr"], e["addr"] + e["size"]) for e in trace if e.get("action") == "alloc"]
        allocs.sort()
        word = int.from_bytes(bytes([byte]) * 8, "little", signed=True)
        bad, first, where = 0, None, None
        for addr, size in blocks:
            # the parts of this free block nothing was allocated in during the call
            lo, end, parts = addr, addr + size, []
            for a, b in allocs:
                if b <= lo or a >= end:
                    continue
                if a > lo:
                    parts.append((lo, a))
                lo = max(lo, b)
            if lo < end:
                parts.append((lo, end))
            for a, b in parts:
                # read back to the host: a comparison on the device would allocate its result in
                # the very blocks being checked (measured on the H200: one in a memory pool of its
                # own found its own result there too). A write past an end lands at the start of
                # a part: the first CANARY_READ bytes of each are read, into a pinned buffer kept
                # for the worker's life, and compared 8 bytes at a time; the bytes are counted
                # only where something changed (a new pageable tensor and a byte-wise nonzero per
                # part took 0.3 s a run for one real-size matmul)
                n = min(b, a + CANARY_READ) - a
                host = self.canary_host()[:n]
                host.copy_(self.raw(a, n))
                n8 = n & ~7
                if not (host[:n8].view(torch.int64) != word).any() and not (host[n8:] != byte).any():
                    continue
                changed = (host != byte).nonzero()
                bad += changed.numel()
                at = a + int(changed[0])
                if first is None or at < first:
                    first = at
        if not bad:
            return
        rep.code |= OUT_OOB_WRITE
        # name the allocation the write ran past: the nearest one ending at or before it
        prev = [(b, a) for a, b in allocs if b <= first]
        if prev:
            end, start = max(prev)
            for j, o in enumerate(outs):
                if start <= o.data_ptr() < end:
                    where = "output %d (%d bytes, allocated by the candidate)" % (j, o.numel() * o.element_size())
            what = where or "a %d-byte block allocated during the call" % (end - start)
            rep.msg = ("%d bytes written outside every tensor, the first %d bytes past the end of %s"
                       % (bad, first - end, what)).encode()[:4095]
        else:
            rep.msg = ("%d bytes written outside every tensor, in memory no allocation of the call covered"
                       % bad).encode()[:4095]


# ---- standard test: KernelBench's own check, in this process (STANDARD) --------------------------

class StandardTest:
    """Worker's STANDARD."""

    def standard(self, req, shm, rep):
        """KernelBench's correctness check as that project runs it, in this fresh process: Model
        and ModelNew built with seed 42, five trial seeds drawn from a generator seeded 42, for
        each trial get_inputs(), the reference then the candidate on the same inputs (so the
        candidate's allocations may reuse what the reference just freed, as under KernelBench),
        a shape check and torch.allclose(atol=rtol=tol). code 1: every trial passed."""
        torch = self.torch
        p = req.u.problem
        self.set_symbols(p.sym_names, p.sym_values, p.nsym)
        dev = self.device
        cuda = dev == "cuda"

        def build(cls):
            torch.manual_seed(KERNEL_SEED)
            m = cls(*self.problem.get_init_inputs())
            return m.to(dev) if isinstance(m, torch.nn.Module) else m

        try:
            return self.standard_trials(build, req, rep)
        finally:
            # this worker's last request: its reply may wait unread until the judge asks for the
            # baseline at the end of the check, holding what the trials cached (14.5 GiB on the
            # H100 for a 4.3 GB pool, every second of the gates after them); it goes back now
            if cuda:
                gc.collect()
                torch.cuda.empty_cache()

    def standard_trials(self, build, req, rep):
        """standard()'s models and trials: every tensor they make is gone when this returns."""
        torch = self.torch
        p = req.u.problem
        dev = self.device
        cuda = dev == "cuda"
        ref = build(self.problem.Model)
        new = build(self.candidate.ModelNew)
        torch.manual_seed(KERNEL_SEED)
        seeds = [int(torch.randint(0, 2 ** 32 - 1, (1,)).item()) for _ in range(5)]
        rep.code = 0
        # Only what KernelBench's loop holds lives across trials (inputs, output, output_new): a
        # reference output from the trial before is free when the candidate allocates, as there.
        # The RNG is seeded before the reference call only, as there (KernelBench seeds before
        # moving each model to the device, which is a no-op after the first trial).
        with torch.no_grad():
            for trial, seed in enumerate(seeds, 1):
                torch.manual_seed(seed)
                xs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in self.problem.get_inputs()]
                torch.manual_seed(seed)
                a = ref(*xs)
                if cuda:
                    torch.cuda.synchronize()
                try:
                    b = new(*xs)
                    if cuda:
                        torch.cuda.synchronize()
                except Exception as e:
                    rep.msg = ("trial %d: ModelNew raised %s: %s" % (trial, type(e).__name__, e)).encode()[:4095]
                    return OK
                why = self.standard_compare(trial, a, b, p.tol)
                if why:
                    rep.msg = why.encode()[:4095]
                    return OK
        rep.code = 1
        rep.msg = ("5 trials allclose(atol=rtol=%g)" % p.tol).encode()
        return OK

    def standard_compare(self, trial, a, b, tol):
        """KernelBench's check of one trial: None, or why it failed. A function of its own, so
        that nothing it looks at outlives the trial."""
        torch = self.torch
        aa = list(a) if isinstance(a, (tuple, list)) else [a]
        bb = list(b) if isinstance(b, (tuple, list)) else [b]
        for j, (x, y) in enumerate(zip(aa, bb)):
            name = "out%d" % j
            if not isinstance(y, torch.Tensor) or len(aa) != len(bb) or x.shape != y.shape:
                return ("trial %d: %s shape %s, the reference's %s"
                        % (trial, name, list(getattr(y, "shape", [])), list(x.shape)))
            if not self.standard_allclose(x, y, tol):
                i = self.standard_worst(x, y, tol)
                idx, r = [], i
                for d in reversed(x.shape):
                    idx.insert(0, r % d)
                    r //= d
                return ("trial %d: %s%s = %.6g, reference %.6g: not allclose(atol=rtol=%g)"
                        % (trial, name, "".join("[%d]" % k for k in idx), float(y.reshape(-1)[i]),
                           float(x.reshape(-1)[i]), tol))
        return None

    def standard_worst(self, x, y, tol):
        """The flat index where y misses allclose(x) by the most (|x - y| - tol |y|, NaN the most;
        the first of equals), over blocks as standard_allclose: float64 copies of the whole outputs
        were 16 bytes an element, on a device the trials may have nearly filled."""
        xf, yf, blk = x.reshape(-1), y.reshape(-1), block_of(x)
        best, at = None, 0
        for i in range(0, xf.numel(), blk):
            xd, yd = xf[i:i + blk].double(), yf[i:i + blk].double()
            miss = ((xd - yd).abs() - tol * yd.abs()).nan_to_num(float("inf"))
            k = int(miss.argmax())
            if best is None or float(miss[k]) > best:
                best, at = float(miss[k]), i + k
        return at

    def standard_allclose(self, x, y, tol):
        """torch.allclose(x, y, atol=tol, rtol=tol), over blocks (block_of) where both are
        contiguous: the same predicate (element by element, then all), but its temporaries (|x - y|,
        |y|, their sums and masks: 3.8 times the output's bytes, measured on the CPU) are a
        block's, not the whole output's. The trials' peak was the largest device share of a
        real-size pair beside its gates (l1_42, a 2.1 GB max pool output: 18 GiB, H100)."""
        torch = self.torch
        n, blk = x.numel(), block_of(x)
        if n <= blk or not (x.is_contiguous() and y.is_contiguous()):
            return torch.allclose(x, y, atol=tol, rtol=tol)
        xf, yf = x.reshape(-1), y.reshape(-1)
        return all(torch.allclose(xf[i:i + blk], yf[i:i + blk], atol=tol, rtol=tol) for i in range(0, n, blk))


# ---- sampling: cases too large to ship (SAMPLE) --------------------------------------------------

class Sampling:
    """Worker's SAMPLE."""

    def sample(self, req, shm, rep):
        """A case too large to ship (more than 2^31 elements): inputs drawn by get_inputs() on the
        device itself (same seed and device in both workers, so the same values), the reference
        in the problem's dtype with TF32 off (role 0) or ModelNew (role 1), and each output read
        back only at the flat int64 indices in shm[off[0]:], as float64 at shm[off[1 + j]:]."""
        torch = self.torch
        p = req.u.problem
        self.set_symbols(p.sym_names, p.sym_values, p.nsym)
        n = p.bytes[0] // 8
        idx = torch.frombuffer(memoryview(shm)[p.off[0]:p.off[0] + 8 * n], dtype=torch.int64).clone()
        if self.device == "cuda":
            # what the earlier runs left here goes back first: the inputs kept for staging and
            # the allocator's cache of the nominal size (a 4.3 GB max pool's candidate held 17 GB
            # of it, H100, 2026-12-06), which blocks of this case's sizes would not reuse; this
            # case then needs less free device memory, and meets a full one less often while it
            # holds the host-wide turn (gates/limits.c) that every other check waits for
            self.kept = {}
            gc.collect()
            torch.cuda.empty_cache()
        try:
            torch.manual_seed(p.seed % (2 ** 64))
            with torch.device(self.device):
                xs = [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in self.problem.get_inputs()]
            if self.device == "cuda":
                torch.cuda.synchronize()  # stream misuse is placement's business, not this test's
            cls = self.candidate.ModelNew if self.role == 1 else self.problem.Model
            torch.manual_seed(KERNEL_SEED)
            with torch.device(self.device):  # parameters made where they live, not on the CPU
                m = cls(*self.problem.get_init_inputs())
            if isinstance(m, torch.nn.Module):
                m = m.to(self.device).eval()
            tf32 = torch.backends.cuda.matmul.allow_tf32
            if self.role == 0:
                torch.backends.cuda.matmul.allow_tf32 = False
            try:
                with torch.no_grad():
                    outs = self.outputs_of(m(*xs))
                    if self.device == "cuda":
                        torch.cuda.synchronize()
            finally:
                torch.backends.cuda.matmul.allow_tf32 = tf32
            if len(outs) != p.ntensor:
                raise Refused(MISMATCH, "%d outputs, expected %d" % (len(outs), p.ntensor))
            d = idx.to(self.device)
            for j, o in enumerate(outs):
                flat = o.reshape(-1)
                if flat.numel() <= int(idx.max()):
                    raise Refused(MISMATCH, "output %d has %d elements, fewer than sampled" % (j, flat.numel()))
                vals = flat[d].to("cpu", torch.float64)
                torch.frombuffer(memoryview(shm)[p.off[1 + j]:p.off[1 + j] + 8 * n], dtype=torch.float64).copy_(vals)
        finally:
            # every name that holds a tensor of this case (the loop's last output and its view
            # too): empty_cache cannot return a block that something still references
            xs = outs = m = d = o = flat = vals = None
            if self.device == "cuda":
                torch.cuda.empty_cache()  # the next, ordinary case must not inherit gigabytes
        return OK


# ---- profiling: the kernels a call launches (the decoy check, the resources view) ----------------

def is_copy(name):
    """Memory copies and sets are not kernels of anyone's: kgate itself copies outputs back."""
    return name.startswith("Memcpy") or name.startswith("Memset")


class Profiling:
    """The CUDA kernels of a call, from torch.profiler."""

    def profile(self, fn):
        """Names of the CUDA kernels fn launches (truncated as kgate's records are)."""
        torch = self.torch
        from torch.profiler import ProfilerActivity, profile
        with torch.no_grad():
            fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
        names = []
        for e in prof.events():
            if getattr(e, "device_type", None) is not None and str(e.device_type).endswith("CUDA"):
                n = e.name[:120]
                if n not in names and not is_copy(n):
                    names.append(n)
        return names

    def profile_stop(self):
        """A RUN's profiler (self.profiling) stopped, once, after the kernels it saw have run."""
        if self.profiling is not None:
            self.torch.cuda.synchronize()
            self.profiling.__exit__(None, None, None)
            self.profiling = None

    def records(self, prof, rep):
        """Kernels launched during the call, for kgate's decoy check and resources view."""
        seen = []
        for e in prof.events():
            if not str(getattr(e, "device_type", "")).endswith("CUDA"):
                continue
            n = e.name[:120]
            if n in [s[0] for s in seen] or is_copy(n):
                continue
            seen.append((n, e))
        rep.nlaunch = min(len(seen), MAX_RECS)
        rep.cupti_ok = 1
        for j, (n, e) in enumerate(seen[:MAX_RECS]):
            rec = rep.launch[j]
            rec.name = n.encode()[:127]
            rec.seconds = getattr(e, "cuda_time", 0) / 1e6 if hasattr(e, "cuda_time") else -1


# ---- serving: the request loop on fd 3 -----------------------------------------------------------

class Worker(Loading, Inputs, OracleModes, Runs, StandardTest, Sampling, Profiling):
    """One worker's state between requests; its commands are the methods of the sections above."""

    def __init__(self):
        self.torch = None
        self.role = None
        self.problem = None
        self.candidate = None
        self.originals = {}
        self.models = {}
        self.names_of = {}  # class: code_names (model_key); None: one model per constants
        self.meta_describe = False  # whether the shape probes run on the meta device (describe)
        self.inputs = None  # the candidate's input buffers (kept for KG_RUN_REUSE)
        self.kept = {}  # arg index: (tag, pristine copy on the device, checksum) (from_kept)
        self.pristine = {}  # a copy of each input region as staged, on its device (write_back)
        self.as_read = []  # (the bytes as read on the caller's stream, the output): a RUN's late writes
        self.laps, self.lap_t = [], 0.0  # KGATE_WORKER_TRACE: this RUN's parts so far (lap)
        self.resident = {}  # oracle cases kept on the device: id -> {evaluation: [outputs], "ref": [...]}
        self.canary_buf = None  # canary_host's pinned buffer
        self.profiling = None  # a RUN's torch.profiler while it records (RUN_PROFILE)
        self.device = "cpu"
        self.sock = None  # the judge's socket, for LOAD's interim reply


def serve(fd):
    """Requests on fd, one reply each, until QUIT or the judge closes: 0 (1: a protocol mismatch)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=fd)
    w = Worker()
    w.sock = sock
    size = C.sizeof(Req)
    shared = SharedMemory()
    while True:
        try:
            data, anc, _, _ = sock.recvmsg(size, socket.CMSG_SPACE(4))
        except (ConnectionError, OSError):
            return 0
        if not data:
            return 0
        shm_fd = passed_fd(anc)
        rep = Reply()
        rep.magic = MAGIC
        rep.nlaunch = -1
        if len(data) != size:
            rep.status = BAD_REQUEST
            rep.msg = b"request of the wrong size: kgate and torch_runner.py disagree on the protocol"
            sock.sendmsg([bytes(rep)])
            return 1
        req = Req.from_buffer_copy(data)
        if req.cmd == QUIT:
            return 0
        dead = answer(w, req, shm_fd, shared, rep)
        rep.dev_peak, rep.dev_held = device_memory(w.torch)
        sys.stdout.flush()
        sys.stderr.flush()
        sock.sendmsg([bytes(rep)])
        if dead:  # the CUDA context is unusable after such an error
            return 0


def device_memory(torch):
    """The most device memory this worker's caching allocator has reserved, and what it reserves now,
    in bytes ((0, 0): none yet, or no device); the judge reports them per worker
    (memory.device_peak, memory.device_held of a record)."""
    try:
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return int(torch.cuda.max_memory_reserved()), int(torch.cuda.memory_reserved())
    except Exception:  # a dead CUDA context: the reply says why; the memory is not known
        pass
    return 0, 0


def give_back_cache(w):
    """What the caching allocator keeps beyond what is allocated goes back to the device when it is
    more than SLACK_KEPT. The oracle's worker keeps the reference's float64 intermediates
    between calls otherwise: on the H100 it held its peak, 16.5-21.4 GiB, for the whole check of
    a 1.6-4.3 GB pair, where its resident outputs needed a few; the big pairs of an audit then
    ran one at a time. Its next call allocates again (cudaMalloc of GBs: milliseconds, against
    the seconds of a float64 reference at that size)."""
    torch = w.torch
    try:
        if w.device == "cuda" and torch.cuda.memory_reserved() - torch.cuda.memory_allocated() > SLACK_KEPT:
            torch.cuda.empty_cache()
    except Exception:  # a dead context: the reply already says why
        pass


def answer(w, req, shm_fd, shared, rep):
    """Serve one request into rep, closing its memfd; whether the CUDA context died doing it."""
    dead = full = False
    try:
        shm = shared.view(shm_fd, shm_size(req)) if shm_fd >= 0 else None
        rep.status = dispatch(w, req, shm, rep)
    except Refused as e:
        rep.status = e.status
        rep.msg = str(e).encode()[:4095]
    except Exception as e:
        msg = failure(e)
        cuda_dead = "CUDA error" in str(e) or "illegal memory access" in str(e) or "device-side assert" in str(e)
        rep.status = CUDAERR if cuda_dead else EXCEPTION
        rep.msg = msg.encode()[:4095]
        dead = cuda_dead
        full = type(e).__name__ == "OutOfMemoryError" or "CUDA out of memory" in str(e)
    finally:
        if shm_fd >= 0:
            os.close(shm_fd)
    if not dead and not full and req.cmd in GIVES_BACK:
        give_back_cache(w)
    if full and not dead:
        # the judge may send this request again after a wait (kg_session_wait_device): what the
        # failed call allocated goes back to the device now, not when the caching allocator
        # next needs it (the exception and its frames, which held it, are gone by here)
        gc.collect()
        try:
            w.torch.cuda.empty_cache()
        except Exception:
            pass
    return dead


def dispatch(w, req, shm, rep):
    """The command's reply status; LOAD must come first."""
    if req.cmd == LOAD:
        return w.load(req, rep)
    elif w.torch is None:
        raise Refused(BAD_REQUEST, "request before load")
    elif req.cmd == DESCRIBE:
        return w.describe(req, shm, rep)
    elif req.cmd == INPUTS:
        return w.inputs_cmd(req, shm, rep)
    elif req.cmd == ORACLE:
        return w.oracle(req, shm, rep)
    elif req.cmd == RESIDENT:
        return w.resident_cmd(req, shm, rep)
    elif req.cmd == RUN:
        return w.run(req, shm, rep)
    elif req.cmd == STANDARD:
        return w.standard(req, shm, rep)
    elif req.cmd == SAMPLE:
        return w.sample(req, shm, rep)
    else:
        raise Refused(BAD_REQUEST, "unknown command %d" % req.cmd)


def serve_profiled(fd):
    """serve(fd), under cProfile when $KGATE_WORKER_PROFILE names a folder: the stats go to
    FOLDER/torch-worker-PID.prof (python3 -m pstats reads them)."""
    out = os.environ.get("KGATE_WORKER_PROFILE")
    if not out:
        return serve(fd)
    import cProfile
    prof = cProfile.Profile()
    prof.enable()
    try:
        return serve(fd)
    finally:
        prof.disable()
        prof.dump_stats(os.path.join(out, "torch-worker-%d.prof" % os.getpid()))


# ---- zygote: the fork server (python3 torch_runner.py --zygote NAME) -----------------------------

def watchdog(fd):
    """A worker forked by the zygote is not the judge's child: it ends itself (and what it
    started) when the judge is gone, even in the middle of a hung kernel. It watches the
    judge's end of its socket (fd), not the judge's pid, which a worker in a PID namespace of
    the zygote's cannot see."""
    p = select.poll()
    p.register(fd, select.POLLRDHUP | select.POLLHUP)
    while True:
        if any(ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR) for _, ev in p.poll(500)):
            os.killpg(0, signal.SIGKILL)


def zygote(name):
    """Fork server: imports PyTorch (alone: see import_torch_for_fork) once, before any CUDA call,
    then forks a fresh worker per request, so a worker costs a fork and a CUDA initialisation
    instead of an interpreter start and a PyTorch import. kgate connects to the abstract socket
    NAME and sends {"env": {...}} with two descriptors (the worker's socket, its log); the reply
    is {"pid": N}. The zygote writes each child's wait status at the end of that child's log
    ("kgate-zygote: wait status N"), and exits when fd 3 (its owner) closes."""
    owner = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=3)
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # fork() of a threaded process
    compiled_modules_cache()  # before the import: the children inherit it
    try:
        torch = import_torch_for_fork()
    except Exception as e:
        owner.send(("error: %s" % e).encode()[:1000])
        return 1
    preload_for_workers(torch)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind("\0" + name)
    srv.listen(64)
    logs = {}  # pid: the child's log, where reap() writes its wait status
    signal.signal(signal.SIGCHLD, lambda *_: reap(logs))
    owner.send(("ready: python %d.%d, torch %s" % (sys.version_info[0], sys.version_info[1],
                                                  torch.__version__)).encode())
    while True:
        ready, _, _ = select.select([srv, owner], [], [])
        if owner in ready:  # the owner closed its end (or sent something): done
            return 0
        conn, _ = srv.accept()
        with conn:
            request = zygote_request(conn)
            if request is None:
                continue
            env, fds = request
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
            rd, wr = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(rd)
                worker_child(srv, conn, owner, env, fds, wr)  # does not return
            os.close(wr)
            logs[pid] = fds[1]
            os.close(fds[0])
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            # the judge signals the worker by its pid as /proc numbers it (the zygote may live in a
            # PID namespace of its own, where os.fork() returns another number)
            host = os.read(rd, 32)
            os.close(rd)
            conn.send(json.dumps({"pid": int(host) if host.strip().isdigit() else pid}).encode())


def compiled_modules_cache():
    """Python compiles each module it imports that has no current .pyc, and keeps the result
    beside the source when it may write there. Where PyTorch's folder holds no compiled copy of
    the modules it imports lazily (torch._dynamo, sympy, Triton: ~830 of them, pulled in by the
    oracle's dispatch mode and the canary), every worker compiled them again: ~5 s a worker on
    the H200, three workers a check. That happens when the compiled copies cannot be written
    there (a site-packages a sealed worker, without capabilities, cannot write) or may not be
    (PYTHONDONTWRITEBYTECODE, common in container images). Then compiled modules go to kgate's
    own cache (beside this file), compiled once per cache: the sources' folders stay untouched,
    which is what that setting asks. Where the .pyc are there, nothing changes."""
    if sys.pycache_prefix is not None:
        return
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return
    pkg = os.path.dirname(spec.origin)
    probe = os.path.join(pkg, "_dynamo", "utils.py")
    if not os.path.exists(probe):
        probe = spec.origin
    try:
        if os.path.exists(importlib.util.cache_from_source(probe)):
            return
    except (NotImplementedError, ValueError):
        return
    sys.pycache_prefix = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pycache")
    sys.dont_write_bytecode = False


def import_torch_for_fork():
    """PyTorch, once a forked probe has shown that the import left CUDA uninitialised."""
    # PyTorch alone: importing torch.utils.cpp_extension or Triton queries the CUDA driver
    # (seen with torch 2.11), after which a forked child cannot use CUDA
    import torch
    probe = os.fork()
    if probe == 0:
        os._exit(1 if torch.cuda._is_in_bad_fork() or torch.cuda.is_initialized() else 0)
    if os.waitpid(probe, 0)[1]:
        raise RuntimeError("CUDA was initialised while importing PyTorch: a forked worker could not use it")
    return torch


# What workers import on first use that the zygote can import for all of them: torch._dynamo, and
# with it sympy, torch.fx's symbolic shapes, torch.distributed (~880 modules with PyTorch 2.11),
# pulled in by the oracle's dispatch mode and the kernel records' profiler. KGATE_ZYGOTE_PRELOAD:
# a comma-separated list instead, "0" none.
WORKER_LAZY = "torch._dynamo"


def preload_for_workers(torch):
    """The modules of WORKER_LAZY imported into the zygote, so that each forked worker has them
    instead of importing them itself (H100, 2026-12-06: the oracle's and the candidate's workers
    of every check each imported ~820 modules, 2.6 s with their compiled copies cached and 5 s
    without; the other workers of a check, none), as long as a child forked after that can still
    use CUDA: a module that touches the driver when imported (torch.utils.cpp_extension, seen
    with PyTorch 2.11) would leave every worker unable to. Then the zygote starts again without
    them. A module that does not import is left out."""
    names = os.environ.get("KGATE_ZYGOTE_PRELOAD", WORKER_LAZY)
    if names.strip() in ("", "0"):
        return
    before = len(sys.modules)
    for name in names.split(","):
        try:
            importlib.import_module(name.strip())
        except Exception:  # not in this PyTorch (1.x has no torch._dynamo), or broken: the workers'
            pass  # own import says so if they need it
    if len(sys.modules) == before:
        return
    probe = os.fork()
    if probe == 0:
        code = 0
        try:
            if torch.cuda.is_available():
                torch.zeros(1, device="cuda")
                torch.cuda.synchronize()
        except Exception:
            code = 1
        os._exit(code)
    if os.waitpid(probe, 0)[1] == 0:
        return
    # the zygote again, without them: its owner's socket (fd 3) and the judge's /proc kept
    os.environ["KGATE_ZYGOTE_PRELOAD"] = "0"
    os.set_inheritable(3, True)
    if HOST_PROC is not None:
        os.set_inheritable(HOST_PROC, True)
        os.environ["KGATE_HOST_PROC_FD"] = str(HOST_PROC)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable] + sys.argv)


def reap(logs):
    """SIGCHLD: each ended child's wait status at the end of its log, and the log closed."""
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = logs.pop(pid, None)
        if fd is not None:
            try:
                os.write(fd, b"\nkgate-zygote: wait status %d\n" % st)
            finally:
                os.close(fd)




def zygote_request(conn):
    """(env, [worker socket, log]) of one request; None once the error is sent."""
    try:
        data, anc, _, _ = conn.recvmsg(1 << 20, socket.CMSG_SPACE(2 * 4))
        fds = []
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += [int.from_bytes(payload[i:i + 4], sys.byteorder) for i in range(0, len(payload), 4)]
        env = json.loads(data)["env"]
    except Exception as e:
        conn.send(json.dumps({"error": str(e)}).encode())
        return None
    if len(fds) != 2:
        for fd in fds:
            os.close(fd)
        conn.send(json.dumps({"error": "expected two descriptors"}).encode())
        return None
    return env, fds


# The judge's /proc, where the worker's /proc is its own namespace's (worker.c own_proc): the fork
# server's children read their pid as the judge numbers it there. No candidate sees it.
HOST_PROC = None


def drop_host_proc():
    global HOST_PROC
    fd = os.environ.pop("KGATE_HOST_PROC_FD", None)
    for f in {HOST_PROC, int(fd) if fd else None} - {None}:
        try:
            os.close(f)
        except OSError:
            pass
    HOST_PROC = None


def worker_child(srv, conn, owner, env, fds, wr):
    """The forked worker: its pid as /proc numbers it sent to the zygote (on wr), the zygote's
    sockets closed, its own process group, the request's socket on fd 3 and log on 1 and 2, the
    judge's environment, sealed, then serving. Exits."""
    code = 1
    try:
        os.write(wr, os.readlink("self", dir_fd=HOST_PROC).encode() if HOST_PROC is not None
                 else os.readlink("/proc/self").encode())
        os.close(wr)
        drop_host_proc()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        srv.close()
        conn.close()
        owner.close()
        os.setpgid(0, 0)
        C.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: dies with the zygote
        os.dup2(fds[1], 1)
        os.dup2(fds[1], 2)
        os.dup2(fds[0], 3)
        os.close(fds[0])
        os.close(fds[1])
        os.environ.clear()
        os.environ.update(env)
        why = seal()  # still one thread: the watchdog below inherits the dropped rights
        if why:
            print("kgate worker: not sealed: %s" % why, flush=True)
            os._exit(1)
        threading.Thread(target=watchdog, args=(3,), daemon=True).start()
        code = serve_profiled(3)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


# ---- main ----------------------------------------------------------------------------------------

if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--layout":
        print(json.dumps(layout()))
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "--zygote":
        if os.environ.get("KGATE_HOST_PROC_FD"):
            HOST_PROC = int(os.environ.pop("KGATE_HOST_PROC_FD"))
        sys.exit(zygote(sys.argv[2]))
    drop_host_proc()
    compiled_modules_cache()
    why = seal()
    if why:
        sys.exit("kgate worker: not sealed: %s (KGATE_SANDBOX=0 runs it anyway)" % why)
    sys.exit(serve_profiled(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
