/* runner_cuda.c: the CUDA runner's kg_runner_ops (init is api.c's), as the worker calls them:
 * load (compile.c's binary, loaded in the primary context and checked against the contract's
 * args), device memory, launches timed by events, the pair runs' start gate, sync and fini.
 * Every driver call is checked and a failure names the call and the CUDA error. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "runners/cuda/cuda.h"
/* by relative path: the toolkit has a <cupti.h> of its own */
#include "probes/cupti.h"

_Static_assert(sizeof(CUdeviceptr) == sizeof(uint64_t), "kgate handles are 64-bit device pointers");

#define DEFAULT_DYN_SMEM (48 * 1024)
#define SPIN_NAME        "kgate_spin" /* the .entry of spin.ptx */

/* ---------------------------------------------------------------------------------------
 * load */

/* The primary context, two non-blocking streams and the timing events. Created at load,
 * after the CUPTI probe has started (CUPTI wants to see the context being made). */
static int ctx_setup(struct cuda *c, struct kg_reply *rep)
{
    if (c->ctx) return KG_WS_OK;
    CUresult r;
    CUcontext ctx = NULL;
    if ((r = c->cu.DevicePrimaryCtxRetain(&ctx, c->dev)) != CUDA_SUCCESS)
        return kg_cu_fail(c, rep, KG_WS_UNAVAILABLE, r, "cuDevicePrimaryCtxRetain(device 0)");
    c->ctx = ctx;
    if ((r = c->cu.CtxSetCurrent(ctx)) != CUDA_SUCCESS)
        return kg_cu_fail(c, rep, KG_WS_UNAVAILABLE, r, "cuCtxSetCurrent");
    for (int i = 1; i < 3; i++)
        if ((r = c->cu.StreamCreate(&c->stream[i], CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
            return kg_cu_fail(c, rep, KG_WS_UNAVAILABLE, r, "cuStreamCreate(CU_STREAM_NON_BLOCKING)");
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++)
            if ((r = c->cu.EventCreate(&c->ev[i][k], CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
                return kg_cu_fail(c, rep, KG_WS_UNAVAILABLE, r, "cuEventCreate");
    if ((r = c->cu.EventCreate(&c->ev_ref, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
        return kg_cu_fail(c, rep, KG_WS_UNAVAILABLE, r, "cuEventCreate");
    return KG_WS_OK;
}

static int read_attrs(struct cuda *c, struct kg_reply *rep)
{
    struct kg_func_attrs *at = &rep->attrs;
    struct {
        CUfunction_attribute a;
        int32_t *dst;
    } tab[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &at->regs},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &at->smem_static},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &at->local_bytes},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &at->max_threads},
        {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &at->const_bytes},
        {CU_FUNC_ATTRIBUTE_PTX_VERSION, &at->ptx_version},
        {CU_FUNC_ATTRIBUTE_BINARY_VERSION, &at->binary_version},
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
        int v = 0;
        CUresult r = c->cu.FuncGetAttribute(&v, tab[i].a, c->fn);
        if (r != CUDA_SUCCESS) {
            ok = 0;
            if (kg_cu_sticky(r)) return kg_cu_fail(c, rep, KG_WS_CUDA, r, "cuFuncGetAttribute");
            continue;
        }
        *tab[i].dst = v;
    }
    int v = 0;
    c->dyn_smem_max = DEFAULT_DYN_SMEM;
    if (c->cu.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, c->fn) == CUDA_SUCCESS)
        c->dyn_smem_max = v;
    at->valid = ok;
    c->smem_static = at->smem_static;
    return KG_WS_OK;
}

static int64_t kind_size(int kind)
{
    switch (kind) {
    case KG_ARG_TENSOR: return 8;
    case KG_ARG_INT: return 4;
    case KG_ARG_LONG: return 8;
    case KG_ARG_FLOAT: return 4;
    case KG_ARG_DOUBLE: return 8;
    default: return -1;
    }
}

/* The kernel's parameter list against the contract's args (cuFuncGetParamInfo, driver 12.4+):
 * a kernel taking int64_t where the contract says int would read garbage, silently. Any
 * doubt (old driver, unexpected error, a kernel reported with no parameters) skips the check
 * rather than failing a correct kernel. */
static int check_params(struct cuda *c, const char *entry, struct kg_reply *rep)
{
    if (!c->cu.FuncGetParamInfo) return KG_WS_OK;
    size_t sizes[KG_MAX_ARGS + 1];
    int n = 0;
    for (; n <= KG_MAX_ARGS; n++) {
        size_t off = 0, sz = 0;
        CUresult r = c->cu.FuncGetParamInfo(c->fn, (size_t)n, &off, &sz);
        if (r == CUDA_ERROR_INVALID_VALUE) break;
        if (r != CUDA_SUCCESS) return KG_WS_OK;
        sizes[n] = sz;
    }
    if (n == 0) return KG_WS_OK;
    int bad = n != c->nargs;
    for (int i = 0; i < n && i < c->nargs && !bad; i++) bad = (int64_t)sizes[i] != kind_size(c->argkind[i]);
    if (!bad) return KG_WS_OK;
    char have[400] = "", want[400] = "";
    size_t hl = 0, wl = 0;
    for (int i = 0; i < n && i < KG_MAX_ARGS; i++) kg_appendf(have, sizeof have, &hl, "%s%zu", i ? ", " : "", sizes[i]);
    for (int i = 0; i < c->nargs; i++)
        kg_appendf(want, sizeof want, &wl, "%s%lld", i ? ", " : "", (long long)kind_size(c->argkind[i]));
    kg_cuda_say(rep,
                "entry '%s' takes %d%s parameters of %s bytes, but the contract declares %d args of %s bytes "
                "(tensor 8, int 4, long 8, float 4, double 8): fix the contract's args or the kernel's signature",
                entry, n > KG_MAX_ARGS ? KG_MAX_ARGS : n, n > KG_MAX_ARGS ? "+" : "", have, c->nargs, want);
    return KG_WS_ENTRY;
}

static int load_module(struct cuda *c, const char *img, CUmodule *mod, const char *what, struct kg_reply *rep)
{
    char log[2048] = "";
    CUjit_option opt[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[2] = {log, (void *)(uintptr_t)sizeof log};
    CUresult r = c->cu.ModuleLoadDataEx(mod, img, 2, opt, val);
    if (r == CUDA_SUCCESS) return KG_WS_OK;
    *mod = NULL;
    log[sizeof log - 1] = 0;
    int s = kg_cu_fail(c, rep, KG_WS_COMPILE, r, "cuModuleLoadDataEx(%s)", what);
    if (log[0]) kg_cuda_say(rep, "JIT log: %s", log);
    return s;
}

/* kgate's spin kernel; a failure here is reported when busy_default needs it. */
static void load_spin(struct cuda *c)
{
    if (c->spin_fn || c->spin_why[0]) return;
    struct kg_reply tmp;
    memset(&tmp, 0, sizeof tmp);
    if (load_module(c, kg_cuda_spin_ptx, &c->spin_mod, SPIN_NAME, &tmp) != KG_WS_OK) {
        kg_strlcpy(c->spin_why, tmp.msg, sizeof c->spin_why);
        return;
    }
    CUresult r = c->cu.ModuleGetFunction(&c->spin_fn, c->spin_mod, SPIN_NAME);
    if (r != CUDA_SUCCESS) {
        c->spin_fn = NULL;
        snprintf(c->spin_why, sizeof c->spin_why, "cuModuleGetFunction(" SPIN_NAME "): %s", kg_cu_name(c, r));
    }
}

static int cuda_load(void *st, const struct kg_req_load *l, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (c->fn) {
        kg_cuda_say(rep, "already loaded");
        return KG_WS_BAD_REQUEST;
    }
    if (l->nargs < 0 || l->nargs > KG_MAX_ARGS || !l->entry[0] || !l->path[0]) {
        kg_cuda_say(rep, "malformed load request");
        return KG_WS_BAD_REQUEST;
    }
    const char *homes[3];
    const char *home = kg_cuda_homes(l->cuda_home, homes) > 0 ? homes[0] : "/usr/local/cuda";
    if (!c->cupti_tried) { /* before the context exists */
        c->cupti_tried = 1;
        c->cupti_on = kg_cupti_start(home, c->cupti_why, sizeof c->cupti_why) == 0;
    }
    int s = ctx_setup(c, rep);
    if (s != KG_WS_OK) return s;
    kg_cuda_fill_dev(c, rep);
    c->nargs = l->nargs;
    memcpy(c->argkind, l->argkind, sizeof c->argkind);

    struct build b;
    memset(&b, 0, sizeof b);
    b.tmem = -1;
    s = kg_cuda_get_binary(c, l, home, &b, rep);
    if (s == KG_WS_OK) s = load_module(c, b.img, &c->mod, l->path, rep);
    if (s == KG_WS_OK) {
        CUresult r = c->cu.ModuleGetFunction(&c->fn, c->mod, b.sym);
        if (r != CUDA_SUCCESS) s = kg_cu_fail(c, rep, KG_WS_ENTRY, r, "cuModuleGetFunction(%s)", b.sym);
    }
    rep->attrs.tmem_cols = b.tmem;
    kg_cuda_build_free(&b);
    if (s == KG_WS_OK) s = read_attrs(c, rep);
    if (s == KG_WS_OK) s = check_params(c, l->entry, rep);
    if (s != KG_WS_OK) {
        c->fn = NULL;
        return s;
    }
    load_spin(c);
    if (!c->cupti_on) kg_cuda_say(rep, "CUPTI probe off: %s", c->cupti_why);
    return KG_WS_OK;
}

/* ---------------------------------------------------------------------------------------
 * Memory */

static int cuda_alloc(void *st, uint64_t bytes, uint64_t *handle, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!c->ctx) {
        kg_cuda_say(rep, "alloc before load");
        return KG_WS_BAD_REQUEST;
    }
    CUdeviceptr p = 0;
    CUresult r = c->cu.MemAlloc(&p, bytes ? (size_t)bytes : 1); /* 0 bytes is an error for the driver */
    if (r != CUDA_SUCCESS)
        return kg_cu_fail(c, rep, KG_WS_LAUNCH, r, "cuMemAlloc(%llu bytes)", (unsigned long long)bytes);
    *handle = (uint64_t)p;
    return KG_WS_OK;
}

static void cuda_release(void *st, uint64_t handle, uint64_t bytes)
{
    struct cuda *c = st;
    if (c->ctx && handle) c->cu.MemFree((CUdeviceptr)handle); /* nothing to report to */
}

static int cuda_upload(void *st, uint64_t dst, const void *src, uint64_t n, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!n) return KG_WS_OK;
    CUresult r = c->cu.MemcpyHtoD((CUdeviceptr)dst, src, (size_t)n);
    if (r != CUDA_SUCCESS) return kg_cu_fail(c, rep, KG_WS_CUDA, r, "cuMemcpyHtoD(%llu bytes)", (unsigned long long)n);
    return KG_WS_OK;
}

static int cuda_download(void *st, void *dst, uint64_t src, uint64_t n, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!n) return KG_WS_OK;
    CUresult r = c->cu.MemcpyDtoH(dst, (CUdeviceptr)src, (size_t)n);
    if (r != CUDA_SUCCESS) return kg_cu_fail(c, rep, KG_WS_CUDA, r, "cuMemcpyDtoH(%llu bytes)", (unsigned long long)n);
    return KG_WS_OK;
}

/* ---------------------------------------------------------------------------------------
 * Launch, busy, sync */

/* The grid, the block and the dynamic shared memory are cast to unsigned int for cuLaunchKernel
 * (smem to int for cuFuncSetAttribute): one out of range is refused here, by name, rather than
 * cast into a different launch. */
static int check_config(const struct kg_launch *L, struct kg_reply *rep)
{
    int ok = L->smem >= 0 && L->smem <= INT_MAX;
    for (int d = 0; d < 3; d++)
        ok &= L->grid[d] >= 1 && L->grid[d] <= INT_MAX && L->block[d] >= 1 && L->block[d] <= INT_MAX;
    if (!ok) {
        kg_cuda_say(
            rep,
            "invalid launch configuration grid=(%lld,%lld,%lld) block=(%lld,%lld,%lld) smem=%lld: every dimension "
            "must be in 1..2147483647 and smem in 0..2147483647",
            (long long)L->grid[0], (long long)L->grid[1], (long long)L->grid[2], (long long)L->block[0],
            (long long)L->block[1], (long long)L->block[2], (long long)L->smem);
        return KG_WS_LAUNCH;
    }
    return KG_WS_OK;
}

static int cuda_launch(void *st, const struct kg_launch *L, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!c->fn) {
        kg_cuda_say(rep, "launch before load");
        return KG_WS_BAD_REQUEST;
    }
    if (L->nargs != c->nargs) {
        kg_cuda_say(rep, "run with %d args, loaded with %d", L->nargs, c->nargs);
        return KG_WS_BAD_REQUEST;
    }
    if (L->stream < 0 || L->stream > 2) {
        kg_cuda_say(rep, "no stream %d", L->stream);
        return KG_WS_BAD_REQUEST;
    }
    if (check_config(L, rep) != KG_WS_OK) return KG_WS_LAUNCH;
    CUresult r;
    if (L->smem > c->dyn_smem_max) {
        r = c->cu.FuncSetAttribute(c->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)L->smem);
        if (r != CUDA_SUCCESS)
            return kg_cu_fail(c, rep, KG_WS_LAUNCH, r,
                              "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %lld) (static %d + dynamic may not "
                              "exceed the opt-in limit %lld)",
                              (long long)L->smem, c->smem_static, (long long)c->smem_optin);
        c->dyn_smem_max = L->smem;
    }
    union {
        CUdeviceptr p;
        int32_t i;
        int64_t l;
        float f;
        double d;
    } vals[KG_MAX_ARGS];
    void *params[KG_MAX_ARGS];
    for (int i = 0; i < L->nargs; i++) {
        if (L->kind[i] != c->argkind[i]) {
            kg_cuda_say(rep, "arg %d: kind %d at run, %d at load", i, L->kind[i], c->argkind[i]);
            return KG_WS_BAD_REQUEST;
        }
        switch (L->kind[i]) {
        case KG_ARG_TENSOR: vals[i].p = (CUdeviceptr)L->ptr[i]; break;
        case KG_ARG_INT: vals[i].i = (int32_t)L->args[i].ival; break;
        case KG_ARG_LONG: vals[i].l = L->args[i].ival; break;
        case KG_ARG_FLOAT: vals[i].f = (float)L->args[i].fval; break;
        case KG_ARG_DOUBLE: vals[i].d = L->args[i].fval; break;
        default: kg_cuda_say(rep, "arg %d: bad kind %d", i, L->kind[i]); return KG_WS_BAD_REQUEST;
        }
        params[i] = &vals[i];
    }
    CUstream s = c->stream[L->stream];
    c->last = -1;
    if ((r = c->cu.EventRecord(c->ev[L->stream][0], s)) != CUDA_SUCCESS)
        return kg_cu_fail(c, rep, KG_WS_LAUNCH, r, "cuEventRecord(before the kernel)");
    r = c->cu.LaunchKernel(c->fn, (unsigned)L->grid[0], (unsigned)L->grid[1], (unsigned)L->grid[2],
                           (unsigned)L->block[0], (unsigned)L->block[1], (unsigned)L->block[2], (unsigned)L->smem, s,
                           L->nargs ? params : NULL, NULL);
    if (r != CUDA_SUCCESS) {
        if (!rep->code) rep->code = (int32_t)r;
        kg_cuda_say(rep, "cuLaunchKernel: %s (%s): grid=(%lld,%lld,%lld) block=(%lld,%lld,%lld) smem=%lld",
                    kg_cu_name(c, r), kg_cu_string(c, r), (long long)L->grid[0], (long long)L->grid[1],
                    (long long)L->grid[2], (long long)L->block[0], (long long)L->block[1], (long long)L->block[2],
                    (long long)L->smem);
        return kg_cu_sticky(r) ? KG_WS_CUDA : KG_WS_LAUNCH;
    }
    if ((r = c->cu.EventRecord(c->ev[L->stream][1], s)) != CUDA_SUCCESS)
        return kg_cu_fail(c, rep, KG_WS_LAUNCH, r, "cuEventRecord(after the kernel)");
    c->last = L->stream;
    return KG_WS_OK;
}

static int cuda_busy_default(void *st, double seconds, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!c->spin_fn) {
        kg_cuda_say(rep, "cannot keep the default stream busy: kgate's spin kernel did not load: %s",
                    c->spin_why[0] ? c->spin_why : "not loaded yet");
        return KG_WS_UNAVAILABLE;
    }
    unsigned long long ns = 0;
    if (seconds > 0) ns = seconds > 60 ? 60000000000ull : (unsigned long long)(seconds * 1e9);
    void *params[1] = {&ns};
    CUresult r = c->cu.LaunchKernel(c->spin_fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
    if (r != CUDA_SUCCESS) return kg_cu_fail(c, rep, KG_WS_LAUNCH, r, "cuLaunchKernel(" SPIN_NAME ")");
    return KG_WS_OK;
}

/* Seconds from ev_ref to ev; -1 when the driver cannot say. */
static double since_ref(struct cuda *c, CUevent ev)
{
    float ms = 0;
    return c->cu.EventElapsedTime(&ms, c->ev_ref, ev) == CUDA_SUCCESS ? ms * 1e-3 : -1;
}

/* After a pair run's sync: for how long its two launches ran at once. CUPTI's kernel records
 * say when each kernel itself started and ended; without exactly two of them, the events
 * around each launch bound it (a launch whose blocks wait for the other's to leave the SMs
 * counts as running there, so that overlap is an upper bound, and pair_clock says which). */
static void pair_overlap(struct cuda *c, struct kg_reply *rep)
{
    double s[2], e[2];
    rep->pair_clock = KG_PAIR_UNMEASURED;
    if (rep->cupti_ok && rep->nlaunch == 2 && rep->launch[0].end_ns && rep->launch[1].end_ns) {
        uint64_t t0 =
            rep->launch[0].start_ns < rep->launch[1].start_ns ? rep->launch[0].start_ns : rep->launch[1].start_ns;
        for (int i = 0; i < 2; i++) {
            s[i] = (double)(rep->launch[i].start_ns - t0) * 1e-9;
            e[i] = (double)(rep->launch[i].end_ns - t0) * 1e-9;
        }
        rep->pair_clock = KG_PAIR_KERNELS;
    } else {
        for (int i = 0; i < 2; i++) {
            s[i] = since_ref(c, c->ev[1 + i][0]);
            e[i] = since_ref(c, c->ev[1 + i][1]);
            if (!(s[i] >= 0 && e[i] >= s[i])) return;
        }
        rep->pair_clock = KG_PAIR_EVENTS;
    }
    double from = s[0] > s[1] ? s[0] : s[1], to = e[0] < e[1] ? e[0] : e[1];
    rep->pair_overlap = to > from ? to - from : 0;
    rep->pair_shorter = e[0] - s[0] < e[1] - s[1] ? e[0] - s[0] : e[1] - s[1];
}

static int cuda_sync(void *st, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!c->ctx) {
        kg_cuda_say(rep, "sync before load");
        return KG_WS_BAD_REQUEST;
    }
    CUresult r = c->cu.CtxSynchronize();
    if (r != CUDA_SUCCESS) {
        if (!rep->code) rep->code = (int32_t)r;
        kg_cuda_say(rep, "%s: %s (during or after the kernel)", kg_cu_name(c, r), kg_cu_string(c, r));
        c->last = -1;
        c->pair_run = 0;
        rep->nlaunch = -1;
        rep->cupti_ok = 0;
        return KG_WS_CUDA;
    }
    if (c->last >= 0) {
        float ms = 0;
        r = c->cu.EventElapsedTime(&ms, c->ev[c->last][0], c->ev[c->last][1]);
        if (r == CUDA_SUCCESS) {
            rep->seconds = ms * 1e-3;
        } else {
            rep->seconds = -1;
            kg_cuda_say(rep, "kernel time unknown: cuEventElapsedTime: %s", kg_cu_name(c, r));
        }
        c->last = -1;
    }
    if (c->cupti_on) {
        kg_cupti_collect(rep);
    } else {
        rep->nlaunch = -1;
        rep->cupti_ok = 0;
    }
    if (c->pair_run) pair_overlap(c, rep);
    c->pair_run = 0;
    return KG_WS_OK;
}

/* Pair runs: the two launches must overlap for a kernel with shared global state to show it,
 * but the host thread may be descheduled between the two cuLaunchKernel calls for longer than
 * a whole kernel (seen on a loaded H200: a `make check -j16` let the placement control's two
 * launches run one after the other). So both streams first wait on a word in device memory;
 * once both launches are queued, one write on a third stream releases them together. Without
 * stream memory operations (old driver) the launches go ungated. */
static int cuda_hold(void *st, int open, struct kg_reply *rep)
{
    struct cuda *c = st;
    CUresult r;
    if (open) {
        if (!c->gate_armed) return KG_WS_OK;
        c->gate_armed = 0;
        if ((r = c->cu.StreamWriteValue32(c->gate_stream, c->gate, c->gate_seq, 0)) != CUDA_SUCCESS)
            return kg_cu_fail(c, rep, KG_WS_CUDA, r, "cuStreamWriteValue32(the pair's start gate)");
        return KG_WS_OK;
    }
    if (!c->ctx) return KG_WS_OK;
    /* the overlap's time origin: before stream 1's wait, and queued before stream 2's launch */
    c->pair_run = c->cu.EventRecord(c->ev_ref, c->stream[1]) == CUDA_SUCCESS;
    if (c->gate_state < 0) return KG_WS_OK;
    if (c->gate_state == 0) {
        c->gate_state = -1;
        if (!c->cu.StreamWaitValue32 || !c->cu.StreamWriteValue32) return KG_WS_OK;
        if (c->cu.MemAlloc(&c->gate, 4) != CUDA_SUCCESS) return KG_WS_OK;
        if (c->cu.MemsetD8(c->gate, 0, 4) != CUDA_SUCCESS ||
            c->cu.StreamCreate(&c->gate_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
            c->cu.MemFree(c->gate);
            c->gate = 0;
            return KG_WS_OK;
        }
        c->gate_state = 1;
    }
    c->gate_seq++;
    for (int i = 1; i < 3; i++) {
        r = c->cu.StreamWaitValue32(c->stream[i], c->gate, c->gate_seq, CU_STREAM_WAIT_VALUE_GEQ);
        if (r == CUDA_SUCCESS) {
            c->gate_armed = 1;
            continue;
        }
        if (kg_cu_sticky(r)) return kg_cu_fail(c, rep, KG_WS_CUDA, r, "cuStreamWaitValue32(the pair's start gate)");
        if (!c->gate_armed) c->gate_state = -1; /* not supported here: ungated from now on */
        break;
    }
    return KG_WS_OK;
}

static void cuda_fini(void *st)
{
    struct cuda *c = st;
    if (!c) return;
    if (c->cupti_on) kg_cupti_stop();
    if (c->ctx) {
        if (c->mod) c->cu.ModuleUnload(c->mod);
        if (c->spin_mod) c->cu.ModuleUnload(c->spin_mod);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 2; k++)
                if (c->ev[i][k]) c->cu.EventDestroy(c->ev[i][k]);
        if (c->ev_ref) c->cu.EventDestroy(c->ev_ref);
        for (int i = 1; i < 3; i++)
            if (c->stream[i]) c->cu.StreamDestroy(c->stream[i]);
        if (c->gate_stream) c->cu.StreamDestroy(c->gate_stream);
        if (c->gate) c->cu.MemFree(c->gate);
        c->cu.DevicePrimaryCtxRelease(c->dev);
    }
    /* libcuda and libnvrtc stay loaded: CUPTI and the driver keep threads that use them */
    free(c);
}

/* ---------------------------------------------------------------------------------------
 * Compiling without a device (a LOAD with KG_LOAD_COMPILE_ONLY where init failed) */

/* NVRTC (or nvcc) for sm_90a, the architecture kgate's own CUDA kernels (gdn/) target, since no
 * device says which; the cache key's driver version (0) keeps this binary from any device's
 * load. Checks that the entry is there; loads nothing. */
static int cuda_compile(const struct kg_req_load *l, struct kg_reply *rep)
{
    struct cuda *c = calloc(1, sizeof *c);
    if (!c) {
        kg_cuda_say(rep, "out of memory");
        return KG_WS_UNAVAILABLE;
    }
    c->cc_major = 9;
    c->cc_minor = 0;
    const char *homes[3];
    const char *home = kg_cuda_homes(l->cuda_home, homes) > 0 ? homes[0] : "/usr/local/cuda";
    struct build b;
    memset(&b, 0, sizeof b);
    b.tmem = -1;
    int s = kg_cuda_get_binary(c, l, home, &b, rep);
    kg_cuda_build_free(&b);
    free(c); /* libnvrtc stays loaded, as libcuda does after a failed init */
    return s;
}

const struct kg_runner_ops kg_runner_cuda = {
    .name = "cuda",
    .device = true,
    .init = kg_cuda_init,
    .load = cuda_load,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .upload = cuda_upload,
    .download = cuda_download,
    .launch = cuda_launch,
    .busy_default = cuda_busy_default,
    .hold = cuda_hold,
    .sync = cuda_sync,
    .compile = cuda_compile,
    .oracle = NULL,
    .fini = cuda_fini,
};
