/* reduce.c: ops along one dim: the reductions (sum, mean, max, min, argmax) and the
 * same-shape scans (softmax, log_softmax, cumsum). Every op is a function of one contiguous
 * row; a driver gathers the rows along `dim` out of the tensor and scatters the results, so
 * summation order along the row is always k = 0..n-1, whatever the layout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "oracle/oracle.h"

/* Computes the op on x[0..n-1] into y[0] (reductions) or y[0..n-1] (scans). */
typedef void (*row_fn)(enum kg_arith a, const double *x, int64_t n, double *y);

/* Rows gathered at once when dim is not the last: reads then touch this many adjacent
 * elements per cache line instead of one. */
#define GATHER_COLS 16

/* ---- dims and shapes ------------------------------------------------------------------- */

/* `dim` resolved against the input rank, or -1 when it is out of range. */
static int resolve_dim(const struct kg_opcall *c, int rank)
{
    double v = c->param[0];
    if (!(v >= -rank && v < rank) || v != floor(v)) return -1;
    int d = (int)v;
    return d < 0 ? d + rank : d;
}

static int dim_axis(const struct kg_opcall *c, const struct kg_shape *in0)
{
    return resolve_dim(c, in0->rank);
}

static bool same_shape(const struct kg_shape *x, const struct kg_shape *y)
{
    if (x->rank != y->rank) return false;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] != y->dims[i]) return false;
    return true;
}

static int dim_error(const struct kg_opcall *c, const struct kg_shape *in, struct kg_err *e)
{
    char b[KG_SHAPE_TEXT_MAX];
    const char *op = c->def->name;
    if (in->rank == 0) return kg_errf(e, "%s needs an input with at least one dim; got a scalar", op);
    return kg_errf(e, "%s(dim=%g): dim out of range for x%s (valid: %d..%d)", op, c->param[0],
                   kg_shape_str(in, b, sizeof b), -in->rank, in->rank - 1);
}

/* x with `dim` removed, or kept with size 1. */
static int check_reduction(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out,
                           bool empty_ok, struct kg_err *e)
{
    int d = resolve_dim(c, in->rank);
    if (d < 0) return dim_error(c, in, e);
    char bx[KG_SHAPE_TEXT_MAX], br[KG_SHAPE_TEXT_MAX], bk[KG_SHAPE_TEXT_MAX], by[KG_SHAPE_TEXT_MAX];
    if (!empty_ok && in->dims[d] == 0)
        return kg_errf(e, "%s(dim=%g) over x%s: dim %d is empty, so there is no value to take", c->def->name,
                       c->param[0], kg_shape_str(in, bx, sizeof bx), d);
    struct kg_shape r = {.rank = in->rank - 1}, k = *in;
    for (int i = 0, j = 0; i < in->rank; i++)
        if (i != d) r.dims[j++] = in->dims[i];
    k.dims[d] = 1;
    if (same_shape(out, &r) || same_shape(out, &k)) return 0;
    return kg_errf(e, "%s(dim=%g) reduces x%s to y%s (or y%s keeping the dim); got y%s", c->def->name, c->param[0],
                   kg_shape_str(in, bx, sizeof bx), kg_shape_str(&r, br, sizeof br), kg_shape_str(&k, bk, sizeof bk),
                   kg_shape_str(out, by, sizeof by));
}

static int check_sum(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out, struct kg_err *e)
{
    return check_reduction(c, in, out, true, e);
}

static int check_extremum(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out,
                          struct kg_err *e)
{
    return check_reduction(c, in, out, false, e);
}

static int check_scan(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out,
                      struct kg_err *e)
{
    if (resolve_dim(c, in->rank) < 0) return dim_error(c, in, e);
    if (same_shape(out, in)) return 0;
    char bx[KG_SHAPE_TEXT_MAX], by[KG_SHAPE_TEXT_MAX];
    return kg_errf(e, "%s(dim=%g) expects y with x's shape %s; got y%s", c->def->name, c->param[0],
                   kg_shape_str(in, bx, sizeof bx), kg_shape_str(out, by, sizeof by));
}

/* ---- the driver ------------------------------------------------------------------------ */

/* Runs f on every row of x along dim; the output has the same flat layout as x with dim
 * of size ny (1 for reductions, keepdim or not; n for scans). */
static int eval_rows(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *x, struct kg_tensor *y,
                     row_fn f, bool scan, struct kg_err *e)
{
    int d = resolve_dim(c, x->rank);
    int64_t n = x->dims[d], outer = 1, inner = 1;
    for (int i = 0; i < d; i++) outer *= x->dims[i];
    for (int i = d + 1; i < x->rank; i++) inner *= x->dims[i];
    int64_t ny = scan ? n : 1;
    const double *xd = x->data;
    double *yd = y->data;
    if (outer == 0 || inner == 0) return 0;
    if (inner == 1) {
        for (int64_t o = 0; o < outer; o++) f(a, xd + o * n, n, yd + o * ny);
        return 0;
    }
    /* GATHER_COLS rows side by side: xb[b*n + k] is element k of row b. */
    size_t cols = inner < GATHER_COLS ? (size_t)inner : GATHER_COLS;
    double *xb = malloc(cols * (size_t)(n + ny) * sizeof *xb + 1);
    if (!xb) return kg_errf(e, "%s: out of memory (malloc of %lld row buffers)", c->def->name, (long long)cols);
    double *yb = xb + cols * (size_t)n;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i0 = 0; i0 < inner; i0 += (int64_t)cols) {
            int64_t nb = inner - i0 < (int64_t)cols ? inner - i0 : (int64_t)cols;
            for (int64_t k = 0; k < n; k++) {
                const double *src = xd + (o * n + k) * inner + i0;
                for (int64_t b = 0; b < nb; b++) xb[b * n + k] = src[b];
            }
            for (int64_t b = 0; b < nb; b++) f(a, xb + b * n, n, yb + b * ny);
            for (int64_t k = 0; k < ny; k++) {
                double *dst = yd + (o * ny + k) * inner + i0;
                for (int64_t b = 0; b < nb; b++) dst[b] = yb[b * ny + k];
            }
        }
    }
    free(xb);
    return 0;
}

/* ---- rows ------------------------------------------------------------------------------ */

static void sum_row(enum kg_arith a, const double *x, int64_t n, double *y)
{
    struct kg_acc acc = {0, 0};
    for (int64_t k = 0; k < n; k++) kg_acc_add(a, &acc, kg_ar(a, x[k]));
    y[0] = kg_acc_get(&acc);
}

/* mean of an empty row is 0/0 = NaN, as in PyTorch. */
static void mean_row(enum kg_arith a, const double *x, int64_t n, double *y)
{
    sum_row(a, x, n, y);
    y[0] = kg_ar(a, y[0] / kg_ar(a, (double)n));
}

/* The maximum, or NaN as soon as one element is NaN; the first of equal values wins. */
static double row_max(enum kg_arith a, const double *x, int64_t n, int64_t *at)
{
    double m = n ? kg_ar(a, x[0]) : NAN;
    *at = 0;
    for (int64_t k = 0; k < n; k++) {
        double v = kg_ar(a, x[k]);
        if (v != v) {
            *at = k;
            return v;
        }
        if (v > m) {
            m = v;
            *at = k;
        }
    }
    return m;
}

static void max_row(enum kg_arith a, const double *x, int64_t n, double *y)
{
    int64_t at;
    y[0] = row_max(a, x, n, &at);
}

static void min_row(enum kg_arith a, const double *x, int64_t n, double *y)
{
    double m = n ? kg_ar(a, x[0]) : NAN;
    for (int64_t k = 0; k < n; k++) {
        double v = kg_ar(a, x[k]);
        if (v != v) {
            m = v;
            break;
        }
        if (v < m) m = v;
    }
    y[0] = m;
}

static void argmax_row(enum kg_arith a, const double *x, int64_t n, double *y)
{
    int64_t at;
    row_max(a, x, n, &at);
    y[0] = (double)at;
}

/* exp(x - max) / sum: a NaN anywhere makes max NaN and so the whole row; +inf gives
 * inf - inf = NaN at that element, hence a NaN sum and a NaN row, as in PyTorch. */
static void softmax_row(enum kg_arith a, const double *x, int64_t n, double *y)
{
    int64_t at;
    double m = row_max(a, x, n, &at);
    struct kg_acc acc = {0, 0};
    for (int64_t k = 0; k < n; k++) {
        y[k] = kg_ar(a, exp(kg_ar(a, kg_ar(a, x[k]) - m)));
        kg_acc_add(a, &acc, y[k]);
    }
    double s = kg_acc_get(&acc);
    for (int64_t k = 0; k < n; k++) y[k] = kg_ar(a, y[k] / s);
}

static void log_softmax_row(enum kg_arith a, const double *x, int64_t n, double *y)
{
    int64_t at;
    double m = row_max(a, x, n, &at);
    struct kg_acc acc = {0, 0};
    for (int64_t k = 0; k < n; k++) {
        y[k] = kg_ar(a, kg_ar(a, x[k]) - m);
        kg_acc_add(a, &acc, kg_ar(a, exp(y[k])));
    }
    double ls = kg_ar(a, log(kg_acc_get(&acc)));
    for (int64_t k = 0; k < n; k++) y[k] = kg_ar(a, y[k] - ls);
}

static void cumsum_row(enum kg_arith a, const double *x, int64_t n, double *y)
{
    struct kg_acc acc = {0, 0};
    for (int64_t k = 0; k < n; k++) {
        kg_acc_add(a, &acc, kg_ar(a, x[k]));
        y[k] = kg_acc_get(&acc);
    }
}

/* The product in the mode's arithmetic, left to right: in fp32 it overflows to +-inf (or
 * underflows to 0) where fp64 does not, and that is the working precision's own result. */
static void prod_row(enum kg_arith a, const double *x, int64_t n, double *y)
{
    double p = 1;
    for (int64_t k = 0; k < n; k++) p = kg_ar(a, p * kg_ar(a, x[k]));
    y[0] = p;
}

/* ---- opdefs ---------------------------------------------------------------------------- */

#define ROW_EVAL(fn, scan)                                                                                             \
    static int fn##_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,                \
                         struct kg_tensor *const *out, struct kg_err *e)                                               \
    {                                                                                                                  \
        return eval_rows(c, a, in[0], out[0], fn##_row, scan, e);                                                      \
    }

ROW_EVAL(sum, false)
ROW_EVAL(mean, false)
ROW_EVAL(prod, false)
ROW_EVAL(max, false)
ROW_EVAL(min, false)
ROW_EVAL(argmax, false)
ROW_EVAL(softmax, true)
ROW_EVAL(log_softmax, true)
ROW_EVAL(cumsum, true)

#define REDUCE_FLAGS (KG_OP_ROWWISE | KG_OP_PERMUTABLE)
#define SUM_FLAGS    (REDUCE_FLAGS | KG_OP_LOWACC)

const struct kg_opdef kg_opdef_sum = {.name = "sum",
                                      .n_in = 1,
                                      .n_out = 1,
                                      .params = {"dim"},
                                      .defaults = {NAN},
                                      .flags = SUM_FLAGS,
                                      .doc = "sum(dim): x -> y, x without dim (or with dim of size 1)",
                                      .check = check_sum,
                                      .reduce_axis = dim_axis,
                                      .eval = sum_eval};

const struct kg_opdef kg_opdef_mean = {.name = "mean",
                                       .n_in = 1,
                                       .n_out = 1,
                                       .params = {"dim"},
                                       .defaults = {NAN},
                                       .flags = SUM_FLAGS,
                                       .doc = "mean(dim): x -> y, x without dim (or with dim of size 1)",
                                       .check = check_sum,
                                       .reduce_axis = dim_axis,
                                       .eval = mean_eval};

const struct kg_opdef kg_opdef_prod = {.name = "prod",
                                       .n_in = 1,
                                       .n_out = 1,
                                       .params = {"dim"},
                                       .defaults = {NAN},
                                       .flags = REDUCE_FLAGS,
                                       .doc = "prod(dim): x -> y, x without dim (or with dim of size 1)",
                                       .check = check_sum,
                                       .reduce_axis = dim_axis,
                                       .eval = prod_eval};

const struct kg_opdef kg_opdef_max = {.name = "max",
                                      .n_in = 1,
                                      .n_out = 1,
                                      .params = {"dim"},
                                      .defaults = {NAN},
                                      .flags = REDUCE_FLAGS,
                                      .doc =
                                          "max(dim): x -> y, x without dim (or with dim of size 1); NaN if any is NaN",
                                      .check = check_extremum,
                                      .reduce_axis = dim_axis,
                                      .eval = max_eval};

const struct kg_opdef kg_opdef_min = {.name = "min",
                                      .n_in = 1,
                                      .n_out = 1,
                                      .params = {"dim"},
                                      .defaults = {NAN},
                                      .flags = REDUCE_FLAGS,
                                      .doc =
                                          "min(dim): x -> y, x without dim (or with dim of size 1); NaN if any is NaN",
                                      .check = check_extremum,
                                      .reduce_axis = dim_axis,
                                      .eval = min_eval};

const struct kg_opdef kg_opdef_argmax = {
    .name = "argmax",
    .n_in = 1,
    .n_out = 1,
    .params = {"dim"},
    .defaults = {NAN},
    .flags = KG_OP_ROWWISE | KG_OP_INT_OUT,
    .doc = "argmax(dim): x -> index, x without dim (or with dim of size 1); first max, or first "
           "NaN",
    .check = check_extremum,
    .reduce_axis = dim_axis,
    .eval = argmax_eval};

const struct kg_opdef kg_opdef_softmax = {.name = "softmax",
                                          .n_in = 1,
                                          .n_out = 1,
                                          .params = {"dim"},
                                          .defaults = {NAN},
                                          .flags = KG_OP_ROWWISE | KG_OP_LOWACC,
                                          .doc = "softmax(dim): x -> y, same shape",
                                          .check = check_scan,
                                          .reduce_axis = dim_axis,
                                          .eval = softmax_eval};

const struct kg_opdef kg_opdef_log_softmax = {.name = "log_softmax",
                                              .n_in = 1,
                                              .n_out = 1,
                                              .params = {"dim"},
                                              .defaults = {NAN},
                                              .flags = KG_OP_ROWWISE | KG_OP_LOWACC,
                                              .doc = "log_softmax(dim): x -> y, same shape",
                                              .check = check_scan,
                                              .reduce_axis = dim_axis,
                                              .eval = log_softmax_eval};

const struct kg_opdef kg_opdef_cumsum = {.name = "cumsum",
                                         .n_in = 1,
                                         .n_out = 1,
                                         .params = {"dim"},
                                         .defaults = {NAN},
                                         .flags = KG_OP_ROWWISE | KG_OP_LOWACC,
                                         .doc = "cumsum(dim): x -> y, same shape (inclusive prefix sums)",
                                         .check = check_scan,
                                         .reduce_axis = dim_axis,
                                         .eval = cumsum_eval};
