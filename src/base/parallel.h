/* parallel.h: a loop over [0, n) split across threads, for the judge's per-element passes over
 * real-size tensors (input draws and transformations, rounding): each element's result depends
 * on its index alone, so the split changes no value. */
#ifndef KG_PARALLEL_H
#define KG_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

/* fn(ctx, lo, hi) over consecutive chunks of [0, n), on up to kg_parallel_threads() threads
 * (the caller's among them), all done on return; no chunk smaller than grain (one call on the
 * caller's thread below twice that). */
void kg_parallel_for(int64_t n, int64_t grain, void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx);
/* The grain of a per-element pass: below this many elements threads cost more than they save. */
#define KG_PARALLEL_GRAIN ((int64_t)1 << 20)
/* memcpy of n bytes split across those threads: a real-size tensor copied into a run's shared
 * memory (GBs per run, each first touch of a page a fault) goes at several threads' speed. */
void kg_memcpy_parallel(void *dst, const void *src, size_t n);
/* The threads a loop may use: $KGATE_THREADS, else the CPUs this process may run on, at most 8. */
int kg_parallel_threads(void);

#endif
