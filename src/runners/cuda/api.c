/* api.c: the CUDA runner's reach into the driver and NVRTC. libcuda and libnvrtc are
 * dlopen'd and their symbols resolved into the tables of cuda_api.h, never linked, so a
 * machine without a driver gets KG_WS_UNAVAILABLE and a plain reason, never a crash. Here
 * too: the names of CUDA errors for messages, and init, which reads the device's limits. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "runners/cuda/cuda.h"

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "dlsym results are stored into function pointers");

/* ---------------------------------------------------------------------------------------
 * Messages */

/* Appends to rep->msg, after "; " when something is already there (a run can report a launch
 * error and then a synchronize error; the first must not be lost). */
void kg_cuda_say(struct kg_reply *rep, const char *fmt, ...)
{
    size_t len = strlen(rep->msg);
    if (len) kg_appendf(rep->msg, sizeof rep->msg, &len, "; ");
    if (len + 1 >= sizeof rep->msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->msg + len, sizeof rep->msg - len, fmt, ap);
    va_end(ap);
}

const char *kg_cu_name(struct cuda *c, CUresult r)
{
    const char *s = NULL;
    if (c->cu.GetErrorName && c->cu.GetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
    snprintf(c->errname, sizeof c->errname, "CUDA error %d", (int)r);
    return c->errname;
}

const char *kg_cu_string(struct cuda *c, CUresult r)
{
    const char *s = NULL;
    if (c->cu.GetErrorString && c->cu.GetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
    return "no description";
}

/* Errors after which the context is unusable: the worker must exit (worker_main does it on
 * KG_WS_CUDA). */
int kg_cu_sticky(CUresult r)
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
    case CUDA_ERROR_UNKNOWN: return 1;
    default: return 0;
    }
}

/* Records a failed driver call: "CALL: CUDA_ERROR_X (description)". Returns status, or
 * KG_WS_CUDA when the error is sticky. */
int kg_cu_fail(struct cuda *c, struct kg_reply *rep, int status, CUresult r, const char *fmt, ...)
{
    char call[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call, sizeof call, fmt, ap);
    va_end(ap);
    if (!rep->code) rep->code = (int32_t)r;
    kg_cuda_say(rep, "%s: %s (%s)", call, kg_cu_name(c, r), kg_cu_string(c, r));
    return kg_cu_sticky(r) ? KG_WS_CUDA : status;
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
int kg_cuda_homes(const char *req, const char *out[3])
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
int kg_cuda_open_nvrtc(struct cuda *c, const char *home)
{
    static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11"};
    static const char *const dirs[] = {"lib64", "lib"};
    const char *homes[3];
    int nh = kg_cuda_homes(home, homes);
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

void kg_cuda_fill_dev(struct cuda *c, struct kg_reply *rep)
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

int kg_cuda_init(void **st, struct kg_reply *rep)
{
    *st = NULL;
    struct cuda *c = calloc(1, sizeof *c);
    if (!c) {
        kg_cuda_say(rep, "out of memory");
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
        kg_cuda_say(rep, "libcuda.so.1 not found: no NVIDIA driver on this machine (%s)", err1);
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    char why[300];
    if (resolve(c->cu.lib, &c->cu, cu_syms, sizeof cu_syms / sizeof *cu_syms, c->cu.path, why, sizeof why)) {
        kg_cuda_say(rep, "%s (the NVIDIA driver is too old for kgate)", why);
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    CUresult r = c->cu.Init(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
        kg_cuda_say(rep, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE): the driver sees no GPU here");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if (r == CUDA_ERROR_STUB_LIBRARY) {
        kg_cuda_say(rep, "%s is the CUDA toolkit's stub library, not a driver: no NVIDIA driver on this machine",
                    c->cu.path);
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if (r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH || r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
        kg_cu_fail(c, rep, 0, r, "cuInit");
        kg_cuda_say(rep, "the NVIDIA kernel driver and %s do not match or are too old", c->cu.path);
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if (r != CUDA_SUCCESS) {
        kg_cu_fail(c, rep, 0, r, "cuInit");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if ((r = c->cu.DriverGetVersion(&c->driver_version)) != CUDA_SUCCESS) {
        kg_cu_fail(c, rep, 0, r, "cuDriverGetVersion");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    int count = 0;
    if ((r = c->cu.DeviceGetCount(&count)) != CUDA_SUCCESS) {
        kg_cu_fail(c, rep, 0, r, "cuDeviceGetCount");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if (count < 1) {
        kg_cuda_say(rep, "no CUDA device (cuDeviceGetCount: 0)");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if ((r = c->cu.DeviceGet(&c->dev, 0)) != CUDA_SUCCESS) {
        kg_cu_fail(c, rep, 0, r, "cuDeviceGet(0)");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    if ((r = c->cu.DeviceGetAttribute(&c->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->dev)) ||
        (r = c->cu.DeviceGetAttribute(&c->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->dev))) {
        kg_cu_fail(c, rep, 0, r, "cuDeviceGetAttribute(COMPUTE_CAPABILITY)");
        return init_fail(c, KG_WS_UNAVAILABLE);
    }
    kg_cuda_fill_dev(c, rep);
    *st = c;
    return KG_WS_OK;
}
