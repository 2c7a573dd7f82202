/* expect.c: what a case should produce. The backend's oracle fills the fp64 values and the
 * working-precision reference; here the reference is rounded to the output's dtype, and its
 * distance to fp64 becomes the output's calibrated threshold: k * ref_err + floor(dtype). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "engine/backend.h"
#include "engine/oracle_worker.h"
#include "engine/session.h"

/* The float64 oracle output of case k's arg i: allocated here, or a header alone where the
 * backend's oracle lends its own (oracle_lends). */
static int output_tensor(const struct kg_session *s, const struct kg_case *k, int i, struct kg_tensor *t)
{
    if (!s->be->oracle_lends) return kg_tensor_alloc(t, KG_F64, k->shape[i].rank, k->shape[i].dims);
    *t = kg_case_tensor(k, i, KG_F64, NULL);
    return 0;
}

/* --allow tf32 / `allow: tf32`: the working-precision reference on inputs cut to TF32, as a
 * TF32 matmul or convolution computes, rounded or truncated (tensor cores that read an operand
 * unconverted truncate it); err[j]: the larger of the two errors vs the fp64 oracle x->exact. */
static int tf32_reference_cut(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                              const struct kg_expect *x, bool truncate, double *err, struct kg_err *e)
{
    struct kg_inputs r;
    struct kg_expect t;
    memset(&t, 0, sizeof t);
    int rc = -1;
    if (kg_inputs_tf32(in, truncate, &r)) return kg_errf(e, "out of memory for the TF32 reference");
    t.nout = x->nout;
    for (int j = 0; j < x->nout; j++) {
        t.arg[j] = x->arg[j];
        if (output_tensor(s, k, x->arg[j], &t.exact[j]) || output_tensor(s, k, x->arg[j], &t.ref[j])) goto oom;
    }
    if (s->be->oracle(s, k, &r, &t, e)) goto done;
    for (int j = 0; j < x->nout; j++) {
        double *d = t.ref[j].data;
        for (int64_t i = 0; i < t.ref[j].numel; i++) d[i] = kg_round(k->adtype[x->arg[j]], d[i]);
        struct kg_cmp cmp;
        kg_compare_calibrated(&t.ref[j], &x->exact[j], &t.ref[j], kg_scale_of(&x->exact[j]), &cmp);
        if (!(cmp.max_err <= err[j])) err[j] = cmp.max_err;
    }
    rc = 0;
    goto done;
oom:
    kg_errf(e, "out of memory for the TF32 reference");
done:
    kg_inputs_free(&r);
    kg_expect_free(&t);
    return rc;
}

static int tf32_reference(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                          const struct kg_expect *x, double *err, struct kg_err *e)
{
    return tf32_reference_cut(s, k, in, x, false, err, e) || tf32_reference_cut(s, k, in, x, true, err, e) ? -1 : 0;
}

/* The reference rounded to the output's dtype, elements [lo, hi) (kg_parallel_for). */
struct round_job {
    enum kg_dtype t;
    double *r;
};

static void round_range(void *ctx, int64_t lo, int64_t hi)
{
    const struct round_job *job = ctx;
    for (int64_t i = lo; i < hi; i++) job->r[i] = kg_round(job->t, job->r[i]);
}

int kg_expect_eval(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                   struct kg_err *e)
{
    memset(x, 0, sizeof *x);
    const struct kg_contract *c = k->c;
    double t0 = kg_now();
    int rc = -1;
    for (int i = 0; i < c->nargs; i++) {
        if (!kg_arg_is_output(&c->args[i])) continue;
        int j = x->nout++;
        x->arg[j] = i;
        if (output_tensor(s, k, i, &x->exact[j]) || output_tensor(s, k, i, &x->ref[j])) {
            kg_errf(e, "out of memory for the oracle's %s", c->args[i].name);
            goto out;
        }
    }
    if (s->be->oracle(s, k, in, x, e)) goto out;
    double tf32_err[KG_OP_MAX_IO] = {0};
    if ((s->o.allow_tf32 || c->allow_tf32) && tf32_reference(s, k, in, x, tf32_err, e)) goto out;
    for (int j = 0; j < x->nout; j++) {
        enum kg_dtype t = k->adtype[x->arg[j]];
        x->floor[j] = !kg_dtype_is_float(t) || x->int_out ? 0 : kg_floor(t);
        if (x->resident.id) { /* the worker rounded the reference and measured scale and ref_err */
            x->threshold[j] =
                x->floor[j] == 0 ? 0 : c->tol_k * (isfinite(x->ref_err[j]) ? x->ref_err[j] : 0) + x->floor[j];
            continue;
        }
        struct round_job job = {t, x->ref[j].data};
        kg_parallel_for(x->ref[j].numel, KG_PARALLEL_GRAIN, round_range, &job);
        x->scale[j] = kg_scale_of(&x->exact[j]);
        struct kg_cmp cmp;
        /* where the reference itself overflows, kg_judge excuses the same non-finite value
         * (kg_compare_calibrated): the threshold is the reference's error elsewhere */
        kg_compare_calibrated(&x->ref[j], &x->exact[j], &x->ref[j], x->scale[j], &cmp);
        /* allowed TF32: the reference's error is at least that of fp32 on inputs cut to TF32 */
        x->ref_err[j] = t == KG_F32 && tf32_err[j] > cmp.max_err ? tf32_err[j] : cmp.max_err;
        x->threshold[j] = x->floor[j] == 0 ? 0 : c->tol_k * (isfinite(x->ref_err[j]) ? x->ref_err[j] : 0) + x->floor[j];
    }
    rc = 0;
out:
    if (rc) kg_expect_free(x);
    s->t_oracle += kg_now() - t0;
    return rc;
}

int kg_expect_for_judge(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                        struct kg_err *e)
{
    s->memo_stats.oracle_direct++;
    if (s->debug_memo) {
        char id[KG_CASE_ID_MAX];
        kg_case_id(k, id, sizeof id);
        fprintf(stderr, "kgate memo: %s: oracle direct %s\n", s->current_gate ? s->current_gate->id : "-", id);
    }
    return kg_expect_eval(s, k, in, x, e);
}

int kg_expect_compute(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                      struct kg_err *e)
{
    /* its callers (the nonfinite gate, diagnoses) read the values themselves */
    return kg_expect_for_judge(s, k, in, x, e) || kg_expect_values(s, x, e) ? -1 : 0;
}

int kg_expect_values(struct kg_session *s, const struct kg_expect *ex, struct kg_err *e)
{
    if (!ex->resident.id || ex->exact[0].data || !ex->nout) return 0;
    /* a cache filled on first use: the values themselves do not change */
    struct kg_expect *x = (struct kg_expect *)ex;
    double t0 = kg_now();
    int rc = kg_oracle_resident_fetch(s, x->resident.id, x->exact, x->ref, x->nout, &x->fetched, e);
    s->t_oracle += kg_now() - t0;
    return rc;
}
