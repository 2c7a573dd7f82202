/* norm.c: layernorm and rmsnorm over the last dim. The variance is always two-pass (mean
 * first, then the mean of squared deviations): the one-pass E[x^2]-E[x]^2 cancels
 * catastrophically in fp32 and is a bug class the gates must catch, not a reference. */
#include <math.h>
#include <stdio.h>

#include "oracle/oracle.h"

static bool same_shape(const struct kg_shape *x, const struct kg_shape *y)
{
    if (x->rank != y->rank) return false;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] != y->dims[i]) return false;
    return true;
}

/* x[...,N], then n_vec vectors [N] (weight, bias), -> y with x's shape. */
static int check_norm(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out, int n_vec,
                      const char *form, struct kg_err *e)
{
    static const char *const vec_name[] = {"weight", "bias"};
    const char *op = c->def->name;
    char bx[KG_SHAPE_TEXT_MAX], bv[KG_SHAPE_TEXT_MAX];
    if (!(c->param[0] >= 0)) return kg_errf(e, "%s: eps must be >= 0; got %g", op, c->param[0]);
    if (in[0].rank < 1) return kg_errf(e, "%s expects %s; got a scalar x", op, form);
    int64_t n = in[0].dims[in[0].rank - 1];
    for (int i = 1; i <= n_vec; i++)
        if (in[i].rank != 1 || in[i].dims[0] != n)
            return kg_errf(e, "%s expects %s; got %s%s for x%s", op, form, vec_name[i - 1],
                           kg_shape_str(&in[i], bv, sizeof bv), kg_shape_str(&in[0], bx, sizeof bx));
    if (!same_shape(&out[0], &in[0]))
        return kg_errf(e, "%s expects %s; got y%s for x%s", op, form, kg_shape_str(&out[0], bv, sizeof bv),
                       kg_shape_str(&in[0], bx, sizeof bx));
    return 0;
}

static int check_layernorm(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out,
                           struct kg_err *e)
{
    return check_norm(c, in, out, 2, "x[...,N], weight[N], bias[N] -> y (x's shape)", e);
}

static int check_rmsnorm(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out,
                         struct kg_err *e)
{
    return check_norm(c, in, out, 1, "x[...,N], weight[N] -> y (x's shape)", e);
}

static int last_axis(const struct kg_opcall *c, const struct kg_shape *in0)
{
    return in0->rank - 1;
}

/* ---- rows ------------------------------------------------------------------------------ */

static void layernorm_row(enum kg_arith a, const double *x, const double *w, const double *b, int64_t n, double eps,
                          double *y)
{
    struct kg_acc acc = {0, 0};
    double fn = kg_ar(a, (double)n);
    for (int64_t k = 0; k < n; k++) kg_acc_add(a, &acc, kg_ar(a, x[k]));
    double mean = kg_ar(a, kg_acc_get(&acc) / fn);
    acc = (struct kg_acc){0, 0};
    for (int64_t k = 0; k < n; k++) {
        double d = kg_ar(a, kg_ar(a, x[k]) - mean);
        kg_acc_add(a, &acc, kg_ar(a, d * d));
    }
    double var = kg_ar(a, kg_acc_get(&acc) / fn);
    double rstd = kg_ar(a, 1.0 / kg_ar(a, sqrt(kg_ar(a, var + kg_ar(a, eps)))));
    for (int64_t k = 0; k < n; k++) {
        double d = kg_ar(a, kg_ar(a, x[k]) - mean);
        double t = kg_ar(a, kg_ar(a, d * rstd) * kg_ar(a, w[k]));
        y[k] = kg_ar(a, t + kg_ar(a, b[k]));
    }
}

static void rmsnorm_row(enum kg_arith a, const double *x, const double *w, int64_t n, double eps, double *y)
{
    struct kg_acc acc = {0, 0};
    for (int64_t k = 0; k < n; k++) {
        double v = kg_ar(a, x[k]);
        kg_acc_add(a, &acc, kg_ar(a, v * v));
    }
    double ms = kg_ar(a, kg_acc_get(&acc) / kg_ar(a, (double)n));
    double r = kg_ar(a, 1.0 / kg_ar(a, sqrt(kg_ar(a, ms + kg_ar(a, eps)))));
    for (int64_t k = 0; k < n; k++) y[k] = kg_ar(a, kg_ar(a, kg_ar(a, x[k]) * r) * kg_ar(a, w[k]));
}

/* ---- evaluation ------------------------------------------------------------------------ */

static int layernorm_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                          struct kg_tensor *const *out, struct kg_err *e)
{
    const struct kg_tensor *x = in[0];
    int64_t n = x->dims[x->rank - 1];
    const double *xd = x->data, *w = in[1]->data, *b = in[2]->data;
    double *y = out[0]->data;
    for (int64_t r = 0; n && r < x->numel / n; r++) layernorm_row(a, xd + r * n, w, b, n, c->param[0], y + r * n);
    return 0;
}

static int rmsnorm_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                        struct kg_tensor *const *out, struct kg_err *e)
{
    const struct kg_tensor *x = in[0];
    int64_t n = x->dims[x->rank - 1];
    const double *xd = x->data, *w = in[1]->data;
    double *y = out[0]->data;
    for (int64_t r = 0; n && r < x->numel / n; r++) rmsnorm_row(a, xd + r * n, w, n, c->param[0], y + r * n);
    return 0;
}

const struct kg_opdef kg_opdef_layernorm = {
    .name = "layernorm",
    .n_in = 3,
    .n_out = 1,
    .params = {"eps"},
    .defaults = {1e-5},
    .flags = KG_OP_ROWWISE | KG_OP_LOWACC,
    .doc = "layernorm(eps=1e-5): x[...,N], weight[N], bias[N] -> y = (x-mean)/sqrt(var+eps)*w+b "
           "over the last dim",
    .check = check_layernorm,
    .reduce_axis = last_axis,
    .eval = layernorm_eval};

const struct kg_opdef kg_opdef_rmsnorm = {
    .name = "rmsnorm",
    .n_in = 2,
    .n_out = 1,
    .params = {"eps"},
    .defaults = {1e-6},
    .flags = KG_OP_ROWWISE | KG_OP_LOWACC,
    .doc = "rmsnorm(eps=1e-6): x[...,N], weight[N] -> y = x/sqrt(mean(x^2)+eps)*w over the last "
           "dim",
    .check = check_rmsnorm,
    .reduce_axis = last_axis,
    .eval = rmsnorm_eval};
