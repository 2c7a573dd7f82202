/* segment.c: memfd segments for the workers' runs and a pool of freed ones (segment.h). A new
 * segment costs a page fault and a page zeroing per page on first touch, on the judge's side and
 * again in the worker that maps it: at real sizes (hundreds of MB per run, dozens of runs per
 * check) that was a good part of a check's time. */
#include "base/segment.h"

#include "base/parallel.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SEG_SLOTS 16
#define SEG_MIN   ((uint64_t)1 << 20)

static struct kg_seg *kept[KG_SEG_POOLS][SEG_SLOTS];
static int nkept[KG_SEG_POOLS];
static uint64_t kept_bytes;            /* over both pools */
static uint64_t live_bytes, live_peak; /* segments handed out and not yet put back: now, at most */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* The pool's floor: 1/16 of this check's share of the host, at most 8 GiB; KGATE_SEG_POOL=MiB
 * to measure (it is then the cap, fixed). */
static uint64_t floor_cap(void)
{
    static uint64_t cap = UINT64_MAX;
    if (cap == UINT64_MAX) cap = kg_cache_cap("KGATE_SEG_POOL", 16, (uint64_t)8 << 30);
    return cap;
}

/* What the pool may keep, together with the segments out now: the floor, or as much as this
 * process has already had out at once, whichever is more. A gate holds up to six runs at once
 * and the next gate wants as many again; a segment made anew costs a fault and a zeroing per
 * page here (kg_seg_touch) and again in the worker, about a second for each 4.3 GB segment of
 * KernelBench's real-size max pool on the H200, where under kgate audit the floor (1/16 of a
 * sixth of the host) kept none of them. Keeping what the check already held at once never takes
 * it past its own peak (kg_seg_get makes room before it makes one anew), and its peak is what the
 * audit's ledger reserves. Under kept_lock. */
static uint64_t kept_cap(void)
{
    uint64_t f = floor_cap();
    return getenv("KGATE_SEG_POOL") || live_peak < f ? f : live_peak;
}

/* Unmaps and closes g, its pages given back first (truncated to nothing): a worker keeps its
 * last few mappings (a segment comes back from the pool), and a mapping alone kept a dropped
 * segment's pages alive. On the H200 the torch worker of one real-size max-pool check held
 * 22.7 GB that way, with segments of 4.3 GB each, larger than the pool keeps. A worker touches
 * a segment only within a request that sends it, and none sends a dropped one. */
static void destroy(struct kg_seg *g)
{
    if (g->mem) munmap(g->mem, g->size);
    if (g->fd >= 0) {
        if (ftruncate(g->fd, 0)) { /* nothing to do: they go with the last mapping */
        }
        close(g->fd);
    }
    free(g);
}

static void drop(int p, int i)
{
    kept_bytes -= kept[p][i]->size;
    memmove(&kept[p][i], &kept[p][i + 1], (size_t)(nkept[p] - i - 1) * sizeof kept[p][0]);
    nkept[p]--;
}

/* Gives back pool q's oldest kept segment (dropped first: drop reads its size, and the free
 * lets the allocator write over it). Under kept_lock. */
static void evict(int q)
{
    struct kg_seg *old = kept[q][0];
    drop(q, 0);
    destroy(old);
}

/* Gives back kept segments (the larger of the pools' oldest first) until what is kept and what
 * is out, with need bytes more, fit the cap, or nothing is kept. Under kept_lock. */
static void make_room(uint64_t need)
{
    for (;;) {
        int q = -1;
        for (int o = 0; o < KG_SEG_POOLS; o++)
            if (nkept[o] && (q < 0 || kept[o][0]->size > kept[q][0]->size)) q = o;
        if (q < 0 || kept_bytes + live_bytes + need <= kept_cap()) return;
        evict(q);
    }
}

/* Whether g holds the bytes called tag (0: none), anywhere (exact false) or exactly at
 * [off, off + len). */
static bool holds(const struct kg_seg *g, uint64_t tag, bool exact, uint64_t off, uint64_t len)
{
    for (int i = 0; tag && i < g->nheld; i++)
        if (g->held[i].tag == tag && (!exact || (g->held[i].off == off && g->held[i].len == len))) return true;
    return false;
}

/* A segment counted out that could not be made: NULL. */
static struct kg_seg *not_out(uint64_t size)
{
    pthread_mutex_lock(&kept_lock);
    live_bytes -= size;
    pthread_mutex_unlock(&kept_lock);
    return NULL;
}

struct kg_seg *kg_seg_get(enum kg_seg_pool pool, uint64_t size, uint64_t tag, struct kg_err *e)
{
    if (size < SEG_MIN) size = SEG_MIN;
    const int p = pool;
    pthread_mutex_lock(&kept_lock);
    int best = -1;
    for (int i = 0; i < nkept[p]; i++) {
        const struct kg_seg *c = kept[p][i];
        if (c->size < size || c->size / 2 > size) continue;
        if (best >= 0) {
            const bool h = holds(c, tag, false, 0, 0), hb = holds(kept[p][best], tag, false, 0, 0);
            if (hb > h || (hb == h && c->size >= kept[p][best]->size)) continue;
        }
        best = i;
    }
    struct kg_seg *g = best >= 0 ? kept[p][best] : NULL;
    if (g) drop(p, best);
    size = g ? g->size : (size + SEG_MIN - 1) / SEG_MIN * SEG_MIN;
    if (!g) make_room(size);
    live_bytes += size;
    if (live_bytes > live_peak) live_peak = live_bytes;
    pthread_mutex_unlock(&kept_lock);
    if (g) return g;
    g = calloc(1, sizeof *g);
    if (!g) {
        kg_errf(e, "out of memory");
        return not_out(size);
    }
    g->fd = memfd_create("kgate-run", MFD_CLOEXEC);
    if (g->fd < 0) {
        kg_errf(e, "memfd_create: %s", strerror(errno));
        free(g);
        return not_out(size);
    }
    void *m = MAP_FAILED;
    if (ftruncate(g->fd, (off_t)size) == 0) m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
    if (m == MAP_FAILED) {
        kg_errf(e, "cannot make %llu bytes of shared memory: %s", (unsigned long long)size, strerror(errno));
        destroy(g);
        return not_out(size);
    }
    g->mem = m;
    g->size = size;
    g->pool = pool;
    return g;
}

bool kg_seg_holds(const struct kg_seg *g, uint64_t off, uint64_t len, uint64_t tag)
{
    return holds(g, tag, true, off, len);
}

void kg_seg_hold(struct kg_seg *g, uint64_t off, uint64_t len, uint64_t tag)
{
    if (tag && g->nheld < KG_SEG_HELD) g->held[g->nheld++] = (struct kg_seg_held){off, len, tag};
}

void kg_seg_forget(struct kg_seg *g)
{
    g->nheld = 0;
}

struct touch {
    uint8_t *mem;
    uint64_t page;
};

static void touch_pages(void *ctx, int64_t lo, int64_t hi)
{
    const struct touch *t = ctx;
    for (int64_t i = lo; i < hi; i++) __atomic_fetch_add(t->mem + (uint64_t)i * t->page, 0, __ATOMIC_RELAXED);
}

void kg_seg_touch(struct kg_seg *g, uint64_t len)
{
    if (len > g->size) len = g->size;
    if (len <= g->touched) return;
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    const uint64_t lo = g->touched / page, hi = (len + page - 1) / page;
    struct touch t = {g->mem + lo * page, page};
    kg_parallel_for((int64_t)(hi - lo), 4096, touch_pages, &t);
    g->touched = hi * page < g->size ? hi * page : g->size;
}

void kg_seg_discard(struct kg_seg *g, uint64_t off, uint64_t len)
{
    kg_seg_forget(g);
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t lo = (off + page - 1) / page * page, hi = (off + len) / page * page;
    if (hi > g->size) hi = g->size / page * page;
    if (hi > lo) (void)fallocate(g->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo, (off_t)(hi - lo));
}

void kg_seg_map_in(struct kg_seg *g, uint64_t off, uint64_t len)
{
#ifdef MADV_POPULATE_READ
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t lo = off / page * page, hi = off + len < g->size ? off + len : g->size;
    if (hi > lo) (void)madvise(g->mem + lo, hi - lo, MADV_POPULATE_READ);
#else
    (void)g;
    (void)off;
    (void)len;
#endif
}

void kg_seg_put(struct kg_seg *g)
{
    if (!g) return;
    const int p = g->pool;
    pthread_mutex_lock(&kept_lock);
    live_bytes -= g->size;
    if (g->size > kept_cap()) {
        pthread_mutex_unlock(&kept_lock);
        destroy(g);
        return;
    }
    for (;;) { /* room: this pool's oldest first, then the other's */
        int q = nkept[p] == SEG_SLOTS || (nkept[p] && kept_bytes + live_bytes + g->size > kept_cap()) ? p : -1;
        for (int o = 0; q < 0 && o < KG_SEG_POOLS; o++)
            if (nkept[o] && kept_bytes + live_bytes + g->size > kept_cap()) q = o;
        if (q < 0) break;
        evict(q);
    }
    kept[p][nkept[p]++] = g;
    kept_bytes += g->size;
    pthread_mutex_unlock(&kept_lock);
}

uint64_t kg_seg_pool_cap(void)
{
    pthread_mutex_lock(&kept_lock);
    uint64_t cap = kept_cap();
    pthread_mutex_unlock(&kept_lock);
    return cap;
}

void kg_seg_pool_reset(void)
{
    pthread_mutex_lock(&kept_lock);
    for (int p = 0; p < KG_SEG_POOLS; p++)
        while (nkept[p]) evict(p);
    live_peak = live_bytes;
    pthread_mutex_unlock(&kept_lock);
}
