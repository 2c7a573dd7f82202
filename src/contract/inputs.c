/* inputs.c: input distributions. Streams: arg i draws from stream i+1; injections draw
 * their positions from stream 1000+i, so changing the distribution never moves them. */
#include "contract/inputs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "base/rng.h"

static double draw(const struct kg_case *k, const struct kg_arg *a, enum kg_dtype t, uint64_t stream, int64_t i)
{
    uint64_t s = k->seed;
    switch (a->dist) {
    case KG_AD_NORMAL: return a->dist_a + a->dist_b * kg_rng_normal(s, stream, (uint64_t)i);
    case KG_AD_UNIFORM: return a->dist_a + (a->dist_b - a->dist_a) * kg_rng_uniform(s, stream, (uint64_t)i);
    case KG_AD_INT:
        return a->dist_a + (double)kg_rng_below(s, stream, (uint64_t)i, (uint64_t)(a->dist_b - a->dist_a + 1));
    case KG_AD_UNITROWS: return kg_rng_normal(s, stream, (uint64_t)i);
    case KG_AD_DEFAULT: break;
    }
    if (!kg_dtype_is_float(t)) {
        if (t == KG_BOOL || k->dist == KG_DIST_BINARY) return (double)kg_rng_below(s, stream, (uint64_t)i, 2);
        if (t == KG_U8) return (double)kg_rng_below(s, stream, (uint64_t)i, 256);
        return (double)kg_rng_below(s, stream, (uint64_t)i, 17) - 8.0;
    }
    switch (k->dist) {
    case KG_DIST_UNIFORM: return 2.0 * kg_rng_uniform(s, stream, (uint64_t)i) - 1.0;
    case KG_DIST_UNIT: return kg_rng_uniform(s, stream, (uint64_t)i);
    case KG_DIST_BINARY: return (double)kg_rng_below(s, stream, (uint64_t)i, 2);
    case KG_DIST_LARGE_MEAN: return 1000.0 + kg_rng_normal(s, stream, (uint64_t)i);
    case KG_DIST_MIXED: {
        double m = pow(10.0, 8.0 * kg_rng_uniform(s, stream, (uint64_t)i) - 4.0);
        return (i & 1) ? -m : m;
    }
    case KG_DIST_NORMAL:
    case KG_DIST_SPECIAL:
    default: return kg_rng_normal(s, stream, (uint64_t)i);
    }
}

/* Smallest positive subnormal of a floating dtype, times 3 (so it survives rounding). */
static double subnormal(enum kg_dtype t)
{
    switch (t) {
    case KG_F64: return 3 * 0x1p-1074;
    case KG_F32: return 3 * 0x1p-149;
    case KG_F16: return 3 * 0x1p-24;
    case KG_BF16: return 3 * 0x1p-133;
    default: return 0;
    }
}

/* Elements [lo, hi) of one input, each drawn from its own counter (kg_parallel_for). */
struct fill_job {
    const struct kg_case *k;
    const struct kg_arg *a;
    enum kg_dtype t;
    uint64_t stream;
    void *data;
};

static void fill_range(void *ctx, int64_t lo, int64_t hi)
{
    const struct fill_job *job = ctx;
    for (int64_t j = lo; j < hi; j++) kg_store(job->t, job->data, j, draw(job->k, job->a, job->t, job->stream, j));
}

void kg_inputs_fill(const struct kg_case *k, int i, void *data, struct kg_inputs *in)
{
    const struct kg_arg *a = &k->c->args[i];
    enum kg_dtype t = k->adtype[i];
    int64_t n = k->numel[i];
    uint64_t stream = (uint64_t)i + 1;
    if (a->dist == KG_AD_UNITROWS && a->rank > 0 && a->rank <= KG_MAX_RANK) {
        int64_t row = k->shape[i].dims[a->rank - 1];
        for (int64_t r0 = 0; row > 0 && r0 < n; r0 += row) {
            double ss = 0;
            for (int64_t j = 0; j < row; j++) {
                double v = draw(k, a, t, stream, r0 + j);
                ss += v * v;
            }
            double inv = ss > 0 ? 1.0 / sqrt(ss) : 0;
            for (int64_t j = 0; j < row; j++) kg_store(t, data, r0 + j, draw(k, a, t, stream, r0 + j) * inv);
        }
    } else {
        struct fill_job job = {k, a, t, stream, data};
        kg_parallel_for(n, KG_PARALLEL_GRAIN, fill_range, &job);
    }
    if (k->dist == KG_DIST_SPECIAL) kg_inputs_inject(k, i, data, in);
}

void kg_inputs_inject(const struct kg_case *k, int i, void *data, struct kg_inputs *in)
{
    const struct kg_arg *a = &k->c->args[i];
    enum kg_dtype t = k->adtype[i];
    int64_t n = k->numel[i];
    if (!kg_dtype_is_float(t) || n == 0 || a->dist == KG_AD_INT) return;
    /* One NaN, one +Inf, one -Inf, two -0 and two subnormals, at distinct random places;
     * with fewer elements than that, as many as fit, in that order. */
    const double vals[] = {NAN, INFINITY, -INFINITY, -0.0, -0.0, subnormal(t), -subnormal(t)};
    int nv = (int)(sizeof vals / sizeof *vals);
    if (n < nv) nv = (int)n;
    int64_t used[8];
    for (int v = 0; v < nv; v++) {
        int64_t pos = 0;
        for (uint64_t tries = 0;; tries++) {
            pos = (int64_t)kg_rng_below(k->seed, 1000 + (uint64_t)i, (uint64_t)v * 131 + tries, (uint64_t)n);
            int dup = 0;
            for (int u = 0; u < v; u++) dup |= used[u] == pos;
            if (!dup) break;
        }
        used[v] = pos;
        kg_store(t, data, pos, vals[v]);
        if (in && in->nspecial < KG_MAX_SPECIAL) in->special[in->nspecial++] = (struct kg_special){i, pos, vals[v]};
    }
}

int kg_inputs_generate(const struct kg_case *k, struct kg_inputs *in, struct kg_err *e)
{
    memset(in, 0, sizeof *in);
    for (int i = 0; i < k->c->nargs; i++) {
        if (!kg_arg_is_input(&k->c->args[i])) continue;
        if (kg_tensor_alloc(&in->t[i], k->adtype[i], k->shape[i].rank, k->shape[i].dims)) {
            kg_inputs_free(in);
            return kg_errf(e, "%s: cannot allocate input %s (%lld elements)", k->c->path, k->c->args[i].name,
                           (long long)k->numel[i]);
        }
        kg_inputs_fill(k, i, in->t[i].data, in);
    }
    return 0;
}

void kg_inputs_free(struct kg_inputs *in)
{
    if (in->holds) {
        (*in->holds)--;
        memset(in, 0, sizeof *in);
        return;
    }
    for (int i = 0; i < KG_MAX_ARGS; i++) kg_tensor_free(&in->t[i]);
}

int kg_inputs_copy(struct kg_inputs *dst, const struct kg_inputs *src)
{
    memset(dst, 0, sizeof *dst);
    dst->nspecial = src->nspecial;
    memcpy(dst->special, src->special, sizeof dst->special);
    for (int i = 0; i < KG_MAX_ARGS; i++)
        if (src->t[i].data && kg_tensor_copy(&dst->t[i], &src->t[i])) {
            kg_inputs_free(dst);
            return -1;
        }
    return 0;
}

int kg_inputs_to_f64(const struct kg_case *k, const struct kg_inputs *in, struct kg_tensor *out, int *n,
                     struct kg_err *e)
{
    *n = 0;
    for (int i = 0; i < k->c->nargs; i++) {
        if (!kg_arg_is_input(&k->c->args[i])) continue;
        struct kg_tensor *o = &out[(*n)++];
        if (kg_tensor_alloc(o, KG_F64, k->shape[i].rank, k->shape[i].dims)) {
            for (int j = 0; j < *n - 1; j++) kg_tensor_free(&out[j]);
            *n = 0;
            return kg_errf(e, "out of memory converting %s to float64", k->c->args[i].name);
        }
        double *d = o->data;
        for (int64_t j = 0; j < o->numel; j++) d[j] = kg_load(in->t[i].dtype, in->t[i].data, j);
    }
    return 0;
}
