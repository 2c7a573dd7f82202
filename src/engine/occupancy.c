/* occupancy.c: the occupancy calculation (see occupancy.h). */
#include "engine/occupancy.h"

#include <string.h>

/* Resident blocks per SM the architecture allows (CUDA C Programming Guide, table of
 * technical specifications); 0 where this table does not know the architecture. */
static int arch_block_limit(int major, int minor)
{
    static const struct {
        int major, minor, blocks;
    } t[] = {{7, 0, 32}, {7, 2, 32}, {7, 5, 16}, {8, 0, 32}, {8, 6, 16},
             {8, 7, 16}, {8, 9, 24}, {9, 0, 32}, {10, 0, 32}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (t[i].major == major && t[i].minor == minor) return t[i].blocks;
    return 0;
}

static void limit(struct kg_occupancy *o, int value, const char *name)
{
    if (value < 0) return;
    if (!o->limiter || value < o->blocks_per_sm) {
        o->blocks_per_sm = value;
        o->limiter = name;
    }
}

void kg_occupancy(const struct kg_dev_info *d, int64_t threads_per_block, int regs_per_thread, int64_t smem_bytes,
                  struct kg_occupancy *o)
{
    memset(o, 0, sizeof *o);
    o->by_threads = o->by_regs = o->by_smem = o->by_blocks = -1;
    if (!d->valid || threads_per_block < 1 || d->max_threads_per_sm < 32 || regs_per_thread < 0) return;
    o->warps_per_block = (int)((threads_per_block + 31) / 32);
    o->max_warps = (int)(d->max_threads_per_sm / 32);
    o->by_threads = o->max_warps / o->warps_per_block;
    if (regs_per_thread > 0 && d->regs_per_sm > 0) {
        int64_t per_warp = ((int64_t)regs_per_thread * 32 + 255) / 256 * 256;
        int64_t per_block = per_warp * o->warps_per_block;
        o->by_regs = per_block > d->regs_per_block && d->regs_per_block > 0 ? 0 : (int)(d->regs_per_sm / per_block);
    }
    if (smem_bytes > 0 && d->smem_per_sm > 0) {
        int64_t reserved = d->reserved_smem_per_block > 0 ? d->reserved_smem_per_block : d->cc_major >= 8 ? 1024 : 0;
        int64_t per_block = smem_bytes + reserved;
        o->by_smem = (int)(d->smem_per_sm / per_block);
    }
    int arch = d->max_blocks_per_sm > 0 ? (int)d->max_blocks_per_sm : arch_block_limit(d->cc_major, d->cc_minor);
    if (arch) o->by_blocks = arch;
    limit(o, o->by_threads, "threads");
    limit(o, o->by_regs, "registers");
    limit(o, o->by_smem, "shared memory");
    limit(o, o->by_blocks, "blocks per SM");
    o->active_warps = o->blocks_per_sm * o->warps_per_block;
    o->occupancy = o->max_warps ? (double)o->active_warps / o->max_warps : 0;
    o->valid = true;
}
