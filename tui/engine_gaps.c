/* engine_gaps.c: engine functions the inspector needs that src/ does not have yet (see
 * engine_gaps.h). Plain C, no ncurses; to be moved into src/ by the engine's owner. */
#include "engine_gaps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_shape(const struct kg_contract *c, char *tok, int64_t *sym, struct kg_err *e)
{
    char *save = NULL;
    for (char *it = strtok_r(tok, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '='), *end;
        if (!eq) return kg_errf(e, "case id: expected SYM=VALUE, got '%s'", it);
        *eq = 0;
        int k = kg_contract_sym(c, it);
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (k < 0) return kg_errf(e, "case id: %s has no shape symbol '%s'", c->path, it);
        if (errno || *end || end == eq + 1 || v < 0) return kg_errf(e, "case id: %s=%s is not a size", it, eq + 1);
        sym[k] = v;
    }
    return 0;
}

int kg_case_from_id(const struct kg_contract *c, const char *id, struct kg_case *k, struct kg_err *e)
{
    int64_t sym[KG_MAX_SYMS];
    memcpy(sym, c->nominal, sizeof sym);
    enum kg_dtype dtype = kg_contract_default_dtype(c);
    enum kg_dist dist = KG_DIST_NORMAL;
    unsigned long long seed = 1;
    char buf[512], *save = NULL;
    kg_strlcpy(buf, id, sizeof buf);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *end;
        if (!strncmp(tok, "dtype=", 6)) {
            if (kg_dtype_parse(tok + 6, strlen(tok + 6), &dtype)) return kg_errf(e, "case id: unknown dtype '%s'", tok + 6);
        } else if (!strncmp(tok, "seed=", 5)) {
            errno = 0;
            seed = strtoull(tok + 5, &end, 10);
            if (errno || *end) return kg_errf(e, "case id: bad seed '%s'", tok + 5);
        } else if (!strncmp(tok, "dist=", 5)) {
            if (kg_dist_parse(tok + 5, &dist)) return kg_errf(e, "case id: unknown distribution '%s'", tok + 5);
        } else if (parse_shape(c, tok, sym, e)) {
            return -1;
        }
    }
    return kg_case_init(k, c, sym, dtype, (uint64_t)seed, dist, e);
}

/* Resident blocks per SM the architecture allows (CUDA C Programming Guide, table of
 * technical specifications); 0 where this table does not know the architecture. */
static int arch_block_limit(int major, int minor)
{
    static const struct {
        int major, minor, blocks;
    } t[] = {{7, 0, 32}, {7, 2, 32}, {7, 5, 16}, {8, 0, 32}, {8, 6, 16}, {8, 7, 16}, {8, 9, 24}, {9, 0, 32}, {10, 0, 32}};
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
        int64_t per_block = smem_bytes + (d->cc_major >= 8 ? 1024 : 0);
        o->by_smem = (int)(d->smem_per_sm / per_block);
    }
    int arch = arch_block_limit(d->cc_major, d->cc_minor);
    if (arch) o->by_blocks = arch;
    limit(o, o->by_threads, "threads");
    limit(o, o->by_regs, "registers");
    limit(o, o->by_smem, "shared memory");
    limit(o, o->by_blocks, "blocks per SM");
    o->active_warps = o->blocks_per_sm * o->warps_per_block;
    o->occupancy = o->max_warps ? (double)o->active_warps / o->max_warps : 0;
    o->valid = true;
}
