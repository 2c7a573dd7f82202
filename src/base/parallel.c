/* parallel.c: kg_parallel_for and kg_memcpy_parallel (parallel.h). Threads are made per loop and joined before it
 * returns: the judge forks workers, and a fork never meets a thread of ours mid-loop. */
#include "base/parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 8
#define MIN_SPLIT   ((int64_t)1 << 20)

int kg_parallel_threads(void)
{
    static int n;
    if (!n) {
        const char *env = getenv("KGATE_THREADS");
        int v = env ? atoi(env) : 0;
        if (v <= 0) {
            cpu_set_t set;
            v = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
        }
        n = v < 1 ? 1 : v > MAX_THREADS ? MAX_THREADS : v;
    }
    return n;
}

struct chunk {
    void (*fn)(void *ctx, int64_t lo, int64_t hi);
    void *ctx;
    int64_t lo, hi;
};

static void *run_chunk(void *p)
{
    struct chunk *c = p;
    c->fn(c->ctx, c->lo, c->hi);
    return NULL;
}

void kg_parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx)
{
    int nt = kg_parallel_threads();
    if (grain < 1) grain = 1;
    if (n / grain < nt) nt = (int)(n / grain);
    if (nt <= 1) {
        if (n > 0) fn(ctx, 0, n);
        return;
    }
    struct chunk c[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    bool started[MAX_THREADS] = {0};
    for (int t = 0; t < nt; t++) c[t] = (struct chunk){fn, ctx, n * t / nt, n * (t + 1) / nt};
    for (int t = 1; t < nt; t++) started[t] = pthread_create(&tid[t], NULL, run_chunk, &c[t]) == 0;
    run_chunk(&c[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            run_chunk(&c[t]); /* no thread to be had: the caller does it */
    }
}

struct copy {
    uint8_t *dst;
    const uint8_t *src;
};

static void copy_range(void *ctx, int64_t lo, int64_t hi)
{
    const struct copy *c = ctx;
    memcpy(c->dst + lo, c->src + lo, (size_t)(hi - lo));
}

void kg_memcpy_parallel(void *dst, const void *src, size_t n)
{
    struct copy c = {dst, src};
    kg_parallel_for((int64_t)n, (int64_t)16 << 20, copy_range, &c);
}
