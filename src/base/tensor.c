/* tensor.c: allocation, strides and index formatting of dense row-major tensors. */
#include "base/tensor.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/parallel.h"
#include "base/util.h"

/* ---- a pool of large blocks ------------------------------------------------------------------ */

/* A check allocates and frees tensors of the same few sizes for every run (the copies of what
 * was sent and what came back, the recorded outputs, the memo's copies). Blocks that large come
 * from mmap, fresh from the kernel every time: a page fault and a zeroing per page, measured at
 * about half of the judge's time on KernelBench's real sizes (perf, a 2048x16384 relu). So freed
 * blocks of at least POOL_MIN bytes are kept, up to a share of the machine's memory, and handed
 * to the next allocation of about their size; the oldest go back to the system first. */
#define POOL_MIN   ((size_t)4 << 20)
#define POOL_SLOTS 64

static struct {
    void *p;
    size_t n;
} pool[POOL_SLOTS];
static int npool;
static size_t pool_bytes;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* What the pool may keep: 1/32 of physical memory, at most 4 GiB (6 checks at once on a 128 GB
 * host keep at most 24 GB they are not using); nothing with KGATE_TENSOR_POOL=0. */
static size_t pool_cap(void)
{
    static size_t cap = SIZE_MAX;
    if (cap == SIZE_MAX) cap = (size_t)kg_cache_cap("KGATE_TENSOR_POOL", 32, (uint64_t)4 << 30);
    return cap;
}

static void pool_drop(int i)
{
    pool_bytes -= pool[i].n;
    memmove(&pool[i], &pool[i + 1], (size_t)(npool - i - 1) * sizeof pool[0]);
    npool--;
}

/* A kept block of at least n bytes and at most a quarter more, or NULL. */
static void *pool_take(size_t n)
{
    if (n < POOL_MIN) return NULL;
    pthread_mutex_lock(&pool_lock);
    int best = -1;
    for (int i = 0; i < npool; i++)
        if (pool[i].n >= n && pool[i].n - n <= n / 4 && (best < 0 || pool[i].n < pool[best].n)) best = i;
    void *p = best >= 0 ? pool[best].p : NULL;
    if (best >= 0) pool_drop(best);
    pthread_mutex_unlock(&pool_lock);
    return p;
}

static void pool_put(void *p)
{
    size_t n = p ? malloc_usable_size(p) : 0;
    if (n < POOL_MIN || n > pool_cap()) {
        free(p);
        return;
    }
    pthread_mutex_lock(&pool_lock);
    while (npool && (npool == POOL_SLOTS || pool_bytes + n > pool_cap())) {
        free(pool[0].p);
        pool_drop(0);
    }
    pool[npool].p = p;
    pool[npool].n = n;
    npool++;
    pool_bytes += n;
    pthread_mutex_unlock(&pool_lock);
}

/* ---- tensors --------------------------------------------------------------------------------- */

/* Fresh memory of a large tensor in transparent huge pages where the kernel gives them on
 * request (THP "madvise"): its first touch then faults once per 2 MiB, not once per 4 KiB (at
 * real sizes, hundreds of thousands of faults per check were a quarter of the judge's time). */
static void huge_pages(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + n) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

static int alloc(struct kg_tensor *t, enum kg_dtype dtype, int rank, const int64_t *dims, bool zeroed)
{
    if (rank < 0 || rank > KG_MAX_RANK) return -1;
    t->dtype = dtype;
    t->rank = rank;
    t->numel = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1;
        t->dims[i] = dims[i];
        if (dims[i] && t->numel > INT64_MAX / dims[i]) return -1;
        t->numel *= dims[i];
    }
    size_t sz = kg_dtype_size(dtype);
    if (!sz || (uint64_t)t->numel > SIZE_MAX / sz) return -1;
    size_t n = (t->numel ? (size_t)t->numel : 1) * sz;
    t->data = pool_take(n);
    if (t->data && zeroed) memset(t->data, 0, n);
    if (!t->data) {
        t->data = zeroed ? calloc(n / sz, sz) : malloc(n);
        if (t->data && n >= POOL_MIN) huge_pages(t->data, n);
    }
    return t->data ? 0 : -1;
}

int kg_tensor_alloc(struct kg_tensor *t, enum kg_dtype dtype, int rank, const int64_t *dims)
{
    return alloc(t, dtype, rank, dims, true);
}

int kg_tensor_copy(struct kg_tensor *dst, const struct kg_tensor *src)
{
    if (alloc(dst, src->dtype, src->rank, src->dims, false)) return -1;
    kg_memcpy_parallel(dst->data, src->data, kg_tensor_bytes(dst));
    return 0;
}

int kg_tensor_copy_from(struct kg_tensor *dst, enum kg_dtype dtype, int rank, const int64_t *dims, const void *src)
{
    if (alloc(dst, dtype, rank, dims, false)) return -1;
    kg_memcpy_parallel(dst->data, src, kg_tensor_bytes(dst));
    return 0;
}

void kg_tensor_free(struct kg_tensor *t)
{
    pool_put(t->data);
    t->data = NULL;
}

size_t kg_tensor_bytes(const struct kg_tensor *t)
{
    return (size_t)t->numel * kg_dtype_size(t->dtype);
}

void kg_tensor_strides(const struct kg_tensor *t, int64_t *strides)
{
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= t->dims[i];
    }
}

void kg_tensor_index_str(const struct kg_tensor *t, int64_t flat, char *buf, size_t n)
{
    int64_t idx[KG_MAX_RANK];
    for (int i = t->rank - 1; i >= 0; i--) {
        int64_t d = t->dims[i] ? t->dims[i] : 1;
        idx[i] = flat % d;
        flat /= d;
    }
    size_t len = 0;
    buf[0] = '\0';
    kg_appendf(buf, n, &len, "[");
    for (int i = 0; i < t->rank; i++) kg_appendf(buf, n, &len, "%s%lld", i ? "," : "", (long long)idx[i]);
    kg_appendf(buf, n, &len, "]");
}

/* "[2,3]" for a shape; b must hold 8 * 21 + 3 bytes. */
const char *kg_shape_str(const struct kg_shape *s, char *b, size_t n)
{
    size_t len = 0;
    b[0] = '\0';
    kg_appendf(b, n, &len, "[");
    for (int i = 0; i < s->rank && i < KG_MAX_RANK; i++)
        kg_appendf(b, n, &len, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    kg_appendf(b, n, &len, "]");
    return b;
}
