/* limits.c: the launch configuration the contract computes must fit the device at every shape
 * the contract claims (nominal, declared sweep, 16x larger), the launch must succeed and be
 * checked, and the resources the kernel really uses (registers, shared and local memory) are
 * read back from the driver. */
#include <stdio.h>
#include <string.h>

#include "session.h"

/* Why case k's launch cannot run on this device, or NULL. */
static const char *launch_problem(const struct kg_case *k, const struct kg_dev_info *d, const struct kg_func_attrs *f,
                                  char *buf, size_t n)
{
    const char *axis = "xyz";
    int64_t threads = 1;
    for (int i = 0; i < 3; i++) {
        if (k->block[i] < 1) return snprintf(buf, n, "block.%c = %lld", axis[i], (long long)k->block[i]), buf;
        if (k->grid[i] < 1) return snprintf(buf, n, "grid.%c = %lld (an empty grid cannot launch)", axis[i], (long long)k->grid[i]), buf;
        if (k->block[i] > d->max_block[i])
            return snprintf(buf, n, "block.%c = %lld exceeds the device limit %lld", axis[i], (long long)k->block[i],
                            (long long)d->max_block[i]), buf;
        if (k->grid[i] > d->max_grid[i])
            return snprintf(buf, n, "grid.%c = %lld exceeds the device limit %lld", axis[i], (long long)k->grid[i],
                            (long long)d->max_grid[i]), buf;
        threads *= k->block[i];
    }
    if (threads > d->max_threads_per_block)
        return snprintf(buf, n, "%lld threads per block exceed the device limit %lld", (long long)threads,
                        (long long)d->max_threads_per_block), buf;
    if (f->valid && threads > f->max_threads)
        return snprintf(buf, n, "%lld threads per block exceed this kernel's limit %d (%d registers per thread)",
                        (long long)threads, f->max_threads, f->regs), buf;
    int64_t smem = k->smem + (f->valid ? f->smem_static : 0);
    if (smem > d->max_smem_optin)
        return snprintf(buf, n, "%lld bytes of shared memory per block exceed the device's %lld", (long long)smem,
                        (long long)d->max_smem_optin), buf;
    return NULL;
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_contract *c = s->c;
    const struct kg_dev_info *d = &s->last_load.dev;
    const struct kg_func_attrs *f = &s->last_load.attrs;
    if (!c->has_launch || !d->valid) {
        kg_verdict_set(v, KG_SKIP, "no launch configuration or no device information");
        return;
    }
    enum kg_dtype dt = kg_contract_default_dtype(c);
    /* the shapes the contract claims: nominal, each declared sweep value, 16x each symbol */
    static int64_t cases[1 + KG_MAX_SYMS * (KG_MAX_SWEEP + 1)][KG_MAX_SYMS];
    int nc = 0;
    int64_t base[KG_MAX_SYMS];
    memcpy(base, s->o.pin_shape ? s->o.sym : c->nominal, sizeof base);
    memcpy(cases[nc++], base, sizeof base);
    if (!s->o.pin_shape)
        for (int sym = 0; sym < c->nsyms; sym++) {
            if (c->fixed[sym]) continue;
            for (int i = 0; i < c->nsweep[sym]; i++) {
                memcpy(cases[nc], base, sizeof base);
                cases[nc++][sym] = c->sweep[sym][i];
            }
            memcpy(cases[nc], base, sizeof base);
            cases[nc++][sym] = base[sym] * 16;
        }
    json_t *list = json_array();
    v->extra = json_pack("{s:o}", "launches", list);
    for (int i = 0; i < nc; i++) {
        struct kg_case k;
        struct kg_err e;
        if (kg_case_init(&k, c, cases[i], dt, s->o.seed, KG_DIST_NORMAL, &e)) continue;
        char why[256], sh[256];
        kg_case_shape_str(&k, sh, sizeof sh);
        const char *p = launch_problem(&k, d, f, why, sizeof why);
        json_array_append_new(list, json_pack("{s:s,s:[I,I,I],s:[I,I,I],s:I,s:s?}", "shape", sh, "grid",
                                              (json_int_t)k.grid[0], (json_int_t)k.grid[1], (json_int_t)k.grid[2],
                                              "block", (json_int_t)k.block[0], (json_int_t)k.block[1],
                                              (json_int_t)k.block[2], "smem", (json_int_t)k.smem, "problem", p));
        if (p) {
            kg_verdict_set(v, KG_FAIL, "the launch at %s cannot run on %s: %s", sh, d->name, p);
            kg_verdict_detail(v, "The contract's launch line computes this configuration for a shape it claims "
                                 "(nominal, sweep, or 16x nominal); the launch would fail with an error that a "
                                 "caller not checking cudaGetLastError never sees, leaving the output unwritten.");
            kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
            return;
        }
    }
    /* launch the nominal case and read back what it used */
    struct kg_case k;
    struct kg_err e;
    if (kg_nominal_case(s, dt, 0, KG_DIST_NORMAL, &k, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return;
    }
    struct kg_judgement j;
    if (kg_check_case(s, &k, NULL, &j, NULL, NULL, v)) return;
    v->ncases = nc;
    json_object_set_new(v->extra, "resources",
                        json_pack("{s:i,s:i,s:i,s:i,s:i}", "registers", f->regs, "static_smem", f->smem_static,
                                  "local_bytes", f->local_bytes, "max_threads", f->max_threads, "tmem_cols",
                                  f->tmem_cols));
    kg_verdict_set(v, KG_PASS, "%d claimed launch configurations fit %s; %d registers, %d B static shared, %d B local%s",
                   nc, d->name, f->regs, f->smem_static, f->local_bytes, f->local_bytes ? " (spills or stack)" : "");
    kg_verdict_detail(v, "Not yet tested: indexing beyond 2^31 elements (needs a sampled oracle; see the notes).");
}

const struct kg_gate kg_gate_limits = {
    .id = "limits",
    .title = "launches fit the device; resources read back",
    .tolerance_free = true,
    .needs_gpu = true,
    .explain =
        "CUDA only. Evaluates the contract's launch line at every shape it claims (nominal, each declared\n"
        "sweep value, 16x each symbol) against the device's limits and this kernel's own (threads per\n"
        "block allowed by its register use, grid dims, static + dynamic shared memory), launches the\n"
        "nominal case with its errors checked, and reports registers, shared memory and local memory\n"
        "(spills) read back from the driver. Catches: block = N kernels that break past 1024, grid.y > 65535,\n"
        "shared-memory tiles too large for the device, launch errors that would go unnoticed. Skips on the\n"
        "host runner. Tolerance-free.",
    .explain_python =
        "KernelBench format: launch errors inside the candidate must surface (CUDA_LAUNCH_BLOCKING and a\n"
        "synchronize after the call), and the CUPTI records show each kernel's resources.",
    .run = run,
};
