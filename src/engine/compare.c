/* compare.c: element errors, tensor comparisons and the allclose of the standard test. */
#include "engine/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "base/rng.h"
#include "base/util.h"

static double compare_seconds;

double kg_compare_seconds(void)
{
    return compare_seconds;
}

/* A comparison of a real-size tensor goes in blocks of this many elements, each block's result
 * combined in block order: the same values whatever the number of threads (kg_parallel_for);
 * the worst element, the counts and the first indices are those of one pass. */
#define BLOCK ((int64_t)1 << 20)

/* The RMS with its mantissa rounded to 24 bits (nearest, ties to even), as the torch runner's
 * scale_of rounds its own: the two sum in different orders, and the last bits of a sum of 10^8
 * squares depend on its order (about 1e-12 relative), so unrounded they would differ in most
 * tensors; rounded they agree but with a chance of about 1e-5, and every element error, worst
 * element and count with them. */
static double scale_rounded(double v)
{
    int ex;
    double m = frexp(v, &ex);
    return ldexp(nearbyint(m * 16777216.0) / 16777216.0, ex);
}

double kg_scale_of(const struct kg_tensor *exp64)
{
    const double *x = exp64->data;
    double ss = 0;
    int64_t n = 0;
    for (int64_t i = 0; i < exp64->numel; i++)
        if (isfinite(x[i])) {
            ss += x[i] * x[i];
            n++;
        }
    return n ? scale_rounded(sqrt(ss / (double)n)) : 0;
}

static int kind(double v)
{
    return isnan(v) ? 1 : v == INFINITY ? 2 : v == -INFINITY ? 3 : 0;
}

static inline double elem_err(double got, double exp, double scale)
{
    if (!isfinite(got) || !isfinite(exp)) {
        int kg = kind(got), ke = kind(exp);
        return kg == ke ? 0 : INFINITY;
    }
    double d = fabs(got - exp);
    if (d == 0) return 0;
    double den = fabs(exp) + scale;
    return den > 0 ? d / den : INFINITY;
}

double kg_elem_err(double got, double exp, double scale)
{
    return elem_err(got, exp, scale);
}

/* Element i of got, with the dtype a constant where the caller is specialised (for_each_dtype):
 * a real-size output is 10^7-10^8 elements, and an out-of-line load per element was most of
 * the comparison's time. */
static inline __attribute__((always_inline)) double load(enum kg_dtype t, const void *base, int64_t i)
{
    switch (t) {
    case KG_F64: return ((const double *)base)[i];
    case KG_F32: return ((const float *)base)[i];
    default: return kg_load(t, base, i);
    }
}

/* The body of compare() for one dtype of got over elements [lo, hi), into out (its counters
 * started by the caller) and the finite pairs' sums num and den (inlined into one copy per
 * dtype below). */
static inline __attribute__((always_inline)) void compare_as(enum kg_dtype t, const struct kg_tensor *got,
                                                             const double *x, const double *r, double scale, int64_t lo,
                                                             int64_t hi, struct kg_cmp *out, double *num_out,
                                                             double *den_out)
{
    double num = 0, den = 0;
    for (int64_t i = lo; i < hi; i++) {
        double g = load(t, got->data, i);
        if (r && !isfinite(g) && kind(g) == kind(r[i]) && kind(g) != kind(x[i])) {
            if (out->first_excused < 0) out->first_excused = i;
            out->excused++;
            continue;
        }
        double e = elem_err(g, x[i], scale);
        if (e > 0) out->mismatches++;
        if (isinf(e)) {
            out->nonfinite_mismatch++;
            if (out->first_nonfinite_mismatch < 0) out->first_nonfinite_mismatch = i;
        }
        if (out->worst < 0 || e > out->max_err) {
            out->max_err = e;
            out->worst = i;
            out->got = g;
            out->exp = x[i];
        }
        if (isfinite(g) && isfinite(x[i])) {
            num += (g - x[i]) * (g - x[i]);
            den += x[i] * x[i];
        }
    }
    *num_out = num;
    *den_out = den;
}

struct cmp_job {
    const struct kg_tensor *got;
    const double *x, *r;
    double scale;
    struct kg_cmp *part; /* one per block */
    double *num, *den;
};

static void compare_blocks(void *ctx, int64_t lo, int64_t hi)
{
    const struct cmp_job *job = ctx;
    for (int64_t b = lo; b < hi; b++) {
        int64_t s = b * BLOCK, e = s + BLOCK < job->got->numel ? s + BLOCK : job->got->numel;
        struct kg_cmp *p = &job->part[b];
        *p = (struct kg_cmp){.worst = -1, .first_nonfinite_mismatch = -1, .first_excused = -1};
        switch (job->got->dtype) {
        case KG_F32:
            compare_as(KG_F32, job->got, job->x, job->r, job->scale, s, e, p, &job->num[b], &job->den[b]);
            break;
        case KG_F64:
            compare_as(KG_F64, job->got, job->x, job->r, job->scale, s, e, p, &job->num[b], &job->den[b]);
            break;
        default:
            compare_as(job->got->dtype, job->got, job->x, job->r, job->scale, s, e, p, &job->num[b], &job->den[b]);
            break;
        }
    }
}

/* Block b's result into out, blocks taken in order: the first worst element and the first
 * non-finite mismatch and excused element of the whole tensor, as one pass finds them. */
static void combine(struct kg_cmp *out, const struct kg_cmp *p)
{
    out->mismatches += p->mismatches;
    out->nonfinite_mismatch += p->nonfinite_mismatch;
    out->excused += p->excused;
    if (out->first_nonfinite_mismatch < 0) out->first_nonfinite_mismatch = p->first_nonfinite_mismatch;
    if (out->first_excused < 0) out->first_excused = p->first_excused;
    if (p->worst >= 0 && (out->worst < 0 || p->max_err > out->max_err)) {
        out->max_err = p->max_err;
        out->worst = p->worst;
        out->got = p->got;
        out->exp = p->exp;
    }
}

static void compare(const struct kg_tensor *got, const struct kg_tensor *exp64, const struct kg_tensor *ref64,
                    double scale, struct kg_cmp *out)
{
    double t0 = kg_now();
    const double *x = exp64->data;
    const double *r = ref64 && ref64->data && ref64->numel == got->numel ? ref64->data : NULL;
    *out = (struct kg_cmp){
        .n = got->numel, .scale = scale, .worst = -1, .first_nonfinite_mismatch = -1, .first_excused = -1};
    int64_t nb = (got->numel + BLOCK - 1) / BLOCK;
    struct kg_cmp one, *part = nb > 1 ? malloc((size_t)nb * sizeof *part) : &one;
    double one_num, one_den, *num = nb > 1 ? malloc((size_t)nb * sizeof *num) : &one_num,
                             *den = nb > 1 ? malloc((size_t)nb * sizeof *den) : &one_den;
    double tn = 0, td = 0;
    if (part && num && den) {
        struct cmp_job job = {got, x, r, scale, part, num, den};
        kg_parallel_for(nb, 1, compare_blocks, &job);
        for (int64_t b = 0; b < nb; b++) {
            combine(out, &part[b]);
            tn += num[b];
            td += den[b];
        }
    } else { /* no memory for the blocks' results: one pass here */
        compare_as(got->dtype, got, x, r, scale, 0, got->numel, out, &tn, &td);
    }
    if (nb > 1) {
        free(part);
        free(num);
        free(den);
    }
    out->rms_rel = td > 0 ? sqrt(tn / td) : (tn > 0 ? INFINITY : 0);
    if (out->first_nonfinite_mismatch >= 0) {
        int64_t i = out->first_nonfinite_mismatch;
        out->worst = i;
        out->got = kg_load(got->dtype, got->data, i);
        out->exp = x[i];
        out->max_err = INFINITY;
    }
    compare_seconds += kg_now() - t0;
}

void kg_compare(const struct kg_tensor *got, const struct kg_tensor *exp64, double scale, struct kg_cmp *out)
{
    compare(got, exp64, NULL, scale, out);
}

void kg_compare_calibrated(const struct kg_tensor *got, const struct kg_tensor *exp64, const struct kg_tensor *ref64,
                           double scale, struct kg_cmp *out)
{
    compare(got, exp64, ref64, scale, out);
}

void kg_errmap(const struct kg_tensor *got, const struct kg_tensor *exp64, double scale, double *err)
{
    const double *x = exp64->data;
    for (int64_t i = 0; i < got->numel; i++) err[i] = elem_err(load(got->dtype, got->data, i), x[i], scale);
}

double kg_tf32(double v, bool truncate)
{
    float f = (float)v;
    if (!isfinite(f)) return v;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (!truncate) u += 0xfffu + ((u >> 13) & 1u);
    u &= 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

/* A copy of in with f applied to every element of every fp32 tensor. */
static int inputs_map(const struct kg_inputs *in, double (*f)(double v, const void *arg), const void *arg,
                      struct kg_inputs *out)
{
    if (kg_inputs_copy(out, in)) return -1;
    for (int i = 0; i < KG_MAX_ARGS; i++) {
        const struct kg_tensor *t = &in->t[i];
        if (t->data && t->dtype == KG_F32)
            for (int64_t q = 0; q < t->numel; q++)
                kg_store(t->dtype, out->t[i].data, q, f(kg_load(t->dtype, t->data, q), arg));
    }
    return 0;
}

static double to_tf32(double v, const void *truncate)
{
    return kg_tf32(v, *(const bool *)truncate);
}

static double times(double v, const void *f)
{
    return *(const double *)f * v;
}

int kg_inputs_tf32(const struct kg_inputs *in, bool truncate, struct kg_inputs *out)
{
    return inputs_map(in, to_tf32, &truncate, out);
}

int kg_inputs_scaled(const struct kg_inputs *in, double f, struct kg_inputs *out)
{
    return inputs_map(in, times, &f, out);
}

int kg_inputs_ulp_nudged(const struct kg_inputs *in, uint64_t seed, bool checkerboard, struct kg_inputs *out)
{
    if (kg_inputs_copy(out, in)) return -1;
    for (int i = 0; i < KG_MAX_ARGS; i++) {
        const struct kg_tensor *t = &in->t[i];
        if (!t->data || t->dtype != KG_F32) continue;
        float *f = out->t[i].data;
        uint32_t w[4] = {0};
        int64_t at[KG_MAX_RANK] = {0}; /* the element's coordinates: their sum's parity is its colour */
        unsigned parity = 0;
        for (int64_t q = 0; q < t->numel; q++) {
            unsigned r; /* bit 0: up or down; bit 1: one ulp or two */
            if (checkerboard) {
                r = parity;
                for (int d = t->rank - 1; d >= 0; d--) { /* the next element's coordinates */
                    parity ^= 1;
                    if (++at[d] < t->dims[d]) break;
                    parity ^= (unsigned)(at[d] & 1); /* back to 0 from dims[d] */
                    at[d] = 0;
                }
            } else {
                if (q % 64 == 0) kg_philox(seed, 0x6e756467650000ull + (uint64_t)i, (uint64_t)q / 64, w);
                r = (w[q % 64 / 16] >> (q % 16 * 2)) & 3;
            }
            if (!isfinite(f[q]) || f[q] == 0) continue;
            for (unsigned n = 0; n < 1 + (r >> 1); n++) f[q] = nextafterf(f[q], r & 1 ? INFINITY : -INFINITY);
        }
    }
    return 0;
}

double kg_floor(enum kg_dtype t)
{
    return 8 * kg_dtype_eps(t);
}

bool kg_allclose(const struct kg_tensor *got, const struct kg_tensor *ref64, double rtol, double atol,
                 int64_t *first_bad)
{
    const double *r = ref64->data;
    for (int64_t i = 0; i < got->numel; i++) {
        double g = kg_load(got->dtype, got->data, i);
        bool ok;
        if (isinf(g) || isinf(r[i]))
            ok = g == r[i];
        else
            ok = fabs(g - r[i]) <= atol + rtol * fabs(r[i]); /* false for NaN */
        if (!ok) {
            if (first_bad) *first_bad = i;
            return false;
        }
    }
    return true;
}
