/* cupti.c: the CUPTI probe. libcupti is dlopen'd and records CONCURRENT_KERNEL activity into
 * buffers it hands back through two callbacks; the records are copied out under a mutex and
 * moved into the reply after each run. CUPTI's buffer callbacks carry no user pointer, so the
 * probe's state is one static struct: one worker process, one probe.
 *
 * Record layout. Kernel records changed size with every CUPTI version (CUpti_ActivityKernel4
 * .. CUpti_ActivityKernel10 in the 13.0 headers), and libcupti writes the newest layout *it*
 * knows, which need not be the header's. Only the leading fields are read here (kind ..
 * name): they sit at the same offsets in every version from Kernel4 to Kernel10, which the
 * static assertions below check against the headers configure found. A record is read only
 * when its kind is KERNEL or CONCURRENT_KERNEL, and only through memcpy of that prefix. */
#include "probes/cupti.h"

#include <stdio.h>
#include <string.h>

#include "worker/proto.h"
#include "base/util.h"

#if defined(KG_HAVE_CUPTI) && defined(KG_HAVE_CUDA)

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

/* The toolkit's cupti.h shares this directory's header name: include its parts directly. */
#include <cupti_activity.h>
#include <cupti_result.h>
#include <cupti_version.h>

/* Appends "; note" (or the note alone) to rep->msg. */
static void note(struct kg_reply *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct kg_reply *rep, const char *fmt, ...)
{
    size_t len = strlen(rep->msg);
    if (len) kg_appendf(rep->msg, sizeof rep->msg, &len, "; ");
    if (len + 1 >= sizeof rep->msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->msg + len, sizeof rep->msg - len, fmt, ap);
    va_end(ap);
}

/* The leading fields of every kernel record, CUpti_ActivityKernel4 .. 10. */
struct kernel_prefix {
    uint32_t kind;
    uint8_t cache_config, shared_memory_config;
    uint16_t registers_per_thread;
    uint32_t pgc_requested, pgc_executed;
    uint64_t start, end, completed;
    uint32_t device_id, context_id, stream_id;
    int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
    int32_t static_shared, dynamic_shared;
    uint32_t local_per_thread, local_total, correlation_id;
    int64_t grid_id;
    const char *name;
};

#define SAME_FIELD(T, theirs, ours)                                                                                    \
    _Static_assert(offsetof(T, theirs) == offsetof(struct kernel_prefix, ours), #T "." #theirs " moved")
#define SAME_PREFIX(T)                                                                                                 \
    SAME_FIELD(T, kind, kind);                                                                                         \
    SAME_FIELD(T, registersPerThread, registers_per_thread);                                                           \
    SAME_FIELD(T, start, start);                                                                                       \
    SAME_FIELD(T, end, end);                                                                                           \
    SAME_FIELD(T, gridX, grid_x);                                                                                      \
    SAME_FIELD(T, gridY, grid_y);                                                                                      \
    SAME_FIELD(T, gridZ, grid_z);                                                                                      \
    SAME_FIELD(T, blockX, block_x);                                                                                    \
    SAME_FIELD(T, blockY, block_y);                                                                                    \
    SAME_FIELD(T, blockZ, block_z);                                                                                    \
    SAME_FIELD(T, staticSharedMemory, static_shared);                                                                  \
    SAME_FIELD(T, dynamicSharedMemory, dynamic_shared);                                                                \
    SAME_FIELD(T, localMemoryPerThread, local_per_thread);                                                             \
    SAME_FIELD(T, name, name);                                                                                         \
    _Static_assert(sizeof(T) > sizeof(struct kernel_prefix), #T " is shorter than the prefix read")

_Static_assert(sizeof(CUpti_ActivityKind) == sizeof(uint32_t), "CUpti_ActivityKind is not 32 bits");
_Static_assert(sizeof(struct kernel_prefix) == 112, "kernel_prefix has padding");
#if CUPTI_API_VERSION >= 130000 && CUPTI_API_VERSION < 140000
/* The 13.x headers (checked with 13.0, CUPTI_API_VERSION 130001) declare all of these. */
SAME_PREFIX(CUpti_ActivityKernel4);
SAME_PREFIX(CUpti_ActivityKernel5);
SAME_PREFIX(CUpti_ActivityKernel6);
SAME_PREFIX(CUpti_ActivityKernel7);
SAME_PREFIX(CUpti_ActivityKernel8);
SAME_PREFIX(CUpti_ActivityKernel9);
SAME_PREFIX(CUpti_ActivityKernel10);
#else
/* Other header versions: CUpti_ActivityKernel4 has been declared since CUDA 9 and kept in
 * cupti_activity_deprecated.h; if a future toolkit drops it, delete this line. */
SAME_PREFIX(CUpti_ActivityKernel4);
#endif

#define BUF_SIZE (1u << 20)
/* Records kept between two collects; a run launches the entry once or twice plus kgate's
 * spin kernel, so this is far more than a run needs. */
#define MAX_PENDING 64

static struct {
    pthread_mutex_t lock; /* guards everything below `lock` that the callbacks touch */
    int started;
    CUpti_ActivityKind kind;
    void *lib;
    __typeof__(&cuptiGetVersion) GetVersion;
    __typeof__(&cuptiGetResultString) GetResultString;
    __typeof__(&cuptiActivityRegisterCallbacks) RegisterCallbacks;
    __typeof__(&cuptiActivityEnable) Enable;
    __typeof__(&cuptiActivityDisable) Disable;
    __typeof__(&cuptiActivityFlushAll) FlushAll;
    __typeof__(&cuptiActivityGetNextRecord) GetNextRecord;
    __typeof__(&cuptiActivityGetNumDroppedRecords) GetNumDroppedRecords; /* optional */
    struct kg_launch_rec pending[MAX_PENDING];
    int npending;
    long long overflow; /* kernel records that did not fit in pending[] */
    long long dropped;  /* records CUPTI itself dropped */
    long long bad;      /* records with an unexpected shape */
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *result_str(CUptiResult r)
{
    const char *s = NULL;
    if (S.GetResultString && S.GetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
    return "unknown CUPTI error";
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* 8-byte alignment is what CUPTI asks for; malloc gives at least 16 */
    *buffer = malloc(BUF_SIZE);
    *size = *buffer ? BUF_SIZE : 0;
    *max_records = 0;
}

static void copy_record(const CUpti_Activity *rec)
{
    struct kernel_prefix k;
    memcpy(&k, rec, sizeof k);
    if (k.grid_x <= 0 || k.grid_y <= 0 || k.grid_z <= 0 || k.block_x <= 0 || k.block_y <= 0 || k.block_z <= 0) {
        S.bad++;
        return;
    }
    if (S.npending == MAX_PENDING) {
        S.overflow++;
        return;
    }
    struct kg_launch_rec *o = &S.pending[S.npending++];
    memset(o, 0, sizeof *o);
    /* the name belongs to CUPTI and lives as long as the module: copy it now */
    kg_strlcpy(o->name, k.name ? k.name : "(unnamed)", sizeof o->name);
    o->grid[0] = k.grid_x;
    o->grid[1] = k.grid_y;
    o->grid[2] = k.grid_z;
    o->block[0] = k.block_x;
    o->block[1] = k.block_y;
    o->block[2] = k.block_z;
    o->regs = k.registers_per_thread;
    o->smem_static = k.static_shared;
    o->smem_dynamic = k.dynamic_shared;
    o->local_bytes = (int32_t)k.local_per_thread;
    /* start = end = 0 means CUPTI could not time it: -1, not a made-up 0 */
    o->seconds = k.end > k.start ? (double)(k.end - k.start) * 1e-9 : -1.0;
    if (k.end > k.start) {
        o->start_ns = k.start;
        o->end_ns = k.end;
    }
}

/* May run on CUPTI's own thread, or inside cuptiActivityFlushAll on the caller's. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    pthread_mutex_lock(&S.lock);
    CUpti_Activity *rec = NULL;
    while (buffer && S.GetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
            copy_record(rec);
    }
    size_t dropped = 0;
    if (S.GetNumDroppedRecords && S.GetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        S.dropped += (long long)dropped;
    pthread_mutex_unlock(&S.lock);
    free(buffer);
}

/* dlopen()s the first candidate that loads; the names tried are listed in tried. */
static void *open_cupti(const char *cuda_home, char *tried, size_t n)
{
    static const char *const dirs[] = {"extras/CUPTI/lib64", "lib64", "lib"};
    static const char *const names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
    const char *homes[3] = {cuda_home, getenv("KGATE_CUDA_HOME"), NULL};
#ifdef KG_CUDA_HOME
    homes[2] = KG_CUDA_HOME;
#endif
    size_t len = 0;
    tried[0] = 0;
    for (int h = 0; h < 3; h++) {
        if (!homes[h] || !*homes[h]) continue;
        int dup = 0;
        for (int k = 0; k < h; k++) dup |= homes[k] && strcmp(homes[k], homes[h]) == 0;
        if (dup) continue;
        for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++)
            for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
                char path[1024];
                snprintf(path, sizeof path, "%s/%s/%s", homes[h], dirs[d], names[i]);
                void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
                if (lib) return lib;
            }
        kg_appendf(tried, n, &len, "%s%s/{extras/CUPTI/lib64,lib64,lib}", len ? ", " : "", homes[h]);
    }
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) return lib;
    }
    kg_appendf(tried, n, &len, "%sthe loader's path", len ? ", " : "");
    return NULL;
}

static int sym(void *lib, const char *name, void *fnptr, size_t size, int optional, char *why, size_t n)
{
    void *p = dlsym(lib, name);
    if (!p && !optional) {
        snprintf(why, n, "libcupti has no %s (too old?)", name);
        return -1;
    }
    memcpy(fnptr, &p, size);
    return 0;
}

int kg_cupti_version(const char *cuda_home, unsigned *version, char *why, size_t n)
{
    char tried[1024];
    if (!S.lib) S.lib = open_cupti(cuda_home, tried, sizeof tried);
    if (!S.lib) {
        snprintf(why, n, "libcupti not found (looked in %s)", tried);
        return -1;
    }
    if (sym(S.lib, "cuptiGetVersion", &S.GetVersion, sizeof S.GetVersion, 0, why, n)) return -1;
    uint32_t v = 0;
    CUptiResult r = S.GetVersion(&v);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, n, "cuptiGetVersion failed (%d)", (int)r);
        return -1;
    }
    *version = v;
    return 0;
}

int kg_cupti_start(const char *cuda_home, char *why, size_t n)
{
    if (S.started) return 0;
    char tried[1024];
    if (!S.lib) {
        S.lib = open_cupti(cuda_home, tried, sizeof tried);
        if (!S.lib) {
            snprintf(why, n, "libcupti not found (looked in %s): kernel launches are not recorded", tried);
            return -1;
        }
    }
#define SYM(field, name, opt) sym(S.lib, name, &S.field, sizeof S.field, opt, why, n)
    if (SYM(GetVersion, "cuptiGetVersion", 0) || SYM(GetResultString, "cuptiGetResultString", 0) ||
        SYM(RegisterCallbacks, "cuptiActivityRegisterCallbacks", 0) || SYM(Enable, "cuptiActivityEnable", 0) ||
        SYM(Disable, "cuptiActivityDisable", 0) || SYM(FlushAll, "cuptiActivityFlushAll", 0) ||
        SYM(GetNextRecord, "cuptiActivityGetNextRecord", 0) ||
        SYM(GetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", 1))
        return -1;
#undef SYM
    uint32_t version = 0;
    CUptiResult r = S.GetVersion(&version);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, n, "cuptiGetVersion: %s", result_str(r));
        return -1;
    }
    /* API version 10 is CUDA 9.x, where CUpti_ActivityKernel4 (the prefix read here) began */
    if (version < 10) {
        snprintf(why, n, "libcupti API version %u is older than the kernel records kgate reads", version);
        return -1;
    }
    r = S.RegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, n, "cuptiActivityRegisterCallbacks: %s", result_str(r));
        return -1;
    }
    /* CONCURRENT_KERNEL only: the KERNEL kind serializes kernels, which would change what the
     * placement gate observes on two streams. */
    r = S.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        snprintf(why, n, "cuptiActivityEnable(CONCURRENT_KERNEL): %s", result_str(r));
        return -1;
    }
    pthread_mutex_lock(&S.lock);
    S.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    S.npending = 0;
    S.overflow = S.dropped = S.bad = 0;
    S.started = 1;
    pthread_mutex_unlock(&S.lock);
    return 0;
}

void kg_cupti_collect(struct kg_reply *rep)
{
    rep->nlaunch = -1;
    rep->cupti_ok = 0;
    if (!S.started) return;
    /* forced: also hand back the buffer still being filled; the caller synchronized, so every
     * kernel record in it is complete */
    CUptiResult r = S.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&S.lock);
    int k = S.npending < KG_MAX_LAUNCH_RECS ? S.npending : KG_MAX_LAUNCH_RECS;
    long long more = S.overflow + (S.npending - k), dropped = S.dropped, bad = S.bad;
    memcpy(rep->launch, S.pending, (size_t)k * sizeof *rep->launch);
    S.npending = 0;
    S.overflow = S.dropped = S.bad = 0;
    pthread_mutex_unlock(&S.lock);
    if (r != CUPTI_SUCCESS) {
        note(rep, "CUPTI: cuptiActivityFlushAll: %s (kernel launches not recorded)", result_str(r));
        return;
    }
    if (dropped) {
        note(rep, "CUPTI dropped %lld activity records (kernel launches not recorded)", dropped);
        return;
    }
    if (bad) note(rep, "CUPTI: %lld kernel records with a non-positive grid or block were ignored", bad);
    if (more) note(rep, "CUPTI: %lld more kernel launches than the %d recorded", more, KG_MAX_LAUNCH_RECS);
    rep->nlaunch = k;
    rep->cupti_ok = 1;
}

void kg_cupti_stop(void)
{
    if (!S.started) return;
    S.Disable(S.kind);
    S.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* hands back (and frees) the last buffers */
    pthread_mutex_lock(&S.lock);
    S.started = 0;
    S.npending = 0;
    pthread_mutex_unlock(&S.lock);
    /* libcupti stays loaded: it may still own threads that call back into this file */
}

#else /* no cupti.h at configure time */

int kg_cupti_version(const char *cuda_home, unsigned *version, char *why, size_t n)
{
    (void)cuda_home;
    *version = 0;
    snprintf(why, n, "this kgate was built without the CUPTI probe (configure found no cupti.h)");
    return -1;
}

int kg_cupti_start(const char *cuda_home, char *why, size_t n)
{
    snprintf(why, n, "this kgate was built without the CUPTI probe (configure found no cupti.h)");
    return -1;
}

void kg_cupti_collect(struct kg_reply *rep)
{
    rep->nlaunch = -1;
    rep->cupti_ok = 0;
}

void kg_cupti_stop(void)
{
}

#endif
