/* runner_cuda.c: the CUDA runner. libcuda and libnvrtc are dlopen'd, never linked, so a
 * machine without a driver gets KG_WS_UNAVAILABLE and a plain reason, never a crash. The
 * kernel file is compiled by NVRTC for the device's exact architecture (sm_90a on an H200),
 * with in-memory stand-ins for the C headers NVRTC lacks and `nvcc -cubin` as the fallback,
 * cached by content hash, and launched with cuLaunchKernel in the primary context; every
 * driver call is checked and a failure names the call and the CUDA error. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cache.h"
#include "runners/cuda/cuda_api.h"
#include "base/dtype.h"
#include "runners/runner.h"
/* by relative path: the toolkit has a <cupti.h> of its own */
#include "probes/cupti.h"

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "dlsym results are stored into function pointers");
_Static_assert(sizeof(CUdeviceptr) == sizeof(uint64_t), "kgate handles are 64-bit device pointers");

#define DEFAULT_DYN_SMEM (48 * 1024)
#define NVCC_TIMEOUT     300.0
#define SPIN_NAME        "kgate_spin" /* the .entry of spin.ptx */

struct cuda {
    struct kg_cu_api cu;
    struct kg_nvrtc_api rtc;
    int rtc_state; /* 0: not tried, 1: loaded, -1: unusable (rtc_why) */
    char rtc_why[1200];
    int driver_version;
    CUdevice dev;
    int cc_major, cc_minor;
    CUcontext ctx;      /* the retained primary context, NULL before load */
    CUstream stream[3]; /* [0] stays NULL: the legacy default stream; [1], [2] non-blocking */
    CUevent ev[3][2];   /* start/stop per stream slot */
    CUmodule mod, spin_mod;
    CUfunction fn, spin_fn;
    char spin_why[600];
    int nargs;
    int32_t argkind[KG_MAX_ARGS];
    int64_t dyn_smem_max; /* the entry's current MAX_DYNAMIC_SHARED_SIZE_BYTES */
    int smem_static;      /* the entry's static shared memory, for messages */
    int64_t smem_optin;   /* the device's opt-in shared memory per block, for messages */
    int last;             /* stream slot of the last timed launch since the last sync, -1: none */
    /* the start gate of pair runs: streams 1 and 2 wait until *gate reaches gate_seq */
    int gate_state; /* 0: not made yet, 1: usable, -1: unusable (no stream memory operations) */
    int gate_armed; /* waits are queued and the gate is still shut */
    CUdeviceptr gate;
    CUstream gate_stream;
    cuuint32_t gate_seq;
    int cupti_tried, cupti_on;
    char cupti_why[600];
    char errname[32]; /* cu_name() of a code the driver cannot name */
};

/* ---------------------------------------------------------------------------------------
 * Messages */

/* Appends to rep->msg, after "; " when something is already there (a run can report a launch
 * error and then a synchronize error; the first must not be lost). */
static void say(struct kg_reply *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct kg_reply *rep, const char *fmt, ...)
{
    size_t len = strlen(rep->msg);
    if (len) kg_appendf(rep->msg, sizeof rep->msg, &len, "; ");
    if (len + 1 >= sizeof rep->msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->msg + len, sizeof rep->msg - len, fmt, ap);
    va_end(ap);
}

static const char *cu_name(struct cuda *c, CUresult r)
{
    const char *s = NULL;
    if (c->cu.GetErrorName && c->cu.GetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
    snprintf(c->errname, sizeof c->errname, "CUDA error %d", (int)r);
    return c->errname;
}

static const char *cu_string(struct cuda *c, CUresult r)
{
    const char *s = NULL;
    if (c->cu.GetErrorString && c->cu.GetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
    return "no description";
}

/* Errors after which the context is unusable: the worker must exit (worker_main does it on
 * KG_WS_CUDA). */
static int is_sticky(CUresult r)
{
    switch ((int)r) {
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case 226: /* CUDA_ERROR_CONTAINED (12.x) */
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case 721: /* CUDA_ERROR_TENSOR_MEMORY_LEAK (13.0) */
    case CUDA_ERROR_UNKNOWN:
        return 1;
    default:
        return 0;
    }
}

/* Records a failed driver call: "CALL: CUDA_ERROR_X (description)". Returns status, or
 * KG_WS_CUDA when the error is sticky. */
static int cu_fail(struct cuda *c, struct kg_reply *rep, int status, CUresult r, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int cu_fail(struct cuda *c, struct kg_reply *rep, int status, CUresult r, const char *fmt, ...)
{
    char call[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call, sizeof call, fmt, ap);
    va_end(ap);
    if (!rep->code) rep->code = (int32_t)r;
    say(rep, "%s: %s (%s)", call, cu_name(c, r), cu_string(c, r));
    return is_sticky(r) ? KG_WS_CUDA : status;
}

/* ---------------------------------------------------------------------------------------
 * Libraries: dlopen + dlsym tables (newest symbol name first) */

struct symdef {
    const char *names[2];
    size_t off;
    int optional;
};

#define CU_SYM(f, n1, n2, opt)                                                                                         \
    {                                                                                                                  \
        {n1, n2}, offsetof(struct kg_cu_api, f), opt                                                                   \
    }
static const struct symdef cu_syms[] = {
    CU_SYM(Init, "cuInit", NULL, 0),
    CU_SYM(DriverGetVersion, "cuDriverGetVersion", NULL, 0),
    CU_SYM(GetErrorName, "cuGetErrorName", NULL, 0),
    CU_SYM(GetErrorString, "cuGetErrorString", NULL, 0),
    CU_SYM(DeviceGetCount, "cuDeviceGetCount", NULL, 0),
    CU_SYM(DeviceGet, "cuDeviceGet", NULL, 0),
    CU_SYM(DeviceGetName, "cuDeviceGetName", NULL, 0),
    CU_SYM(DeviceGetAttribute, "cuDeviceGetAttribute", NULL, 0),
    CU_SYM(DeviceTotalMem, "cuDeviceTotalMem_v2", NULL, 0),
    CU_SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL, 0),
    CU_SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", 0),
    CU_SYM(CtxSetCurrent, "cuCtxSetCurrent", NULL, 0),
    CU_SYM(CtxSynchronize, "cuCtxSynchronize", NULL, 0),
    CU_SYM(ModuleLoadDataEx, "cuModuleLoadDataEx", NULL, 0),
    CU_SYM(ModuleUnload, "cuModuleUnload", NULL, 0),
    CU_SYM(ModuleGetFunction, "cuModuleGetFunction", NULL, 0),
    CU_SYM(FuncGetAttribute, "cuFuncGetAttribute", NULL, 0),
    CU_SYM(FuncSetAttribute, "cuFuncSetAttribute", NULL, 0),
    CU_SYM(FuncGetParamInfo, "cuFuncGetParamInfo", NULL, 1),
    CU_SYM(LaunchKernel, "cuLaunchKernel", NULL, 0),
    CU_SYM(StreamCreate, "cuStreamCreate", NULL, 0),
    CU_SYM(StreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy", 0),
    CU_SYM(EventCreate, "cuEventCreate", NULL, 0),
    CU_SYM(EventRecord, "cuEventRecord", NULL, 0),
    CU_SYM(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", 0),
    CU_SYM(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy", 0),
    /* never the unversioned memory symbols: those take 32-bit sizes */
    CU_SYM(MemAlloc, "cuMemAlloc_v2", NULL, 0),
    CU_SYM(MemFree, "cuMemFree_v2", NULL, 0),
    CU_SYM(MemcpyHtoD, "cuMemcpyHtoD_v2", NULL, 0),
    CU_SYM(MemcpyDtoH, "cuMemcpyDtoH_v2", NULL, 0),
    CU_SYM(MemsetD8, "cuMemsetD8_v2", NULL, 0),
    CU_SYM(StreamWaitValue32, "cuStreamWaitValue32_v2", "cuStreamWaitValue32", 1),
    CU_SYM(StreamWriteValue32, "cuStreamWriteValue32_v2", "cuStreamWriteValue32", 1),
};

#define RTC_SYM(f, n, opt)                                                                                             \
    {                                                                                                                  \
        {n, NULL}, offsetof(struct kg_nvrtc_api, f), opt                                                               \
    }
static const struct symdef rtc_syms[] = {
    RTC_SYM(Version, "nvrtcVersion", 0),
    RTC_SYM(GetErrorString, "nvrtcGetErrorString", 0),
    RTC_SYM(CreateProgram, "nvrtcCreateProgram", 0),
    RTC_SYM(DestroyProgram, "nvrtcDestroyProgram", 0),
    RTC_SYM(CompileProgram, "nvrtcCompileProgram", 0),
    RTC_SYM(GetProgramLogSize, "nvrtcGetProgramLogSize", 0),
    RTC_SYM(GetProgramLog, "nvrtcGetProgramLog", 0),
    RTC_SYM(GetPTXSize, "nvrtcGetPTXSize", 0),
    RTC_SYM(GetPTX, "nvrtcGetPTX", 0),
    RTC_SYM(GetCUBINSize, "nvrtcGetCUBINSize", 1),
    RTC_SYM(GetCUBIN, "nvrtcGetCUBIN", 1),
    RTC_SYM(AddNameExpression, "nvrtcAddNameExpression", 0),
    RTC_SYM(GetLoweredName, "nvrtcGetLoweredName", 0),
    RTC_SYM(GetNumSupportedArchs, "nvrtcGetNumSupportedArchs", 1),
    RTC_SYM(GetSupportedArchs, "nvrtcGetSupportedArchs", 1),
};

static int resolve(void *lib, void *table, const struct symdef *defs, size_t n, const char *libname, char *why,
                   size_t wn)
{
    for (size_t i = 0; i < n; i++) {
        void *p = NULL;
        for (int k = 0; k < 2 && !p && defs[i].names[k]; k++) p = dlsym(lib, defs[i].names[k]);
        if (!p && !defs[i].optional) {
            snprintf(why, wn, "%s has no %s: it is older than kgate supports", libname, defs[i].names[0]);
            return -1;
        }
        memcpy((char *)table + defs[i].off, &p, sizeof p);
    }
    return 0;
}

/* The toolkit directories to search, most specific first: the load request's cuda_home,
 * $KGATE_CUDA_HOME, the one configure found. Duplicates and empty ones are skipped. */
static int cuda_homes(const char *req, const char *out[3])
{
    const char *cand[3] = {req, getenv("KGATE_CUDA_HOME"), NULL};
#ifdef KG_CUDA_HOME
    cand[2] = KG_CUDA_HOME;
#endif
    int n = 0;
    for (int i = 0; i < 3; i++) {
        if (!cand[i] || !*cand[i]) continue;
        int dup = 0;
        for (int k = 0; k < n; k++) dup |= strcmp(out[k], cand[i]) == 0;
        if (!dup) out[n++] = cand[i];
    }
    return n;
}

/* libnvrtc: the toolkit's own copy first (its builtins must match the cuda_fp16.h we include),
 * then whatever the loader finds. */
static int open_nvrtc(struct cuda *c, const char *home)
{
    static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11"};
    static const char *const dirs[] = {"lib64", "lib"};
    const char *homes[3];
    int nh = cuda_homes(home, homes);
    char tried[800];
    size_t tl = 0;
    tried[0] = 0;
    void *lib = NULL;
    for (int h = 0; h < nh && !lib; h++) {
        for (size_t d = 0; d < 2 && !lib; d++)
            for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++) {
                snprintf(c->rtc.path, sizeof c->rtc.path, "%s/%s/%s", homes[h], dirs[d], names[i]);
                lib = dlopen(c->rtc.path, RTLD_NOW | RTLD_LOCAL);
            }
        if (!lib) kg_appendf(tried, sizeof tried, &tl, "%s/{lib64,lib}, ", homes[h]);
    }
    for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++) {
        snprintf(c->rtc.path, sizeof c->rtc.path, "%s", names[i]);
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib) {
        snprintf(c->rtc_why, sizeof c->rtc_why, "libnvrtc not found (looked in %sthe loader's path)", tried);
        return -1;
    }
    if (resolve(lib, &c->rtc, rtc_syms, sizeof rtc_syms / sizeof *rtc_syms, c->rtc.path, c->rtc_why,
                sizeof c->rtc_why)) {
        dlclose(lib);
        return -1;
    }
    c->rtc.lib = lib;
    if (c->rtc.Version(&c->rtc.major, &c->rtc.minor) != NVRTC_SUCCESS) c->rtc.major = c->rtc.minor = 0;
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * init: driver, device, limits */

static void fill_dev(struct cuda *c, struct kg_reply *rep)
{
    struct kg_dev_info *d = &rep->dev;
    memset(d, 0, sizeof *d);
    int ok = c->cu.DeviceGetName(d->name, (int)sizeof d->name, c->dev) == CUDA_SUCCESS;
    d->name[sizeof d->name - 1] = 0;
    int v;
    struct {
        CUdevice_attribute a;
        int64_t *dst;
    } tab[] = {
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, NULL},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &d->max_threads_per_block},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &d->max_block[0]},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &d->max_block[1]},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &d->max_block[2]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &d->max_grid[0]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &d->max_grid[1]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &d->max_grid[2]},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &d->max_smem_block},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &d->max_smem_optin},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &d->regs_per_block},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &d->regs_per_sm},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &d->max_threads_per_sm},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &d->smem_per_sm},
    };
    /* for occupancy; older drivers may not know these: leave them 0 rather than fail */
    if (c->cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, c->dev) == CUDA_SUCCESS)
        d->max_blocks_per_sm = v;
    if (c->cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, c->dev) == CUDA_SUCCESS)
        d->reserved_smem_per_block = v;
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++) {
        if (c->cu.DeviceGetAttribute(&v, tab[i].a, c->dev) != CUDA_SUCCESS) {
            ok = 0;
            continue;
        }
        if (tab[i].dst)
            *tab[i].dst = v;
        else
            d->sm_count = v;
    }
    d->cc_major = c->cc_major;
    d->cc_minor = c->cc_minor;
    int count = 0;
    ok &= c->cu.DeviceGetCount(&count) == CUDA_SUCCESS;
    d->device_count = count;
    size_t total = 0;
    ok &= c->cu.DeviceTotalMem(&total, c->dev) == CUDA_SUCCESS;
    d->total_mem = (int64_t)total;
    d->valid = ok;
    c->smem_optin = d->max_smem_optin;
}

/* libcuda stays loaded: after cuInit the driver may have threads running its code. */
static int init_fail(struct cuda *c, int status)
{
    free(c);
    return status;
}

static int cuda_init(void **st, struct kg_reply *rep)
{
    *st = NULL;
    struct cuda *c = calloc(1, sizeof *c);
    if (!c) {
        say(rep, "out of memory");
        return KG_WS_UNAVAILABLE;
    }
    c->last = -1;
    static const char *const libs[] = {"libcuda.so.1", "libcuda.so"};
    char err1[300] = "";
    for (size_t i = 0; i < 2 && !c->cu.lib; i++) {
        c->cu.lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        if (c->cu.lib)
            snprintf(c->cu.path, sizeof c->cu.path, "%s", libs[i]);
        else if (i == 0)
            snprintf(err1, sizeof err1, "%s", dlerror());
    }
    if (!c->cu.lib) {
        say(rep, "libcuda.so.1 not found: no NVIDIA driver on this machine (%s)", err1);
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    char why[300];
    if (resolve(c->cu.lib, &c->cu, cu_syms, sizeof cu_syms / sizeof *cu_syms, c->cu.path, why, sizeof why)) {
        say(rep, "%s (the NVIDIA driver is too old for kgate)", why);
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    CUresult r = c->cu.Init(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        say(rep, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE): the driver sees no GPU here");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if (r == CUDA_ERROR_STUB_LIBRARY) {
        say(rep, "%s is the CUDA toolkit's stub library, not a driver: no NVIDIA driver on this machine", c->cu.path);
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if (r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH || r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
        cu_fail(c, rep, 0, r, "cuInit");
        say(rep, "the NVIDIA kernel driver and %s do not match or are too old", c->cu.path);
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if (r != CUDA_SUCCESS) {
        cu_fail(c, rep, 0, r, "cuInit");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if ((r = c->cu.DriverGetVersion(&c->driver_version)) != CUDA_SUCCESS) {
        cu_fail(c, rep, 0, r, "cuDriverGetVersion");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    int count = 0;
    if ((r = c->cu.DeviceGetCount(&count)) != CUDA_SUCCESS) {
        cu_fail(c, rep, 0, r, "cuDeviceGetCount");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if (count < 1) {
        say(rep, "no CUDA device (cuDeviceGetCount: 0)");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if ((r = c->cu.DeviceGet(&c->dev, 0)) != CUDA_SUCCESS) {
        cu_fail(c, rep, 0, r, "cuDeviceGet(0)");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if ((r = c->cu.DeviceGetAttribute(&c->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->dev)) ||
        (r = c->cu.DeviceGetAttribute(&c->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->dev))) {
        cu_fail(c, rep, 0, r, "cuDeviceGetAttribute(COMPUTE_CAPABILITY)");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    fill_dev(c, rep);
    *st = c;
    return KG_WS_OK;
}

/* The primary context, two non-blocking streams and the timing events. Created at load,
 * after the CUPTI probe has started (CUPTI wants to see the context being made). */
static int ctx_setup(struct cuda *c, struct kg_reply *rep)
{
    if (c->ctx) return KG_WS_OK;
    CUresult r;
    CUcontext ctx = NULL;
    if ((r = c->cu.DevicePrimaryCtxRetain(&ctx, c->dev)) != CUDA_SUCCESS)
        return cu_fail(c, rep, KG_WS_UNAVAILABLE, r, "cuDevicePrimaryCtxRetain(device 0)");
    c->ctx = ctx;
    if ((r = c->cu.CtxSetCurrent(ctx)) != CUDA_SUCCESS) return cu_fail(c, rep, KG_WS_UNAVAILABLE, r, "cuCtxSetCurrent");
    for (int i = 1; i < 3; i++)
        if ((r = c->cu.StreamCreate(&c->stream[i], CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
            return cu_fail(c, rep, KG_WS_UNAVAILABLE, r, "cuStreamCreate(CU_STREAM_NON_BLOCKING)");
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++)
            if ((r = c->cu.EventCreate(&c->ev[i][k], CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
                return cu_fail(c, rep, KG_WS_UNAVAILABLE, r, "cuEventCreate");
    return KG_WS_OK;
}

/* ---------------------------------------------------------------------------------------
 * NVRTC has no C library headers (seen on the H200: INFINITY undefined, <stdint.h> missing).
 * The stand-ins are the files of nvrtc/ (its README says why each is as it is), and the spin
 * kernel is spin.ptx; both are embedded at build time by src/base/embed.awk. */

extern const char *const kg_cuda_hdr_names[]; /* nvrtc_headers.c */
extern const char *const kg_cuda_hdr_text[];
extern const int kg_cuda_hdr_count;
extern const char kg_cuda_spin_ptx[]; /* spin_ptx.c: its .entry is SPIN_NAME */

/* ---------------------------------------------------------------------------------------
 * Cache key: the source and the files it includes from its own directory tree */

struct seen {
    char *path[256];
    int n;
};

static void dir_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == path)
        snprintf(dir, n, "/");
    else
        snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* Hashes, recursively, every `#include "x"` or `#include <x>` that resolves next to the
 * including file or in the kernel's directory (the toolkit's headers are covered by the
 * NVRTC version in the key). A stale cache after editing a sibling header is the bug this
 * prevents. Over-approximates (commented-out includes count too), never under. */
static uint64_t hash_includes(const char *file, const char *src, const char *kdir, struct seen *s, int depth,
                              uint64_t h)
{
    if (depth > 32) return h;
    char fdir[1024];
    dir_of(file, fdir, sizeof fdir);
    for (const char *p = src; *p; p++) {
        if (*p != '#' || (p > src && p[-1] != '\n' && p[-1] != ' ' && p[-1] != '\t')) continue;
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t') q++;
        if (strncmp(q, "include", 7) != 0) continue;
        q += 7;
        while (*q == ' ' || *q == '\t') q++;
        char close = *q == '"' ? '"' : *q == '<' ? '>' : 0;
        if (!close) continue;
        const char *name = ++q;
        while (*q && *q != close && *q != '\n') q++;
        if (*q != close || q == name || q - name > 512) continue;
        const char *dirs[2] = {fdir, kdir};
        for (int d = 0; d < 2; d++) {
            char path[1600];
            snprintf(path, sizeof path, "%s/%.*s", dirs[d], (int)(q - name), name);
            struct stat sb;
            if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
            int dup = 0;
            for (int i = 0; i < s->n && !dup; i++) dup = strcmp(s->path[i], path) == 0;
            if (dup) break;
            if (s->n == (int)(sizeof s->path / sizeof *s->path)) return h;
            s->path[s->n] = strdup(path);
            if (!s->path[s->n]) return h;
            s->n++;
            size_t len;
            struct kg_err e;
            char *text = kg_read_file(path, &len, &e);
            h = kg_hash64(path, strlen(path), h);
            if (text) {
                h = kg_hash64(text, len, h);
                h = hash_includes(path, text, kdir, s, depth + 1, h);
                free(text);
            }
            break;
        }
    }
    return h;
}

/* ---------------------------------------------------------------------------------------
 * Finding the entry in a binary: ELF64 .symtab (cubin) or `.entry` lines (PTX) */

struct symfind {
    const char *entry;
    char mangled[600]; /* "_Z3foo" or "_ZN2ns3foo" */
    int nested;
    char hit[4][512];
    int nhit, exact;
};

static void symfind_init(struct symfind *f, const char *entry)
{
    memset(f, 0, sizeof *f);
    f->entry = entry;
    size_t len = 0;
    if (strstr(entry, "::")) {
        f->nested = 1;
        kg_appendf(f->mangled, sizeof f->mangled, &len, "_ZN");
        for (const char *p = entry; *p;) {
            const char *e = strstr(p, "::");
            size_t k = e ? (size_t)(e - p) : strlen(p);
            kg_appendf(f->mangled, sizeof f->mangled, &len, "%zu%.*s", k, (int)k, p);
            p += k + (e ? 2 : 0);
        }
    } else {
        kg_appendf(f->mangled, sizeof f->mangled, &len, "_Z%zu%s", strlen(entry), entry);
    }
}

/* extern "C" foo is "foo"; C++ foo(...) is "_Z3foo<params>", a template instance
 * "_Z3fooI...", ns::foo is "_ZN2ns3fooE..." or "_ZN2ns3fooI...". */
static void symfind_consider(struct symfind *f, const char *sym)
{
    int exact = strcmp(sym, f->entry) == 0;
    size_t m = strlen(f->mangled);
    int mangled = strncmp(sym, f->mangled, m) == 0 && sym[m] && (!f->nested || sym[m] == 'E' || sym[m] == 'I');
    if (!exact && !mangled) return;
    if (exact) {
        f->exact = 1;
        snprintf(f->hit[0], sizeof f->hit[0], "%s", sym);
        f->nhit = 1;
        return;
    }
    if (f->exact) return;
    if (f->nhit < 4) snprintf(f->hit[f->nhit], sizeof f->hit[0], "%s", sym);
    f->nhit++;
}

/* Every global function symbol of an ELF64 little-endian image; -1 when it is not one. */
static int elf_scan(const unsigned char *img, size_t n, struct symfind *f)
{
    Elf64_Ehdr eh;
    if (n < sizeof eh) return -1;
    memcpy(&eh, img, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr))
        return -1;
    if (eh.e_shoff > n || eh.e_shnum > (n - eh.e_shoff) / sizeof(Elf64_Shdr)) return -1;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh, strh;
        memcpy(&sh, img + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= eh.e_shnum) continue;
        if (sh.sh_offset > n || sh.sh_size > n - sh.sh_offset) return -1;
        memcpy(&strh, img + eh.e_shoff + (size_t)sh.sh_link * sizeof strh, sizeof strh);
        if (strh.sh_offset > n || strh.sh_size > n - strh.sh_offset) return -1;
        const char *strtab = (const char *)img + strh.sh_offset;
        for (size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
            Elf64_Sym s;
            memcpy(&s, img + sh.sh_offset + k * sizeof s, sizeof s);
            if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || ELF64_ST_BIND(s.st_info) == STB_LOCAL) continue;
            if (s.st_name >= strh.sh_size || !memchr(strtab + s.st_name, 0, strh.sh_size - s.st_name)) continue;
            symfind_consider(f, strtab + s.st_name);
        }
    }
    return 0;
}

static void ptx_scan(const char *ptx, struct symfind *f)
{
    for (const char *p = strstr(ptx, ".entry"); p; p = strstr(p + 6, ".entry")) {
        const char *q = p + 6;
        if (*q != ' ' && *q != '\t') continue;
        while (*q == ' ' || *q == '\t') q++;
        char name[512];
        size_t k = 0;
        while (k + 1 < sizeof name && (q[k] == '_' || q[k] == '$' || (q[k] >= '0' && q[k] <= '9') ||
                                       (q[k] >= 'a' && q[k] <= 'z') || (q[k] >= 'A' && q[k] <= 'Z')))
            k++;
        if (!k) continue;
        memcpy(name, q, k);
        name[k] = 0;
        symfind_consider(f, name);
    }
}

/* Resolves the entry's symbol in an image; KG_WS_OK with sym filled, or KG_WS_ENTRY. */
static int find_entry(const char *img, size_t n, int is_cubin, const char *entry, char *sym, size_t symn,
                      struct kg_reply *rep)
{
    struct symfind f;
    symfind_init(&f, entry);
    if (is_cubin) {
        if (elf_scan((const unsigned char *)img, n, &f)) {
            say(rep, "the compiled kernel is not an ELF64 cubin: cannot look for entry '%s'", entry);
            return KG_WS_ENTRY;
        }
    } else {
        ptx_scan(img, &f);
    }
    if (f.nhit == 1) {
        snprintf(sym, symn, "%s", f.hit[0]);
        return KG_WS_OK;
    }
    if (f.nhit == 0) {
        say(rep,
            "entry '%s' not found after compile (is it a __global__ function? static, misspelt, or in a namespace?)",
            entry);
        return KG_WS_ENTRY;
    }
    say(rep, "entry '%s' is ambiguous: %d kernels match (%s, %s%s%s%s): name one instance in the contract's entry",
        entry, f.nhit, f.hit[0], f.hit[1], f.nhit > 2 ? ", " : "", f.nhit > 2 ? f.hit[2] : "",
        f.nhit > 3 ? ", ..." : "");
    return KG_WS_ENTRY;
}

/* Columns requested by tcgen05.alloc: the largest immediate operand; -1 when the PTX has no
 * tcgen05.alloc (or no PTX was available); -2 when it has one whose column count is a
 * register, not an immediate. */
static int tmem_cols(const char *ptx)
{
    if (!ptx) return -1;
    int best = -1;
    for (const char *p = strstr(ptx, "tcgen05.alloc"); p; p = strstr(p + 13, "tcgen05.alloc")) {
        const char *semi = strchr(p, ';');
        if (!semi) break;
        const char *comma = NULL;
        for (const char *q = p; q < semi; q++)
            if (*q == ',') comma = q;
        if (!comma) continue;
        const char *v = comma + 1;
        while (v < semi && (*v == ' ' || *v == '\t')) v++;
        char *end;
        long cols = strtol(v, &end, 0);
        while (end < semi && (*end == ' ' || *end == '\t')) end++;
        if (end == semi && end != v && cols >= 0 && cols <= INT_MAX) {
            if (cols > best) best = (int)cols;
        } else if (best == -1) {
            best = -2;
        }
    }
    return best;
}

/* ---------------------------------------------------------------------------------------
 * Compiling: NVRTC, then nvcc; the result and how it was obtained */

struct build {
    char *img; /* cubin, or NUL-terminated PTX */
    size_t nimg;
    int is_cubin;
    char *ptx; /* PTX text when available (for tcgen05), may be NULL */
    char sym[1024];
    char compiler[64];
    int tmem;
};

static void build_free(struct build *b)
{
    free(b->img);
    free(b->ptx);
    b->img = b->ptx = NULL;
}

struct rtc_out {
    nvrtcResult r;
    char *log;
};

/* One NVRTC compile; with entry, also its lowered name. Fills b on success. */
static void rtc_compile(struct cuda *c, const char *src, const char *name, const char *const *opts, int nopts,
                        const char *entry, struct build *b, struct rtc_out *o)
{
    nvrtcProgram prog = NULL;
    o->log = NULL;
    o->r = c->rtc.CreateProgram(&prog, src, name, kg_cuda_hdr_count, kg_cuda_hdr_text, kg_cuda_hdr_names);
    if (o->r != NVRTC_SUCCESS) return;
    if (entry && (o->r = c->rtc.AddNameExpression(prog, entry)) != NVRTC_SUCCESS) goto out;
    o->r = c->rtc.CompileProgram(prog, nopts, opts);
    size_t ls = 0;
    if (c->rtc.GetProgramLogSize(prog, &ls) == NVRTC_SUCCESS && ls > 0 && (o->log = malloc(ls + 1))) {
        if (c->rtc.GetProgramLog(prog, o->log) != NVRTC_SUCCESS) o->log[0] = 0;
        o->log[ls] = 0;
    }
    if (o->r != NVRTC_SUCCESS) goto out;
    if (entry) {
        const char *lowered = NULL;
        if ((o->r = c->rtc.GetLoweredName(prog, entry, &lowered)) != NVRTC_SUCCESS) goto out;
        snprintf(b->sym, sizeof b->sym, "%s", lowered ? lowered : entry);
    }
    size_t n = 0;
    if (c->rtc.GetPTXSize(prog, &n) == NVRTC_SUCCESS && n > 0 && (b->ptx = malloc(n + 1))) {
        if (c->rtc.GetPTX(prog, b->ptx) == NVRTC_SUCCESS) {
            b->ptx[n] = 0;
        } else {
            free(b->ptx);
            b->ptx = NULL;
        }
    }
    n = 0;
    if (c->rtc.GetCUBINSize && c->rtc.GetCUBIN && c->rtc.GetCUBINSize(prog, &n) == NVRTC_SUCCESS && n > 0 &&
        (b->img = malloc(n))) {
        if (c->rtc.GetCUBIN(prog, b->img) == NVRTC_SUCCESS) {
            b->nimg = n;
            b->is_cubin = 1;
        } else {
            free(b->img);
            b->img = NULL;
        }
    }
    if (!b->img && b->ptx) { /* virtual architecture: load the PTX, the driver JITs it */
        b->img = strdup(b->ptx);
        b->nimg = b->img ? strlen(b->img) + 1 : 0;
        b->is_cubin = 0;
    }
    if (!b->img) o->r = NVRTC_ERROR_INTERNAL_ERROR;
out:
    c->rtc.DestroyProgram(&prog);
}

/* The text of the first error in a compiler log ("cannot open source file "x""), short
 * enough for rep->compiler; the first line when no "error: " is there. */
static void first_error(const char *log, char *out, size_t n)
{
    out[0] = 0;
    if (!log) return;
    const char *p = strstr(log, "error: ");
    p = p ? p + 7 : log;
    while (*p == '\n' || *p == ' ') p++;
    const char *end = strchr(p, '\n');
    snprintf(out, n, "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
}

struct arch {
    char sm[32];      /* sm_90a, or compute_XY when only PTX is possible */
    char compute[32]; /* compute_90a */
    int ptx_only;
};

/* sm_90a for 9.0 (wgmma, setmaxnreg need the 'a' target), sm_100a for 10.0, else sm_XY. When
 * the device is newer than anything this NVRTC knows, PTX for NVRTC's newest architecture,
 * which the driver JIT-compiles. */
static void pick_arch(struct cuda *c, struct arch *a)
{
    int num = c->cc_major * 10 + c->cc_minor;
    const char *suffix = (num == 90 || num == 100) ? "a" : "";
    memset(a, 0, sizeof *a);
    snprintf(a->sm, sizeof a->sm, "sm_%d%s", num, suffix);
    snprintf(a->compute, sizeof a->compute, "compute_%d%s", num, suffix);
    if (c->rtc_state != 1 || !c->rtc.GetNumSupportedArchs || !c->rtc.GetSupportedArchs) return;
    int na = 0, archs[128];
    if (c->rtc.GetNumSupportedArchs(&na) != NVRTC_SUCCESS || na <= 0 || na > 128) return;
    if (c->rtc.GetSupportedArchs(archs) != NVRTC_SUCCESS) return;
    int max = 0;
    for (int i = 0; i < na; i++)
        if (archs[i] > max) max = archs[i];
    if (num > max && max > 0) {
        snprintf(a->sm, sizeof a->sm, "compute_%d", max);
        snprintf(a->compute, sizeof a->compute, "compute_%d", max);
        a->ptx_only = 1;
    }
}

static const char *ctype_of(int dtype)
{
    switch (dtype) {
    case KG_F64:
        return "double";
    case KG_F32:
        return "float";
    case KG_F16:
        return "__half";
    case KG_BF16:
        return "__nv_bfloat16";
    case KG_I32:
        return "int";
    case KG_I64:
        return "long long";
    case KG_U8:
        return "unsigned char";
    case KG_BOOL:
        return "bool";
    default:
        return "float";
    }
}

/* Runs nvcc; fills b->img (ptx=0) or b->ptx (ptx=1). Returns the exit status (-1: could not
 * run), with its output in out. */
static int run_nvcc(const char *nvcc, const struct arch *a, int ptx, const char *kdir, const char *defs[2],
                    const char *tmpdir, uint64_t key, const char *path, struct build *b, char *out, size_t outn)
{
    char gencode[128], incdir[1100], dst[1200];
    int cubin = !ptx && !a->ptx_only;
    if (cubin)
        snprintf(gencode, sizeof gencode, "-gencode=arch=%s,code=%s", a->compute, a->sm);
    else
        snprintf(gencode, sizeof gencode, "-arch=%s", a->compute);
    snprintf(incdir, sizeof incdir, "-I%s", kdir);
    snprintf(dst, sizeof dst, "%s/kgate-nvcc-%d-%016llx.%s", tmpdir, (int)getpid(), (unsigned long long)key,
             cubin ? "cubin" : "ptx");
    char *argv[] = {(char *)nvcc,
                    cubin ? "-cubin" : "-ptx",
                    gencode,
                    "-std=c++17",
                    "-lineinfo",
                    incdir,
                    "-include",
                    "cuda_fp16.h",
                    "-include",
                    "cuda_bf16.h",
                    (char *)defs[0],
                    (char *)defs[1],
                    "-o",
                    dst,
                    (char *)path,
                    NULL};
    int rc = kg_run_cmd(argv, out, outn, NVCC_TIMEOUT);
    if (rc != 0) {
        unlink(dst);
        return rc;
    }
    size_t len = 0;
    struct kg_err e;
    char *data = kg_read_file(dst, &len, &e);
    unlink(dst);
    if (!data) {
        snprintf(out, outn, "%s", e.msg);
        return -1;
    }
    if (ptx) {
        b->ptx = data;
    } else {
        b->img = data;
        b->nimg = cubin ? len : len + 1; /* kg_read_file NUL-terminates: PTX keeps its NUL */
        b->is_cubin = cubin;
        if (!cubin && !b->ptx) b->ptx = strdup(data);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * The compile cache: one file per key, [text header][image], written to a temporary name
 * and renamed so concurrent workers never see half a file. */

static void cache_file(const char *dir, uint64_t key, char *buf, size_t n)
{
    snprintf(buf, n, "%s/cuda-%016llx.bin", dir, (unsigned long long)key);
}

static int cache_get(const char *file, struct build *b)
{
    size_t len;
    struct kg_err e;
    char *data = kg_read_file(file, &len, &e);
    if (!data) return -1;
    char kind[16] = "", *p = data;
    unsigned long long size = 0;
    int ok = strncmp(p, "kgate-cuda 1\n", 13) == 0;
    p += ok ? 13 : 0;
    /* line by line: kind, entry, compiler, tmem, size, then a blank line */
    for (int line = 0; ok && line < 5; line++) {
        char *nl = strchr(p, '\n');
        if (!nl) {
            ok = 0;
            break;
        }
        *nl = 0;
        if (line == 0) ok = sscanf(p, "kind %15s", kind) == 1;
        if (line == 1) ok = strncmp(p, "entry ", 6) == 0 && snprintf(b->sym, sizeof b->sym, "%s", p + 6) > 0;
        if (line == 2)
            ok = strncmp(p, "compiler ", 9) == 0 && snprintf(b->compiler, sizeof b->compiler, "%s", p + 9) >= 0;
        if (line == 3) ok = sscanf(p, "tmem %d", &b->tmem) == 1;
        if (line == 4) ok = sscanf(p, "size %llu", &size) == 1;
        p = nl + 1;
    }
    ok = ok && *p == '\n';
    p++;
    size_t off = (size_t)(p - data);
    ok = ok && off <= len && size == len - off && size > 0;
    int cubin = strcmp(kind, "cubin") == 0;
    ok = ok && (cubin || strcmp(kind, "ptx") == 0);
    if (ok && (b->img = malloc(size + 1))) {
        memcpy(b->img, p, size);
        b->img[size] = 0; /* PTX needs its NUL; harmless after a cubin */
        b->nimg = cubin ? size : size + 1;
        b->is_cubin = cubin;
    }
    free(data);
    return b->img ? 0 : -1;
}

static void cache_put(const char *file, const struct build *b)
{
    char tmp[1400];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", file, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return;
    size_t n = b->is_cubin ? b->nimg : strlen(b->img);
    int bad = fprintf(f, "kgate-cuda 1\nkind %s\nentry %s\ncompiler %s\ntmem %d\nsize %zu\n\n",
                      b->is_cubin ? "cubin" : "ptx", b->sym, b->compiler, b->tmem, n) < 0;
    bad |= fwrite(b->img, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, file)) unlink(tmp);
}

/* ---------------------------------------------------------------------------------------
 * load */

/* Compiles l->path into b: NVRTC with the entry as a name expression; if that fails, NVRTC
 * without it (success then means the entry is missing, unless the binary has it under a
 * name NVRTC would not lower); if that fails too, nvcc -cubin. */
static int compile(struct cuda *c, const struct kg_req_load *l, const char *home, const char *src, const struct arch *a,
                   const char *const *opts, int nopts, const char *defs[2], uint64_t key, const char *tmpdir,
                   struct build *b, struct kg_reply *rep)
{
    char kdir[1024];
    dir_of(l->path, kdir, sizeof kdir);
    struct rtc_out o1 = {NVRTC_SUCCESS, NULL}, o2 = {NVRTC_SUCCESS, NULL};
    char rtc_fail[300] = "";
    if (c->rtc_state == 1) {
        rtc_compile(c, src, l->path, opts, nopts, l->entry, b, &o1);
        if (o1.r == NVRTC_SUCCESS) {
            snprintf(b->compiler, sizeof b->compiler, "nvrtc %d.%d %s", c->rtc.major, c->rtc.minor, a->sm);
            free(o1.log);
            return KG_WS_OK;
        }
        build_free(b);
        rtc_compile(c, src, l->path, opts, nopts, NULL, b, &o2);
        if (o2.r == NVRTC_SUCCESS) {
            free(o1.log);
            free(o2.log);
            snprintf(b->compiler, sizeof b->compiler, "nvrtc %d.%d %s", c->rtc.major, c->rtc.minor, a->sm);
            return find_entry(b->img, b->nimg, b->is_cubin, l->entry, b->sym, sizeof b->sym, rep);
        }
        build_free(b);
        first_error(o2.log, rtc_fail, sizeof rtc_fail);
        if (!rtc_fail[0]) snprintf(rtc_fail, sizeof rtc_fail, "%s", c->rtc.GetErrorString(o2.r));
    } else {
        kg_strlcpy(rtc_fail, c->rtc_why, sizeof rtc_fail);
    }
    /* nvcc */
    char nvcc[600], out[6000] = "";
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", home);
    int rc = -1;
    if (access(nvcc, X_OK) == 0) {
        rc = run_nvcc(nvcc, a, 0, kdir, defs, tmpdir, key, l->path, b, out, sizeof out);
        /* tcgen05.alloc's column count is read from PTX: ask nvcc for it too when it may matter */
        char out2[2000];
        if (rc == 0 && !b->ptx && strstr(src, "tcgen05"))
            run_nvcc(nvcc, a, 1, kdir, defs, tmpdir, key, l->path, b, out2, sizeof out2);
    } else {
        snprintf(out, sizeof out, "%s not found", nvcc);
    }
    if (rc == 0) {
        if (c->rtc_state != 1) say(rep, "NVRTC unavailable (%s): compiled with nvcc", c->rtc_why);
        size_t cl = 0; /* truncated to fit: the whole NVRTC error is in the log */
        b->compiler[0] = 0;
        kg_appendf(b->compiler, sizeof b->compiler, &cl, "nvcc %s (NVRTC: %s)", a->sm, rtc_fail);
        free(o1.log);
        free(o2.log);
        return find_entry(b->img, b->nimg, b->is_cubin, l->entry, b->sym, sizeof b->sym, rep);
    }
    build_free(b);
    int status = KG_WS_COMPILE;
    if (c->rtc_state == 1) {
        /* the NVRTC log (file:line) first: it is what the author needs */
        const char *log = o2.log && o2.log[0] ? o2.log : o1.log && o1.log[0] ? o1.log : "";
        say(rep, "%s: NVRTC could not compile it (%s):\n%.2600s\n--- nvcc fallback: %.1000s", l->path,
            c->rtc.GetErrorString(o2.r), log, out);
    } else {
        say(rep, "%s: cannot compile CUDA here: %s; nvcc fallback: %.1500s", l->path, c->rtc_why, out);
        if (access(nvcc, X_OK) != 0) status = KG_WS_UNAVAILABLE;
    }
    free(o1.log);
    free(o2.log);
    return status;
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
            if (is_sticky(r)) return cu_fail(c, rep, KG_WS_CUDA, r, "cuFuncGetAttribute");
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
    case KG_ARG_TENSOR:
        return 8;
    case KG_ARG_INT:
        return 4;
    case KG_ARG_LONG:
        return 8;
    case KG_ARG_FLOAT:
        return 4;
    case KG_ARG_DOUBLE:
        return 8;
    default:
        return -1;
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
    say(rep,
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
    int s = cu_fail(c, rep, KG_WS_COMPILE, r, "cuModuleLoadDataEx(%s)", what);
    if (log[0]) say(rep, "JIT log: %s", log);
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
        snprintf(c->spin_why, sizeof c->spin_why, "cuModuleGetFunction(" SPIN_NAME "): %s", cu_name(c, r));
    }
}

/* NVRTC's options. The kernel's directory comes first, as nvcc searches -I before the
 * toolkit; <home>/include/cccl is where CUDA 13 keeps libcu++ (<cuda/std/...>). */
struct copts {
    char arch[64], inc_dir[1100], inc_home[600], inc_cccl[620], kt[64], dt[64];
    const char *v[10];
    int n;
};

static void make_opts(struct copts *o, const char *home, const char *kdir, const struct arch *a, int dtype)
{
    snprintf(o->arch, sizeof o->arch, "--gpu-architecture=%s", a->sm);
    snprintf(o->inc_dir, sizeof o->inc_dir, "--include-path=%s", kdir);
    snprintf(o->inc_home, sizeof o->inc_home, "--include-path=%s/include", home);
    snprintf(o->inc_cccl, sizeof o->inc_cccl, "--include-path=%s/include/cccl", home);
    snprintf(o->kt, sizeof o->kt, "-DKG_T=%s", ctype_of(dtype));
    snprintf(o->dt, sizeof o->dt, "-DKG_DTYPE_%s",
             dtype >= 0 && dtype < KG_DTYPE_COUNT ? kg_dtype_name((enum kg_dtype)dtype) : "T");
    for (char *p = o->dt + strlen("-DKG_DTYPE_"); *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    struct stat sb;
    int have_cccl = stat(o->inc_cccl + strlen("--include-path="), &sb) == 0 && S_ISDIR(sb.st_mode);
    o->n = 0;
    o->v[o->n++] = o->arch;
    o->v[o->n++] = "-std=c++17";
    o->v[o->n++] = o->inc_dir;
    o->v[o->n++] = o->inc_home;
    if (have_cccl) o->v[o->n++] = o->inc_cccl;
    o->v[o->n++] = o->kt;
    o->v[o->n++] = o->dt;
    o->v[o->n++] = "-lineinfo";
    o->v[o->n++] = "--pre-include=kgate_prelude.h";
}

/* Everything that shapes the binary: kgate's cache format, the driver and NVRTC versions,
 * the architecture, the toolkit, the source and what it includes, the entry, the options,
 * the in-memory headers. */
static uint64_t cache_key(const struct cuda *c, const struct kg_req_load *l, const char *home, const char *src,
                          size_t srclen, const char *kdir, const struct arch *a, const struct copts *o)
{
    char ver[800];
    snprintf(ver, sizeof ver, "kgate-cuda-cache 1|driver %d|nvrtc %d.%d %d|%s|%s", c->driver_version, c->rtc.major,
             c->rtc.minor, c->rtc_state, a->sm, home);
    uint64_t key = kg_hash64(ver, strlen(ver), 0);
    key = kg_hash64(src, srclen, key);
    key = kg_hash64(l->entry, strlen(l->entry), key);
    for (int i = 0; i < o->n; i++) key = kg_hash64(o->v[i], strlen(o->v[i]) + 1, key);
    for (int i = 0; i < kg_cuda_hdr_count; i++)
        key = kg_hash64(kg_cuda_hdr_text[i], strlen(kg_cuda_hdr_text[i]), key);
    struct seen seen = {.n = 0};
    key = hash_includes(l->path, src, kdir, &seen, 0, key);
    for (int i = 0; i < seen.n; i++) free(seen.path[i]);
    return key;
}

/* The entry's binary: from the cache, or compiled (and then cached). Sets rep->compiler and
 * rep->compile_seconds. */
static int get_binary(struct cuda *c, const struct kg_req_load *l, const char *home, struct build *b,
                      struct kg_reply *rep)
{
    struct kg_err e;
    size_t srclen;
    char *src = kg_read_file(l->path, &srclen, &e);
    if (!src) {
        say(rep, "%s", e.msg);
        return KG_WS_COMPILE;
    }
    if (c->rtc_state == 0) {
        c->rtc_state = open_nvrtc(c, home) == 0 ? 1 : -1;
        char probe[700];
        snprintf(probe, sizeof probe, "%s/include/cuda_fp16.h", home);
        if (c->rtc_state == 1 && access(probe, R_OK) != 0) {
            snprintf(c->rtc_why, sizeof c->rtc_why, "%s not found: NVRTC has no cuda_fp16.h (set KGATE_CUDA_HOME)",
                     probe);
            c->rtc_state = -1;
        }
    }
    struct arch a;
    pick_arch(c, &a);
    char kdir[1024];
    dir_of(l->path, kdir, sizeof kdir);
    struct copts o;
    make_opts(&o, home, kdir, &a, l->dtype);
    const char *defs[2] = {o.kt, o.dt};
    uint64_t key = cache_key(c, l, home, src, srclen, kdir, &a, &o);

    char cfile[1100] = "";
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
    if (l->cache_dir[0] && kg_mkdirs(l->cache_dir) == 0) {
        cache_file(l->cache_dir, key, cfile, sizeof cfile);
        tmpdir = l->cache_dir;
    }
    double t0 = kg_now();
    int cached = cfile[0] && cache_get(cfile, b) == 0, s = KG_WS_OK;
    if (!cached) {
        build_free(b);
        memset(b, 0, sizeof *b);
        b->tmem = -1;
        s = compile(c, l, home, src, &a, o.v, o.n, defs, key, tmpdir, b, rep);
        if (s == KG_WS_OK) {
            b->tmem = tmem_cols(b->ptx);
            if (cfile[0]) cache_put(cfile, b);
        }
    }
    free(src);
    rep->compile_seconds = kg_now() - t0;
    snprintf(rep->compiler, sizeof rep->compiler, "%s%s", b->compiler, cached ? " (cached)" : "");
    if (cached && strlen(b->compiler) + 9 >= sizeof rep->compiler) /* keep "(cached)" visible */
        snprintf(rep->compiler + sizeof rep->compiler - 10, 10, " (cached)");
    return s;
}

static int cuda_load(void *st, const struct kg_req_load *l, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (c->fn) {
        say(rep, "already loaded");
        return KG_WS_BAD_REQUEST;
    }
    if (l->nargs < 0 || l->nargs > KG_MAX_ARGS || !l->entry[0] || !l->path[0]) {
        say(rep, "malformed load request");
        return KG_WS_BAD_REQUEST;
    }
    const char *homes[3];
    const char *home = cuda_homes(l->cuda_home, homes) > 0 ? homes[0] : "/usr/local/cuda";
    if (!c->cupti_tried) { /* before the context exists */
        c->cupti_tried = 1;
        c->cupti_on = kg_cupti_start(home, c->cupti_why, sizeof c->cupti_why) == 0;
    }
    int s = ctx_setup(c, rep);
    if (s != KG_WS_OK) return s;
    fill_dev(c, rep);
    c->nargs = l->nargs;
    memcpy(c->argkind, l->argkind, sizeof c->argkind);

    struct build b;
    memset(&b, 0, sizeof b);
    b.tmem = -1;
    s = get_binary(c, l, home, &b, rep);
    if (s == KG_WS_OK) s = load_module(c, b.img, &c->mod, l->path, rep);
    if (s == KG_WS_OK) {
        CUresult r = c->cu.ModuleGetFunction(&c->fn, c->mod, b.sym);
        if (r != CUDA_SUCCESS) s = cu_fail(c, rep, KG_WS_ENTRY, r, "cuModuleGetFunction(%s)", b.sym);
    }
    rep->attrs.tmem_cols = b.tmem;
    build_free(&b);
    if (s == KG_WS_OK) s = read_attrs(c, rep);
    if (s == KG_WS_OK) s = check_params(c, l->entry, rep);
    if (s != KG_WS_OK) {
        c->fn = NULL;
        return s;
    }
    load_spin(c);
    if (!c->cupti_on) say(rep, "CUPTI probe off: %s", c->cupti_why);
    return KG_WS_OK;
}

/* ---------------------------------------------------------------------------------------
 * Memory */

static int cuda_alloc(void *st, uint64_t bytes, uint64_t *handle, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!c->ctx) {
        say(rep, "alloc before load");
        return KG_WS_BAD_REQUEST;
    }
    CUdeviceptr p = 0;
    CUresult r = c->cu.MemAlloc(&p, bytes ? (size_t)bytes : 1); /* 0 bytes is an error for the driver */
    if (r != CUDA_SUCCESS) return cu_fail(c, rep, KG_WS_LAUNCH, r, "cuMemAlloc(%llu bytes)", (unsigned long long)bytes);
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
    if (r != CUDA_SUCCESS) return cu_fail(c, rep, KG_WS_CUDA, r, "cuMemcpyHtoD(%llu bytes)", (unsigned long long)n);
    return KG_WS_OK;
}

static int cuda_download(void *st, void *dst, uint64_t src, uint64_t n, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!n) return KG_WS_OK;
    CUresult r = c->cu.MemcpyDtoH(dst, (CUdeviceptr)src, (size_t)n);
    if (r != CUDA_SUCCESS) return cu_fail(c, rep, KG_WS_CUDA, r, "cuMemcpyDtoH(%llu bytes)", (unsigned long long)n);
    return KG_WS_OK;
}

/* ---------------------------------------------------------------------------------------
 * Launch, busy, sync */

static int cuda_launch(void *st, const struct kg_launch *L, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!c->fn) {
        say(rep, "launch before load");
        return KG_WS_BAD_REQUEST;
    }
    if (L->nargs != c->nargs) {
        say(rep, "run with %d args, loaded with %d", L->nargs, c->nargs);
        return KG_WS_BAD_REQUEST;
    }
    if (L->stream < 0 || L->stream > 2) {
        say(rep, "no stream %d", L->stream);
        return KG_WS_BAD_REQUEST;
    }
    int ok = L->smem >= 0 && L->smem <= INT_MAX;
    for (int d = 0; d < 3; d++)
        ok &= L->grid[d] >= 1 && L->grid[d] <= INT_MAX && L->block[d] >= 1 && L->block[d] <= INT_MAX;
    if (!ok) {
        say(rep,
            "invalid launch configuration grid=(%lld,%lld,%lld) block=(%lld,%lld,%lld) smem=%lld: every dimension "
            "must be in 1..2147483647 and smem in 0..2147483647",
            (long long)L->grid[0], (long long)L->grid[1], (long long)L->grid[2], (long long)L->block[0],
            (long long)L->block[1], (long long)L->block[2], (long long)L->smem);
        return KG_WS_LAUNCH;
    }
    CUresult r;
    if (L->smem > c->dyn_smem_max) {
        r = c->cu.FuncSetAttribute(c->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)L->smem);
        if (r != CUDA_SUCCESS)
            return cu_fail(c, rep, KG_WS_LAUNCH, r,
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
            say(rep, "arg %d: kind %d at run, %d at load", i, L->kind[i], c->argkind[i]);
            return KG_WS_BAD_REQUEST;
        }
        switch (L->kind[i]) {
        case KG_ARG_TENSOR:
            vals[i].p = (CUdeviceptr)L->ptr[i];
            break;
        case KG_ARG_INT:
            vals[i].i = (int32_t)L->args[i].ival;
            break;
        case KG_ARG_LONG:
            vals[i].l = L->args[i].ival;
            break;
        case KG_ARG_FLOAT:
            vals[i].f = (float)L->args[i].fval;
            break;
        case KG_ARG_DOUBLE:
            vals[i].d = L->args[i].fval;
            break;
        default:
            say(rep, "arg %d: bad kind %d", i, L->kind[i]);
            return KG_WS_BAD_REQUEST;
        }
        params[i] = &vals[i];
    }
    CUstream s = c->stream[L->stream];
    c->last = -1;
    if ((r = c->cu.EventRecord(c->ev[L->stream][0], s)) != CUDA_SUCCESS)
        return cu_fail(c, rep, KG_WS_LAUNCH, r, "cuEventRecord(before the kernel)");
    r = c->cu.LaunchKernel(c->fn, (unsigned)L->grid[0], (unsigned)L->grid[1], (unsigned)L->grid[2],
                           (unsigned)L->block[0], (unsigned)L->block[1], (unsigned)L->block[2], (unsigned)L->smem, s,
                           L->nargs ? params : NULL, NULL);
    if (r != CUDA_SUCCESS) {
        if (!rep->code) rep->code = (int32_t)r;
        say(rep, "cuLaunchKernel: %s (%s): grid=(%lld,%lld,%lld) block=(%lld,%lld,%lld) smem=%lld", cu_name(c, r),
            cu_string(c, r), (long long)L->grid[0], (long long)L->grid[1], (long long)L->grid[2],
            (long long)L->block[0], (long long)L->block[1], (long long)L->block[2], (long long)L->smem);
        return is_sticky(r) ? KG_WS_CUDA : KG_WS_LAUNCH;
    }
    if ((r = c->cu.EventRecord(c->ev[L->stream][1], s)) != CUDA_SUCCESS)
        return cu_fail(c, rep, KG_WS_LAUNCH, r, "cuEventRecord(after the kernel)");
    c->last = L->stream;
    return KG_WS_OK;
}

static int cuda_busy_default(void *st, double seconds, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!c->spin_fn) {
        say(rep, "cannot keep the default stream busy: kgate's spin kernel did not load: %s",
            c->spin_why[0] ? c->spin_why : "not loaded yet");
        return KG_WS_UNAVAILABLE;
    }
    unsigned long long ns = 0;
    if (seconds > 0) ns = seconds > 60 ? 60000000000ull : (unsigned long long)(seconds * 1e9);
    void *params[1] = {&ns};
    CUresult r = c->cu.LaunchKernel(c->spin_fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
    if (r != CUDA_SUCCESS) return cu_fail(c, rep, KG_WS_LAUNCH, r, "cuLaunchKernel(" SPIN_NAME ")");
    return KG_WS_OK;
}

static int cuda_sync(void *st, struct kg_reply *rep)
{
    struct cuda *c = st;
    if (!c->ctx) {
        say(rep, "sync before load");
        return KG_WS_BAD_REQUEST;
    }
    CUresult r = c->cu.CtxSynchronize();
    if (r != CUDA_SUCCESS) {
        if (!rep->code) rep->code = (int32_t)r;
        say(rep, "%s: %s (during or after the kernel)", cu_name(c, r), cu_string(c, r));
        c->last = -1;
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
            say(rep, "kernel time unknown: cuEventElapsedTime: %s", cu_name(c, r));
        }
        c->last = -1;
    }
    if (c->cupti_on) {
        kg_cupti_collect(rep);
    } else {
        rep->nlaunch = -1;
        rep->cupti_ok = 0;
    }
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
            return cu_fail(c, rep, KG_WS_CUDA, r, "cuStreamWriteValue32(the pair's start gate)");
        return KG_WS_OK;
    }
    if (!c->ctx || c->gate_state < 0) return KG_WS_OK;
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
        if (is_sticky(r)) return cu_fail(c, rep, KG_WS_CUDA, r, "cuStreamWaitValue32(the pair's start gate)");
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
        for (int i = 1; i < 3; i++)
            if (c->stream[i]) c->cu.StreamDestroy(c->stream[i]);
        if (c->gate_stream) c->cu.StreamDestroy(c->gate_stream);
        if (c->gate) c->cu.MemFree(c->gate);
        c->cu.DevicePrimaryCtxRelease(c->dev);
    }
    /* libcuda and libnvrtc stay loaded: CUPTI and the driver keep threads that use them */
    free(c);
}

const struct kg_runner_ops kg_runner_cuda = {
    .name = "cuda",
    .init = cuda_init,
    .load = cuda_load,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .upload = cuda_upload,
    .download = cuda_download,
    .launch = cuda_launch,
    .busy_default = cuda_busy_default,
    .hold = cuda_hold,
    .sync = cuda_sync,
    .oracle = NULL,
    .fini = cuda_fini,
};
