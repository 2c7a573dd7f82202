/* linalg.c: matmul, bmm, transpose2d and causal attention. Products loop i-k-j over a row of
 * accumulators, one per output element, so the loop is cache-friendly and yet every output
 * still sums its terms in the order k = 0..K-1 (sequential in the working modes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "oracle/oracle.h"

static bool same_shape(const struct kg_shape *x, const struct kg_shape *y)
{
    if (x->rank != y->rank) return false;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] != y->dims[i]) return false;
    return true;
}

/* ---- checks ---------------------------------------------------------------------------- */

#define MATMUL_FORM "matmul expects A[M,K], B[K,N] -> C[M,N]"
#define BMM_FORM    "bmm expects A[Bt,M,K], B[Bt,K,N] -> C[Bt,M,N]"

/* A[..,M,K] x B[..,K,N] -> C[..,M,N] with `batch` leading dims shared by all three. */
static int check_product(const struct kg_shape *in, const struct kg_shape *out, int batch, const char *form,
                         struct kg_err *e)
{
    const struct kg_shape *A = &in[0], *B = &in[1], *C = &out[0];
    char ba[KG_SHAPE_TEXT_MAX], bb[KG_SHAPE_TEXT_MAX], bc[KG_SHAPE_TEXT_MAX], bw[KG_SHAPE_TEXT_MAX];
    int r = batch + 2;
    if (A->rank != r) return kg_errf(e, "%s; got A%s", form, kg_shape_str(A, ba, sizeof ba));
    if (B->rank != r || B->dims[batch] != A->dims[batch + 1])
        return kg_errf(e, "%s; got B%s for A%s", form, kg_shape_str(B, bb, sizeof bb), kg_shape_str(A, ba, sizeof ba));
    for (int i = 0; i < batch; i++)
        if (B->dims[i] != A->dims[i])
            return kg_errf(e, "%s; got B%s for A%s (batch sizes differ)", form, kg_shape_str(B, bb, sizeof bb),
                           kg_shape_str(A, ba, sizeof ba));
    struct kg_shape want = *A;
    want.dims[batch + 1] = B->dims[batch + 1];
    if (!same_shape(C, &want))
        return kg_errf(e, "%s; got C%s for A%s, B%s (expected C%s)", form, kg_shape_str(C, bc, sizeof bc),
                       kg_shape_str(A, ba, sizeof ba), kg_shape_str(B, bb, sizeof bb),
                       kg_shape_str(&want, bw, sizeof bw));
    return 0;
}

static int check_matmul(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out,
                        struct kg_err *e)
{
    return check_product(in, out, 0, MATMUL_FORM, e);
}

static int check_bmm(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out, struct kg_err *e)
{
    return check_product(in, out, 1, BMM_FORM, e);
}

static int check_transpose2d(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out,
                             struct kg_err *e)
{
    char bx[KG_SHAPE_TEXT_MAX], by[KG_SHAPE_TEXT_MAX];
    if (in[0].rank != 2)
        return kg_errf(e, "transpose2d expects x[M,N] -> y[N,M]; got x%s", kg_shape_str(&in[0], bx, sizeof bx));
    struct kg_shape want = {.rank = 2, .dims = {in[0].dims[1], in[0].dims[0]}};
    if (!same_shape(&out[0], &want))
        return kg_errf(e, "transpose2d expects x[M,N] -> y[N,M]; got y%s for x%s", kg_shape_str(&out[0], by, sizeof by),
                       kg_shape_str(&in[0], bx, sizeof bx));
    return 0;
}

static int check_attention(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out,
                           struct kg_err *e)
{
    static const char *const name[] = {"q", "k", "v"};
    const char *form = "causal_attention expects q, k, v [B,H,T,D] (all the same shape) -> "
                       "o [B,H,T,D]";
    char b0[KG_SHAPE_TEXT_MAX], b1[KG_SHAPE_TEXT_MAX];
    if (in[0].rank != 4) return kg_errf(e, "%s; got q%s", form, kg_shape_str(&in[0], b0, sizeof b0));
    for (int i = 1; i < 3; i++)
        if (!same_shape(&in[i], &in[0]))
            return kg_errf(e, "%s; got %s%s for q%s", form, name[i], kg_shape_str(&in[i], b1, sizeof b1),
                           kg_shape_str(&in[0], b0, sizeof b0));
    if (!same_shape(&out[0], &in[0]))
        return kg_errf(e, "%s; got o%s for q%s", form, kg_shape_str(&out[0], b1, sizeof b1),
                       kg_shape_str(&in[0], b0, sizeof b0));
    return 0;
}

static int axis1(const struct kg_opcall *c, const struct kg_shape *in0)
{
    return 1;
}

static int axis2(const struct kg_opcall *c, const struct kg_shape *in0)
{
    return 2;
}

/* ---- kernels --------------------------------------------------------------------------- */

/* acc[j] += s * b[j] for j < n. Called with a constant mode so each mode gets its own
 * branch-free inner loop once inlined. */
static inline void axpy_acc(enum kg_arith a, struct kg_acc *acc, double s, const double *b, int64_t n)
{
    for (int64_t j = 0; j < n; j++) kg_acc_add(a, &acc[j], s * kg_ar(a, b[j]));
}

static void axpy(enum kg_arith a, struct kg_acc *acc, double s, const double *b, int64_t n)
{
    if (a == KG_EXACT)
        axpy_acc(KG_EXACT, acc, s, b, n);
    else if (a == KG_W32)
        axpy_acc(KG_W32, acc, s, b, n);
    else if (a == KG_WACC16)
        axpy_acc(KG_WACC16, acc, s, b, n);
    else if (a == KG_WACCBF16)
        axpy_acc(KG_WACCBF16, acc, s, b, n);
    else
        axpy_acc(KG_W64, acc, s, b, n);
}

/* C[M,N] = A[M,K] B[K,N]; acc has room for N accumulators. */
static void matmul_core(enum kg_arith a, const double *A, const double *B, double *C, int64_t M, int64_t K, int64_t N,
                        struct kg_acc *acc)
{
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) acc[j] = (struct kg_acc){0, 0};
        for (int64_t k = 0; k < K; k++) axpy(a, acc, kg_ar(a, A[i * K + k]), B + k * N, N);
        for (int64_t j = 0; j < N; j++) C[i * N + j] = kg_acc_get(&acc[j]);
    }
}

static int product_eval(const char *op, enum kg_arith a, const struct kg_tensor *const *in,
                        struct kg_tensor *const *out, int batch, struct kg_err *e)
{
    const struct kg_tensor *A = in[0], *B = in[1];
    int64_t nb = batch ? A->dims[0] : 1;
    int64_t M = A->dims[batch], K = A->dims[batch + 1], N = B->dims[batch + 1];
    struct kg_acc *acc = malloc((size_t)N * sizeof *acc + 1);
    if (!acc) return kg_errf(e, "%s: out of memory (malloc of %lld accumulators)", op, (long long)N);
    const double *ad = A->data, *bd = B->data;
    double *cd = out[0]->data;
    for (int64_t t = 0; t < nb; t++) matmul_core(a, ad + t * M * K, bd + t * K * N, cd + t * M * N, M, K, N, acc);
    free(acc);
    return 0;
}

static int matmul_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                       struct kg_tensor *const *out, struct kg_err *e)
{
    return product_eval("matmul", a, in, out, 0, e);
}

static int bmm_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                    struct kg_tensor *const *out, struct kg_err *e)
{
    return product_eval("bmm", a, in, out, 1, e);
}

/* An exact copy in every mode. */
static int transpose2d_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                            struct kg_tensor *const *out, struct kg_err *e)
{
    int64_t M = in[0]->dims[0], N = in[0]->dims[1];
    const double *x = in[0]->data;
    double *y = out[0]->data;
    for (int64_t i0 = 0; i0 < M; i0 += 32)
        for (int64_t j = 0; j < N; j++)
            for (int64_t i = i0; i < M && i < i0 + 32; i++) y[j * M + i] = x[i * N + j];
    return 0;
}

/* One (batch, head): o[i] = sum_{j<=i} softmax_j(scale * q[i].k[j]) v[j]. The probabilities
 * are normalised before P.V, as a softmax-then-matmul reference does. */
static void attention_head(enum kg_arith a, const double *q, const double *k, const double *v, double *o, int64_t T,
                           int64_t D, double scale, double *s, struct kg_acc *acc)
{
    for (int64_t i = 0; i < T; i++) {
        double m = -INFINITY;
        bool nan = false;
        for (int64_t j = 0; j <= i; j++) {
            struct kg_acc dot = {0, 0};
            for (int64_t d = 0; d < D; d++) kg_acc_add(a, &dot, kg_ar(a, q[i * D + d]) * kg_ar(a, k[j * D + d]));
            s[j] = kg_ar(a, kg_acc_get(&dot) * scale);
            if (s[j] != s[j]) nan = true;
            if (s[j] > m) m = s[j];
        }
        if (nan) m = NAN;
        struct kg_acc l = {0, 0};
        for (int64_t j = 0; j <= i; j++) {
            s[j] = kg_ar(a, exp(kg_ar(a, s[j] - m)));
            kg_acc_add(a, &l, s[j]);
        }
        double sum = kg_acc_get(&l);
        for (int64_t d = 0; d < D; d++) acc[d] = (struct kg_acc){0, 0};
        for (int64_t j = 0; j <= i; j++) axpy(a, acc, kg_ar(a, s[j] / sum), v + j * D, D);
        for (int64_t d = 0; d < D; d++) o[i * D + d] = kg_acc_get(&acc[d]);
    }
}

static int causal_attention_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                                 struct kg_tensor *const *out, struct kg_err *e)
{
    const struct kg_tensor *q = in[0];
    int64_t BH = q->dims[0] * q->dims[1], T = q->dims[2], D = q->dims[3];
    double scale = c->param[0] != 0 ? c->param[0] : 1.0 / sqrt((double)D);
    scale = kg_ar(a, scale);
    double *s = malloc((size_t)T * sizeof *s + 1);
    struct kg_acc *acc = malloc((size_t)D * sizeof *acc + 1);
    if (!s || !acc) {
        free(s);
        free(acc);
        return kg_errf(e,
                       "causal_attention: out of memory (malloc of T=%lld scores, D=%lld "
                       "accumulators)",
                       (long long)T, (long long)D);
    }
    const double *qd = q->data, *kd = in[1]->data, *vd = in[2]->data;
    double *od = out[0]->data;
    for (int64_t h = 0; h < BH; h++) {
        int64_t off = h * T * D;
        attention_head(a, qd + off, kd + off, vd + off, od + off, T, D, scale, s, acc);
    }
    free(s);
    free(acc);
    return 0;
}

/* ---- opdefs ---------------------------------------------------------------------------- */

const struct kg_opdef kg_opdef_matmul = {.name = "matmul",
                                         .n_in = 2,
                                         .n_out = 1,
                                         .flags = KG_OP_LOWACC,
                                         .doc = "matmul: A[M,K], B[K,N] -> C[M,N]",
                                         .check = check_matmul,
                                         .reduce_axis = axis1,
                                         .eval = matmul_eval};

const struct kg_opdef kg_opdef_bmm = {.name = "bmm",
                                      .n_in = 2,
                                      .n_out = 1,
                                      .flags = KG_OP_LOWACC,
                                      .doc = "bmm: A[Bt,M,K], B[Bt,K,N] -> C[Bt,M,N]",
                                      .check = check_bmm,
                                      .reduce_axis = axis2,
                                      .eval = bmm_eval};

const struct kg_opdef kg_opdef_transpose2d = {.name = "transpose2d",
                                              .n_in = 1,
                                              .n_out = 1,
                                              .doc = "transpose2d: x[M,N] -> y[N,M]",
                                              .check = check_transpose2d,
                                              .eval = transpose2d_eval};

const struct kg_opdef kg_opdef_causal_attention = {
    .name = "causal_attention",
    .n_in = 3,
    .n_out = 1,
    .params = {"scale"},
    .defaults = {0},
    .doc = "causal_attention(scale=0 meaning 1/sqrt(D)): q, k, v [B,H,T,D] -> o [B,H,T,D], "
           "softmax over keys j <= i",
    .check = check_attention,
    .reduce_axis = axis2,
    .eval = causal_attention_eval};
