/* expect.c: what a case should produce. The backend's oracle fills the fp64 values and the
 * working-precision reference; here the reference is rounded to the output's dtype, and its
 * distance to fp64 becomes the output's calibrated threshold: k * ref_err + floor(dtype). */
#include <math.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/session.h"

int kg_expect_compute(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
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
        if (kg_tensor_alloc(&x->exact[j], KG_F64, k->shape[i].rank, k->shape[i].dims) ||
            kg_tensor_alloc(&x->ref[j], KG_F64, k->shape[i].rank, k->shape[i].dims)) {
            kg_errf(e, "out of memory for the oracle's %s", c->args[i].name);
            goto out;
        }
    }
    if (s->be->oracle(s, k, in, x, e)) goto out;
    for (int j = 0; j < x->nout; j++) {
        enum kg_dtype t = k->adtype[x->arg[j]];
        double *r = x->ref[j].data;
        for (int64_t i = 0; i < x->ref[j].numel; i++) r[i] = kg_round(t, r[i]);
        x->scale[j] = kg_scale_of(&x->exact[j]);
        struct kg_cmp cmp;
        /* where the reference itself overflows, kg_judge excuses the same non-finite value
         * (kg_compare_calibrated): the threshold is the reference's error elsewhere */
        kg_compare_calibrated(&x->ref[j], &x->exact[j], &x->ref[j], x->scale[j], &cmp);
        x->ref_err[j] = cmp.max_err;
        x->floor[j] = !kg_dtype_is_float(t) || x->int_out ? 0 : kg_floor(t);
        x->threshold[j] = x->floor[j] == 0 ? 0 : c->tol_k * (isfinite(cmp.max_err) ? cmp.max_err : 0) + x->floor[j];
    }
    rc = 0;
out:
    if (rc) kg_expect_free(x);
    s->t_oracle += kg_now() - t0;
    return rc;
}
