/* segment.h: shared memory segments (memfd) that carry a run's tensors between the judge and a
 * worker. A run owns its segment until its values are freed (its outputs are read where the
 * worker wrote them, not copied out), then the segment goes back to a pool for the next run of
 * about its size, its pages still in place, while the process holds no more than it already
 * had out at once. */
#ifndef KG_SEGMENT_H
#define KG_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

/* Which workers a segment serves. Segments are kept per pool, never handed from one to the
 * other: a kept segment still holds what it carried, and a candidate must never get memory an
 * expected value has been in. */
enum kg_seg_pool { KG_SEG_RUN, KG_SEG_ORACLE, KG_SEG_POOLS };

/* What the segment's last owner left in it that the next one may reuse without writing it
 * again: [off, off + len) holds the bytes its owner calls tag (the run's input sets). */
#define KG_SEG_HELD 16
struct kg_seg_held {
    uint64_t off, len, tag;
};

struct kg_seg {
    int fd;
    uint64_t size;
    uint8_t *mem;
    enum kg_seg_pool pool;
    int nheld;
    struct kg_seg_held held[KG_SEG_HELD];
    uint64_t touched; /* [0, touched) has been through kg_seg_touch */
};

/* A segment of at least size bytes for pool's workers: a kept one (at most twice the size; one
 * that holds bytes called tag first, then the smallest), else a new memfd; NULL with e set when
 * none can be made. */
struct kg_seg *kg_seg_get(enum kg_seg_pool pool, uint64_t size, uint64_t tag, struct kg_err *e);
/* Whether g still holds the bytes tag at exactly [off, off + len), as kg_seg_hold noted them. */
bool kg_seg_holds(const struct kg_seg *g, uint64_t off, uint64_t len, uint64_t tag);
/* Notes that [off, off + len) of g holds the bytes tag (0: nothing to note); the note is the
 * owner's word, for itself or the segment's next owner, and lasts until kg_seg_forget. */
void kg_seg_hold(struct kg_seg *g, uint64_t off, uint64_t len, uint64_t tag);
/* Forgets every note: whoever writes into g, or lets a worker write there, calls it first. */
void kg_seg_forget(struct kg_seg *g);
/* Faults in every page of [0, len) of g not yet touched, on several threads, its bytes left as
 * they are. A page's first touch costs a fault and a zeroing, about a second a gigabyte on one
 * thread on the H200's virtual machine: done on the worker's side that was most of a run's time
 * at real sizes, in the copy of the outputs into the segment. A worker then maps pages that
 * exist. */
void kg_seg_touch(struct kg_seg *g, uint64_t len);
/* Gives the pages of [off, off + len) of g back to the system (whole pages inside the range;
 * they read as zeros when touched again). */
void kg_seg_discard(struct kg_seg *g, uint64_t off, uint64_t len);
/* Maps [off, off + len) of g, written by a worker, into this process's page tables in one call
 * (where the kernel can: Linux 5.14), not one fault per page as it is read. */
void kg_seg_map_in(struct kg_seg *g, uint64_t off, uint64_t len);
/* Gives g back: kept for reuse while the pool has room (KGATE_SEG_POOL=MiB), else unmapped
 * and closed. NULL is ignored. */
void kg_seg_put(struct kg_seg *g);
/* What the pool may keep together with the segments out now: 1/16 of this check's share of the
 * host (at most 8 GiB), or as much as the process has had out at once, whichever is more. */
uint64_t kg_seg_pool_cap(void);
/* Tests: gives back every kept segment and forgets the peak (the segments out stay counted). */
void kg_seg_pool_reset(void);

#endif
