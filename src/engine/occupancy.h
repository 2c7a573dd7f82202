/* occupancy.h: theoretical occupancy of a launch from the device's limits and the kernel's
 * resources: resident blocks per SM limited by threads, registers (allocated per warp in units
 * of 256), shared memory (plus what the driver reserves per block) and the architecture's
 * block limit, as the CUDA occupancy calculator computes it. */
#ifndef KG_OCCUPANCY_H
#define KG_OCCUPANCY_H

#include <stdbool.h>
#include <stdint.h>

#include "worker/proto.h"

struct kg_occupancy {
    bool valid; /* false: the device or the kernel's attributes are unknown */
    int blocks_per_sm;
    int warps_per_block;
    int active_warps, max_warps;
    double occupancy;                            /* active_warps / max_warps */
    const char *limiter;                         /* "threads", "registers", "shared memory", "blocks per SM" */
    int by_threads, by_regs, by_smem, by_blocks; /* each limit; -1 where it does not bind */
};

void kg_occupancy(const struct kg_dev_info *d, int64_t threads_per_block, int regs_per_thread, int64_t smem_bytes,
                  struct kg_occupancy *o);

#endif
