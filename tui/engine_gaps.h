/* engine_gaps.h: engine functions the inspector needs that src/ does not have yet. They
 * compute nothing a gate decides; they belong in src/ (case.c: the inverse of kg_case_id;
 * a new occupancy.c or limits.c: theoretical occupancy) and are here only until moved. */
#ifndef KG_TUI_ENGINE_GAPS_H
#define KG_TUI_ENGINE_GAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "case.h"
#include "proto.h"

/* Parses a case id as kg_case_id writes it ("M=512,N=1000 dtype=f32 seed=1 dist=normal")
 * back into a case of contract c. -1 with e filled when it does not parse or evaluate. */
int kg_case_from_id(const struct kg_contract *c, const char *id, struct kg_case *k, struct kg_err *e);

/* Theoretical occupancy of one launch: resident blocks per SM are limited by threads,
 * registers (allocated per warp in units of 256), shared memory (plus the 1 KiB the driver
 * reserves per block from compute capability 8.0) and the architecture's block limit. */
struct kg_occupancy {
    bool valid;          /* false: the device or the kernel's attributes are unknown */
    int blocks_per_sm;
    int warps_per_block;
    int active_warps, max_warps;
    double occupancy;    /* active_warps / max_warps */
    const char *limiter; /* "threads", "registers", "shared memory", "blocks per SM" */
    int by_threads, by_regs, by_smem, by_blocks; /* each limit; -1 where it does not bind */
};

void kg_occupancy(const struct kg_dev_info *d, int64_t threads_per_block, int regs_per_thread, int64_t smem_bytes,
                  struct kg_occupancy *o);

#endif
