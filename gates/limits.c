/* limits.c: the launch configuration the contract computes must fit the device at every shape
 * the contract claims (nominal, declared sweep, 16x larger), the launch must succeed and be
 * checked, and the resources the kernel really uses (registers, shared and local memory) are
 * read back from the driver. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/cache.h"
#include "base/rng.h"
#include "gates/gate.h"

/* Why case k's launch cannot run on this device, or NULL. */
static const char *launch_problem(const struct kg_case *k, const struct kg_dev_info *d, const struct kg_func_attrs *f,
                                  char *buf, size_t n)
{
    const char *axis = "xyz";
    int64_t threads = 1;
    for (int i = 0; i < 3; i++) {
        if (k->block[i] < 1) return snprintf(buf, n, "block.%c = %lld", axis[i], (long long)k->block[i]), buf;
        if (k->grid[i] < 1)
            return snprintf(buf, n, "grid.%c = %lld (an empty grid cannot launch)", axis[i], (long long)k->grid[i]),
                   buf;
        if (k->block[i] > d->max_block[i])
            return snprintf(buf, n, "block.%c = %lld exceeds the device limit %lld", axis[i], (long long)k->block[i],
                            (long long)d->max_block[i]),
                   buf;
        if (k->grid[i] > d->max_grid[i])
            return snprintf(buf, n, "grid.%c = %lld exceeds the device limit %lld", axis[i], (long long)k->grid[i],
                            (long long)d->max_grid[i]),
                   buf;
        threads *= k->block[i];
    }
    if (threads > d->max_threads_per_block)
        return snprintf(buf, n, "%lld threads per block exceed the device limit %lld", (long long)threads,
                        (long long)d->max_threads_per_block),
               buf;
    if (f->valid && threads > f->max_threads)
        return snprintf(buf, n, "%lld threads per block exceed this kernel's limit %d (%d registers per thread)",
                        (long long)threads, f->max_threads, f->regs),
               buf;
    int64_t smem = k->smem + (f->valid ? f->smem_static : 0);
    if (smem > d->max_smem_optin)
        return snprintf(buf, n, "%lld bytes of shared memory per block exceed the device's %lld", (long long)smem,
                        (long long)d->max_smem_optin),
               buf;
    return NULL;
}

/* ---- KernelBench pairs: indexing past 2^31 elements -------------------------------------------- */

#define BIG           ((int64_t)1 << 31)
#define MAX_BIG_BYTES ((int64_t)24 << 30) /* a GPU shared by several checks keeps room for the others */

/* The fewest elements of any output of k (the sampled positions must exist in each). */
static int64_t min_out_numel(const struct kg_case *k)
{
    int64_t m = -1;
    for (int i = 0; i < k->c->nargs; i++)
        if (kg_arg_is_output(&k->c->args[i]) && (m < 0 || k->numel[i] < m)) m = k->numel[i];
    return m;
}

static int64_t total_bytes(const struct kg_case *k)
{
    int64_t b = 0;
    for (int i = 0; i < k->c->nargs; i++)
        if (k->c->args[i].kind == KG_ARG_TENSOR) b += k->numel[i] * (int64_t)kg_dtype_size(k->adtype[i]);
    return b;
}

/* The nominal case with one constant grown just enough that some tensor has more than 2^31
 * elements (past the boundary by 2^22, more than any tile); of the constants that can, the one
 * needing the least memory. false: no constant grows the tensors that far. */
static bool big_case(struct kg_session *s, enum kg_dtype dt, struct kg_case *best)
{
    const struct kg_session_opts *opt = kg_session_opts(s);
    const struct kg_contract *c = kg_session_contract(s);
    const int64_t want = BIG + ((int64_t)1 << 22);
    bool found = false, best_batch = false;
    for (int sym = 0; sym < c->nsyms; sym++) {
        if (c->fixed[sym] || c->nominal[sym] < 1) continue;
        int64_t v[KG_MAX_SYMS];
        memcpy(v, c->nominal, sizeof v);
        struct kg_case k;
        struct kg_err e;
        int64_t lo = v[sym], hi = lo;
        bool ok = false;
        for (int it = 0; it < 40 && !ok; it++) {
            v[sym] = hi;
            if (kg_case_init(&k, c, v, dt, opt->seed, KG_DIST_NORMAL, &e)) break;
            if (kg_case_max_numel(&k) >= want)
                ok = true;
            else {
                lo = hi;
                hi *= 2;
            }
        }
        if (!ok) continue;
        while (hi - lo > 1) {
            v[sym] = lo + (hi - lo) / 2;
            if (kg_case_init(&k, c, v, dt, opt->seed, KG_DIST_NORMAL, &e) == 0 && kg_case_max_numel(&k) >= want)
                hi = v[sym];
            else
                lo = v[sym];
        }
        v[sym] = hi;
        if (kg_case_init(&k, c, v, dt, opt->seed, KG_DIST_NORMAL, &e)) continue;
        /* a batch constant grows no parameters (a model's weights are not in the contract's
         * byte count): it wins whenever it can; otherwise the fewest bytes */
        bool batch = strstr(c->sym[sym], "batch") != NULL;
        if (!found || (batch && !best_batch) || (batch == best_batch && total_bytes(&k) < total_bytes(best))) {
            *best = k;
            best_batch = batch;
        }
        found = true;
    }
    return found;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Flat output positions worth looking at: the start, around 2^31, the end, and a spread. */
static int sample_indices(int64_t n, uint64_t seed, int64_t *idx)
{
    int m = 0;
    for (int64_t i = 0; i < 256 && i < n; i++) idx[m++] = i;
    for (int64_t i = BIG - 2048; i < BIG + 2048; i++)
        if (i >= 0 && i < n) idx[m++] = i;
    for (int64_t i = n - 1024; i < n; i++)
        if (i >= 0) idx[m++] = i;
    for (int i = 0; i < 2048; i++)
        idx[m++] = (int64_t)((double)n * i / 2048) +
                   (int64_t)kg_rng_below(seed, 77, (uint64_t)i, (uint64_t)(n / 2048 > 0 ? n / 2048 : 1));
    for (int i = 0; i < m; i++)
        if (idx[i] >= n) idx[i] = n - 1;
    qsort(idx, (size_t)m, sizeof *idx, cmp_i64);
    int u = 0;
    for (int i = 0; i < m; i++)
        if (!u || idx[i] != idx[u - 1]) idx[u++] = idx[i];
    return u;
}

/* Whether the candidate runs at case k shrunk to just below 2^31 elements (the constant big_case
 * grew, lowered until the largest tensor has 2^31 - 2^22 elements or fewer): 1 it runs, 0 it
 * fails there too (*why: how), -1 not measured. A failure on both sides of 2^31 is not int32
 * index arithmetic but the size itself (a grid dimension past its limit, an allocation). */
static int runs_below(struct kg_session *s, const struct kg_case *k, int nout, char *shape, size_t nshape, char *why,
                      size_t nwhy)
{
    const struct kg_contract *c = k->c;
    const int64_t want = BIG - ((int64_t)1 << 22);
    int sym = -1;
    for (int i = 0; i < c->nsyms; i++)
        if (k->sym[i] != c->nominal[i]) sym = i;
    if (sym < 0) return -1;
    int64_t v[KG_MAX_SYMS];
    memcpy(v, k->sym, sizeof v);
    int64_t lo = c->nominal[sym], hi = k->sym[sym];
    struct kg_case kb;
    struct kg_err e;
    while (hi - lo > 1) { /* the largest value at or under want */
        v[sym] = lo + (hi - lo) / 2;
        if (kg_case_init(&kb, c, v, k->dtype, k->seed, k->dist, &e) == 0 && kg_case_max_numel(&kb) <= want)
            lo = v[sym];
        else
            hi = v[sym];
    }
    v[sym] = lo;
    if (kg_case_init(&kb, c, v, k->dtype, k->seed, k->dist, &e) || kg_case_max_numel(&kb) < want / 2) return -1;
    kg_case_shape_str(&kb, shape, nshape);
    int64_t *idx = malloc((256 + 4096 + 1024 + 2048) * sizeof *idx);
    int n = idx ? sample_indices(min_out_numel(&kb), k->seed, idx) : 0;
    double *got = idx ? calloc((size_t)n * (size_t)nout, sizeof *got) : NULL;
    int r = -1;
    struct kg_reply rp;
    if (got) {
        r = kg_session_sample(s, true, &kb, idx, n, nout, got, &rp, &e) == 0;
        if (!r) snprintf(why, nwhy, "%s", kg_wstatus_name((enum kg_wstatus)rp.status));
        if (!r && strstr(e.msg, "out of memory")) r = -1;
    }
    free(idx);
    free(got);
    return r;
}

static bool interrupted(void *s)
{
    return kg_session_interrupted(s);
}

static void run_sampled(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_session_opts *opt = kg_session_opts(s);
    const struct kg_contract *c = kg_session_contract(s);
    enum kg_dtype dt = kg_contract_default_dtype(c);
    struct kg_case k;
    if (!big_case(s, dt, &k)) {
        kg_verdict_set(v, KG_SKIP, "no module constant grows a tensor past 2^31 elements");
        return;
    }
    char sh[KG_SHAPE_STR_MAX], id[KG_CASE_ID_MAX];
    kg_case_shape_str(&k, sh, sizeof sh);
    kg_case_id(&k, id, sizeof id);
    int64_t big = kg_case_max_numel(&k), bytes = total_bytes(&k);
    v->extra = json_pack("{s:s,s:I,s:I}", "case", id, "elements", (json_int_t)big, "bytes", (json_int_t)bytes);
    if (bytes > MAX_BIG_BYTES) {
        kg_verdict_set(v, KG_SKIP, "the smallest case past 2^31 elements (%s) needs %.1f GB of tensors", sh,
                       bytes / 1e9);
        return;
    }
    /* a kernel that would run for minutes at this size is not held to it: its sample would time
     * out, a failure that says nothing about its indexing, while holding every other check's turn
     * at this size (a slow but correct kernel at a real size: its nominal run of 1 s grown 128
     * times) */
    const double proj = kg_session_projected_seconds(s, big);
    if (proj > 0) json_object_set_new(v->extra, "projected_seconds", json_real(proj));
    if (proj > KG_SAMPLE_LIMIT / 2) {
        kg_verdict_set(v, KG_SKIP,
                       "not tested: at %s (%lld elements) the candidate would run about %.0f s, projected from its "
                       "fastest run at the nominal size (a sample has %.0f s)",
                       sh, (long long)big, proj, KG_SAMPLE_LIMIT);
        return;
    }
    int nout = 0;
    int oarg[KG_MAX_ARGS];
    for (int i = 0; i < c->nargs; i++)
        if (kg_arg_is_output(&c->args[i])) oarg[nout++] = i;
    int64_t nflat = min_out_numel(&k);
    static int64_t idx[256 + 4096 + 1024 + 2048];
    int n = sample_indices(nflat, opt->seed, idx);
    double *ref = calloc((size_t)n * (size_t)nout, sizeof *ref), *got = calloc((size_t)n * (size_t)nout, sizeof *got);
    int lock_fd = -1;
    struct kg_reply rp;
    struct kg_err e;
    if (!ref || !got) {
        kg_verdict_set(v, KG_ERROR, "out of memory");
        goto out;
    }
    /* checks sharing a GPU take turns at this size, host-wide (kgate audit --jobs, two audits,
     * make check's parallel tests): two at once could exhaust its memory and turn an ordinary run
     * of a third check into an error */
    lock_fd = kg_gpu_lock_open(getenv("CUDA_VISIBLE_DEVICES"));
    /* at most $KGATE_LOCK_WAIT s (default 300: many checks' turns of seconds each; a holder that
     * was stopped, ^Z in an inspector, would otherwise hold every other check on the host) */
    const char *lw = getenv("KGATE_LOCK_WAIT");
    const double lock_limit = lw && atof(lw) > 0 ? atof(lw) : 300;
    double waited = 0;
    if (lock_fd >= 0 && kg_gpu_lock_take(lock_fd, lock_limit, interrupted, s, &waited)) {
        kg_verdict_set(v, KG_SKIP,
                       "not tested: another kgate process held this GPU's turn at cases past 2^31 elements for %.0f s "
                       "(KGATE_LOCK_WAIT)",
                       waited);
        goto out;
    }
    if (waited >= 0.1) json_object_set_new(v->extra, "lock_wait", json_real(waited));
    /* a full device is waited out without the turn (kg_session_sample_turn) */
    if (kg_session_sample_turn(s, false, &k, idx, n, nout, ref, lock_fd, lock_limit, &rp, &e)) {
        kg_verdict_set(v, KG_SKIP, "the reference could not run at %s (%lld elements): %.300s", sh, (long long)big,
                       e.msg);
        goto out;
    }
    if (kg_session_sample_turn(s, true, &k, idx, n, nout, got, lock_fd, lock_limit, &rp, &e)) {
        /* a time-out is a hang only where the kernel's own pace says it should have finished */
        if (rp.status == KG_WS_TIMEOUT && !(proj > 0 && proj < KG_SAMPLE_LIMIT / 4)) {
            char pace[96] = "";
            if (proj > 0) snprintf(pace, sizeof pace, " (projected from its nominal runs: about %.0f s)", proj);
            kg_verdict_set(v, KG_SKIP,
                           "not tested: the candidate did not finish in %.0f s at %s (%lld elements)%s; too slow "
                           "to test at this size, which is not a failure",
                           KG_SAMPLE_LIMIT, sh, (long long)big, pace);
            goto out;
        }
        if (strstr(e.msg, "out of memory")) {
            kg_verdict_set(v, KG_SKIP, "the candidate ran out of device memory at %s (%lld elements)", sh,
                           (long long)big);
            goto out;
        }
        const char *st = kg_wstatus_name((enum kg_wstatus)rp.status);
        kg_verdict_set(v, KG_FAIL, "at %s (%lld elements) the candidate failed: %s: %.300s", sh, (long long)big, st,
                       e.msg);
        char bsh[KG_SHAPE_STR_MAX] = "", bwhy[64] = "";
        int below = -1;
        if (kg_session_saw_cause(s, KG_CAUSE_OOB_WRITE)) {
            /* a kernel that writes past its outputs crashes once the bytes past an output are no
             * longer the caching allocator's own: the same defect, not a second one */
            kg_verdict_detail(v, "The bounds gate saw this kernel write past its outputs. At small sizes such a write "
                                 "lands in memory the allocator owns; at this size it runs off the allocation and "
                                 "faults. Fix the write first, then check again for int32 indexing.");
            kg_verdict_cause(v, KG_CAUSE_OOB_WRITE,
                             "the candidate fails at %lld elements (%s); it writes past its outputs (bounds), which "
                             "at this size leaves the allocation",
                             (long long)big, st);
        } else if ((below = runs_below(s, &k, nout, bsh, sizeof bsh, bwhy, sizeof bwhy)) == 0) {
            kg_verdict_detail(v, "The reference runs at this size; the candidate does not, and fails just below 2^31 "
                                 "elements as well: not int32 index arithmetic but the size itself (a grid dimension "
                                 "past the device's limit, gridDim.y and .z <= 65535, or a buffer the kernel cannot "
                                 "allocate).");
            kg_verdict_cause(v, KG_CAUSE_GATE,
                             "not diagnosed: the candidate fails at %lld elements (%s) and at %s, below 2^31, too "
                             "(%s): not int32 indexing",
                             (long long)big, st, bsh, bwhy);
        } else {
            kg_verdict_detail(v, "The reference runs at this size; the candidate does not. An illegal address past "
                                 "2^31 elements is the mark of int32 index arithmetic (blockIdx.x * blockDim.x + "
                                 "threadIdx.x in an int) wrapping to a negative offset.");
            kg_verdict_cause(v, KG_CAUSE_INDEX_OVERFLOW,
                             "the candidate fails at %lld elements (%s)%s%s, the reference runs", (long long)big, st,
                             below == 1 ? " but runs just below 2^31, at " : "", below == 1 ? bsh : "");
        }
        kg_strlcpy(v->ev.case_id, id, sizeof v->ev.case_id);
        kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
        goto out;
    }
    /* loose on purpose: this gate looks for elements never written or written elsewhere (errors
     * of order 1); rounding over long reductions is precision's business */
    double tol = 16 * kg_dtype_eps(dt) > 1e-2 ? 16 * kg_dtype_eps(dt) : 1e-2;
    int nbad = 0, bj = 0, bi = 0, beyond = 0;
    for (int j = 0; j < nout; j++) {
        double ss = 0;
        int nf = 0;
        for (int i = 0; i < n; i++)
            if (isfinite(ref[j * n + i])) ss += ref[j * n + i] * ref[j * n + i], nf++;
        double rms = nf ? sqrt(ss / nf) : 0;
        for (int i = 0; i < n; i++) {
            double r = ref[j * n + i], g = got[j * n + i];
            bool same = (isnan(r) && isnan(g)) || (isinf(r) && r == g) ||
                        (isfinite(r) && isfinite(g) && fabs(g - r) <= tol * (fabs(r) + rms));
            if (same) continue;
            if (!nbad) bj = j, bi = i;
            nbad++;
            beyond += idx[i] >= BIG;
        }
    }
    if (nbad) {
        int a = oarg[bj];
        kg_verdict_set(v, KG_FAIL,
                       "at %s (%lld elements): %s flat index %lld = %.9g, the reference %.9g; %d of %d sampled "
                       "positions wrong, %d of them at or past 2^31",
                       sh, (long long)big, c->args[a].name, (long long)idx[bi], got[bj * n + bi], ref[bj * n + bi],
                       nbad, n * nout, beyond);
        kg_verdict_detail(v,
                          "Outputs were compared at the start, around flat index 2^31, at the end and at a spread of "
                          "positions (the case is too large to compare whole). Wrong values only past 2^31 are the "
                          "mark of int32 index arithmetic: the index wraps, so those elements are never written "
                          "(or written elsewhere). Index with int64_t (or size_t) from blockIdx.x * blockDim.x on.");
        if (beyond == nbad)
            kg_verdict_cause(v, KG_CAUSE_INDEX_OVERFLOW, "%d sampled positions wrong, all at or past flat index 2^31",
                             nbad);
        v->ev.valid = true;
        kg_strlcpy(v->ev.output, c->args[a].name, sizeof v->ev.output);
        snprintf(v->ev.index, sizeof v->ev.index, "[flat %lld]", (long long)idx[bi]);
        v->ev.flat = idx[bi];
        v->ev.got = got[bj * n + bi];
        v->ev.expected = ref[bj * n + bi];
        kg_strlcpy(v->ev.case_id, id, sizeof v->ev.case_id);
        kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
        goto out;
    }
    v->ncases = 1;
    kg_verdict_set(v, KG_PASS, "correct past 2^31 elements: %d sampled positions at %s (%lld elements, %.1f GB)",
                   n * nout, sh, (long long)big, bytes / 1e9);
out:
    if (lock_fd >= 0) close(lock_fd); /* releases the lock */
    free(ref);
    free(got);
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_session_opts *opt = kg_session_opts(s);
    if (kg_session_can(s, KG_CAP_SAMPLE_HUGE)) {
        run_sampled(s, v);
        return;
    }
    const struct kg_contract *c = kg_session_contract(s);
    const struct kg_dev_info *d = kg_session_device(s);
    static const struct kg_func_attrs none; /* zeros where the runner read none back */
    const struct kg_func_attrs *f = kg_session_attrs(s) ? kg_session_attrs(s) : &none;
    if (!kg_session_can(s, KG_CAP_LAUNCH) || !c->has_launch || !d) {
        kg_verdict_set(v, KG_SKIP, "no launch configuration or no device information");
        return;
    }
    enum kg_dtype dt = kg_contract_default_dtype(c);
    /* the shapes the contract claims: nominal, each declared sweep value, 16x each symbol */
    static int64_t cases[1 + KG_MAX_SYMS * (KG_MAX_SWEEP + 1)][KG_MAX_SYMS];
    int nc = 0;
    int64_t base[KG_MAX_SYMS];
    memcpy(base, opt->pin_shape ? opt->sym : c->nominal, sizeof base);
    memcpy(cases[nc++], base, sizeof base);
    if (!opt->pin_shape)
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
        if (kg_case_init(&k, c, cases[i], dt, opt->seed, KG_DIST_NORMAL, &e)) continue;
        char why[256], sh[KG_SHAPE_STR_MAX];
        kg_case_shape_str(&k, sh, sizeof sh);
        const char *p = launch_problem(&k, d, f, why, sizeof why);
        json_array_append_new(list, json_pack("{s:s,s:[I,I,I],s:[I,I,I],s:I,s:s?}", "shape", sh, "grid",
                                              (json_int_t)k.grid[0], (json_int_t)k.grid[1], (json_int_t)k.grid[2],
                                              "block", (json_int_t)k.block[0], (json_int_t)k.block[1],
                                              (json_int_t)k.block[2], "smem", (json_int_t)k.smem, "problem", p));
        if (p) {
            kg_verdict_set(v, KG_FAIL, "the launch at %s cannot run on %s: %s", sh, d->name, p);
            kg_verdict_cause(v, KG_CAUSE_LAUNCH_LIMIT, "at %s: %s", sh, p);
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
    kg_verdict_set(v, KG_PASS,
                   "%d claimed launch configurations fit %s; %d registers, %d B static shared, %d B local%s", nc,
                   d->name, f->regs, f->smem_static, f->local_bytes, f->local_bytes ? " (spills or stack)" : "");
    kg_verdict_detail(v, "Not yet tested: indexing beyond 2^31 elements (needs a sampled oracle; see the notes).");
}

const struct kg_gate kg_gate_limits = {
    .id = "limits",
    .title = "launches fit the device; resources read back",
    .tolerance_free = true,
    .needs_gpu = true,
    .explain = "CUDA only. Evaluates the contract's launch line at every shape it claims (nominal, each declared\n"
               "sweep value, 16x each symbol) against the device's limits and this kernel's own (threads per\n"
               "block allowed by its register use, grid dims, static + dynamic shared memory), launches the\n"
               "nominal case with its errors checked, and reports registers, shared memory and local memory\n"
               "(spills) read back from the driver. Catches: block = N kernels that break past 1024, grid.y > 65535,\n"
               "shared-memory tiles too large for the device, launch errors that would go unnoticed. Skips on the\n"
               "host runner. Tolerance-free.",
    .explain_python =
        "KernelBench format (GPU): indexing past 2^31 elements. One module constant is grown just enough\n"
        "that a tensor has more than 2^31 + 2^22 elements (the constant needing the least memory; skipped\n"
        "past 24 GB of tensors). Both workers draw the inputs with get_inputs() on the device (same seed,\n"
        "same values), the reference runs in the problem's dtype with TF32 off, and the outputs are\n"
        "compared at ~7000 flat positions (the start, 2^31 +- 2048, the end, a spread), within\n"
        "max(1e-2, 16 eps) (loose: it looks for elements never written or written elsewhere). A batch\n"
        "constant is grown when there is one (it grows no weights); checks sharing a GPU take turns at\n"
        "this size (a lock file per GPU). Catches int32 index arithmetic: an\n"
        "illegal address or unwritten elements past 2^31 (also Triton's default int32 offsets).",
    .run = run,
};
