/* segment.h: shared memory segments (memfd) that carry a run's tensors between the judge and a
 * worker. A run owns its segment until its values are freed (its outputs are read where the
 * worker wrote them, not copied out), then the segment goes back to a pool for the next run of
 * about its size, its pages still in place. */
#ifndef KG_SEGMENT_H
#define KG_SEGMENT_H

#include <stdint.h>

#include "base/util.h"

/* Which workers a segment serves. Segments are kept per pool, never handed from one to the
 * other: a kept segment still holds what it carried, and a candidate must never get memory an
 * expected value has been in. */
enum kg_seg_pool { KG_SEG_RUN, KG_SEG_ORACLE, KG_SEG_POOLS };

struct kg_seg {
    int fd;
    uint64_t size;
    uint8_t *mem;
    enum kg_seg_pool pool;
};

/* A segment of at least size bytes for pool's workers: a kept one (at most twice the size),
 * else a new memfd; NULL with e set when none can be made. */
struct kg_seg *kg_seg_get(enum kg_seg_pool pool, uint64_t size, struct kg_err *e);
/* Gives the pages of [off, off + len) of g back to the system (whole pages inside the range;
 * they read as zeros when touched again). */
void kg_seg_discard(struct kg_seg *g, uint64_t off, uint64_t len);
/* Maps [off, off + len) of g, written by a worker, into this process's page tables in one call
 * (where the kernel can: Linux 5.14), not one fault per page as it is read. */
void kg_seg_map_in(struct kg_seg *g, uint64_t off, uint64_t len);
/* Gives g back: kept for reuse while the pool has room (KGATE_SEG_POOL=MiB), else unmapped
 * and closed. NULL is ignored. */
void kg_seg_put(struct kg_seg *g);

#endif
