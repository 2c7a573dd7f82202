/* test_gdn_chunk.c: the host chunked GLR algorithm (gdn/chunk_host.c), forward and backward, in
 * fp64 and fp32, against the step-by-step fp64 oracle (gdn/oracle.c) for all five members, with
 * and without initial state and final-state gradient, and with T not a multiple of the chunk.
 * The fp64 path must agree to ~1e-10; the fp32 path within a measured relative RMS bound. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gdn/chunk_host.h"
#include "gdn/oracle.h"
#include "gdn/testutil.h"

// ---- deterministic inputs (as in test_gdn_oracle.c) ---------------------------------------------

static double *xalloc(int64_t n)
{
    double *p = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    assert_non_null(p);
    return p;
}

static float *xallocf(int64_t n)
{
    float *p = calloc((size_t)(n > 0 ? n : 1), sizeof(float));
    assert_non_null(p);
    return p;
}

/* Rounds x to fp32 in place and returns an fp32 copy (NULL for NULL), so that the fp32 path and
 * the oracle see identical inputs and only the algorithm's own rounding is measured. */
static float *to_f32(double *x, int64_t n)
{
    if (!x) return NULL;
    float *y = xallocf(n);
    for (int64_t i = 0; i < n; i++) {
        y[i] = (float)x[i];
        x[i] = y[i];
    }
    return y;
}

static void to_f64(const float *x, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[i];
}

struct prob {
    enum gdn_family f;
    struct gdn_dims d;
    int64_t nqk, nv, ng, nb, ns;
    double *q, *k, *v, *g, *b, *S0, *dO, *dST;
};

static void prob_init(struct prob *p, enum gdn_family f, struct gdn_dims d, bool with_S0, bool with_dST, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->d = d;
    int64_t rows = d.B * d.T * d.H;
    p->nqk = rows * d.K;
    p->nv = rows * d.V;
    p->ng = gdn_family_per_channel(f) ? rows * d.K : gdn_family_has_gate(f) ? rows : 0;
    p->nb = gdn_family_has_delta(f) ? rows : 0;
    p->ns = d.B * d.H * d.K * d.V;
    p->q = xalloc(p->nqk);
    p->k = xalloc(p->nqk);
    p->v = xalloc(p->nv);
    p->dO = xalloc(p->nv);
    uint64_t s = seed;
    for (int64_t i = 0; i < p->nqk; i++) {
        p->q[i] = rng_normal(&s);
        p->k[i] = rng_normal(&s);
    }
    /* Unit keys for every member: the delta rule needs them to be stable, and without decay
     * (linear attention) they keep the state O(sqrt(T)) so relative errors stay meaningful. */
    for (int64_t r = 0; r < rows; r++) {
        double n2 = 0;
        for (int64_t i = 0; i < d.K; i++) n2 += p->k[r * d.K + i] * p->k[r * d.K + i];
        for (int64_t i = 0; i < d.K; i++) p->k[r * d.K + i] /= sqrt(n2);
    }
    for (int64_t i = 0; i < p->nv; i++) {
        p->v[i] = rng_normal(&s);
        p->dO[i] = rng_normal(&s);
    }
    if (p->ng) {
        p->g = xalloc(p->ng);
        for (int64_t i = 0; i < p->ng; i++)
            p->g[i] = gdn_family_per_channel(f) ? -log1p(exp(-rng_normal(&s))) : -0.01 - 0.99 * rng_unif(&s);
    }
    if (p->nb) {
        p->b = xalloc(p->nb);
        for (int64_t i = 0; i < p->nb; i++) p->b[i] = 1.0 / (1.0 + exp(-rng_normal(&s)));
    }
    if (with_S0) {
        p->S0 = xalloc(p->ns);
        for (int64_t i = 0; i < p->ns; i++) p->S0[i] = 0.5 * rng_normal(&s);
    }
    if (with_dST) {
        p->dST = xalloc(p->ns);
        for (int64_t i = 0; i < p->ns; i++) p->dST[i] = rng_normal(&s);
    }
}

static void prob_free(struct prob *p)
{
    free(p->q), free(p->k), free(p->v), free(p->g), free(p->b), free(p->S0), free(p->dO);
    free(p->dST);
}

// ---- one comparison -----------------------------------------------------------------------------

/* Bounds. fp64: the chunked form reorders sums and replaces the step-by-step solve by the UT
 * transform; measured worst max-relative error over all outputs and cases 2.9e-15 (linear
 * 7.6e-16, gla 2.7e-15, ssd 2.9e-15, gdn 1.7e-15, kda 2.4e-15). fp32: measured worst relative
 * RMS 1.5e-6 (kda; gla 1.3e-6, gdn 9.8e-7, ssd 8.5e-7, linear 2.2e-7), the largest being dg
 * (fp32 log-gate cumsums); 2e-5 leaves >10x headroom for other compilers / libm, while every
 * planted bug tried (a dropped gradient term, a sign flip in the triangular solve) gives
 * errors above 1e-2. The measured values are printed per member when the test runs. */
#define TOL_F64     1e-10
#define TOL_F32_RMS 2e-5

struct worst {
    double f64, f32;
};

static struct worst worst_all[GDN_NFAMILIES];

enum { N_OUT = 8 };
static const char *const out_names[N_OUT] = {"o", "ST", "dq", "dk", "dv", "dg", "db", "dS0"};

/* Every output of the oracle (fp64, exact) or of a chunked run, as doubles. */
struct outs {
    double *x[N_OUT];
    int64_t n[N_OUT];
};

static void outs_alloc(struct outs *o, const struct prob *p)
{
    int64_t n[N_OUT] = {p->nv, p->ns, p->nqk, p->nqk, p->nv, p->ng, p->nb, p->ns};
    for (int i = 0; i < N_OUT; i++) {
        o->n[i] = n[i];
        o->x[i] = n[i] ? xalloc(n[i]) : NULL;
    }
}

static void outs_free(struct outs *o)
{
    for (int i = 0; i < N_OUT; i++) free(o->x[i]);
}

static void run_oracle(const struct prob *p, struct outs *r)
{
    struct gdn_in in = {p->q, p->k, p->v, p->g, p->b, p->S0};
    struct gdn_grad gr = {r->x[2], r->x[3], r->x[4], r->x[5], r->x[6], r->x[7]};
    assert_int_equal(gdn_oracle_fwd(p->f, GDN_EXACT, &p->d, NAN, &in, r->x[0], r->x[1]), 0);
    assert_int_equal(gdn_oracle_bwd(p->f, GDN_EXACT, &p->d, NAN, &in, p->dO, p->dST, &gr), 0);
}

static void run_chunk_f64(const struct prob *p, int64_t C, struct outs *r)
{
    struct gdn_in in = {p->q, p->k, p->v, p->g, p->b, p->S0};
    struct gdn_grad gr = {r->x[2], r->x[3], r->x[4], r->x[5], r->x[6], r->x[7]};
    assert_int_equal(gdn_chunk_fwd_f64(p->f, &p->d, C, NAN, &in, r->x[0], r->x[1]), 0);
    assert_int_equal(gdn_chunk_bwd_f64(p->f, &p->d, C, NAN, &in, p->dO, p->dST, &gr), 0);
}

/* Rounds p's inputs to fp32 (in place) and runs the fp32 chunked path. */
static void run_chunk_f32(struct prob *p, int64_t C, struct outs *r)
{
    float *q = to_f32(p->q, p->nqk), *k = to_f32(p->k, p->nqk), *v = to_f32(p->v, p->nv);
    float *g = to_f32(p->g, p->ng), *b = to_f32(p->b, p->nb), *S0 = to_f32(p->S0, p->ns);
    float *dO = to_f32(p->dO, p->nv), *dST = to_f32(p->dST, p->ns);
    float *y[N_OUT];
    for (int i = 0; i < N_OUT; i++) y[i] = r->n[i] ? xallocf(r->n[i]) : NULL;
    struct gdn_in_f32 in = {q, k, v, g, b, S0};
    struct gdn_grad_f32 gr = {y[2], y[3], y[4], y[5], y[6], y[7]};
    assert_int_equal(gdn_chunk_fwd_f32(p->f, &p->d, C, NAN, &in, y[0], y[1]), 0);
    assert_int_equal(gdn_chunk_bwd_f32(p->f, &p->d, C, NAN, &in, dO, dST, &gr), 0);
    for (int i = 0; i < N_OUT; i++) {
        if (r->n[i]) to_f64(y[i], r->x[i], r->n[i]);
        free(y[i]);
    }
    free(q), free(k), free(v), free(g), free(b), free(S0), free(dO), free(dST);
}

static void check(enum gdn_family f, struct gdn_dims d, int64_t C, bool with_S0, bool with_dST, uint64_t seed)
{
    struct prob p;
    prob_init(&p, f, d, with_S0, with_dST, seed);
    struct outs ref, got;
    outs_alloc(&ref, &p);
    outs_alloc(&got, &p);

    run_oracle(&p, &ref);
    run_chunk_f64(&p, C, &got);
    for (int i = 0; i < N_OUT; i++) {
        if (!ref.n[i]) continue;
        double e = rel_max(got.x[i], ref.x[i], ref.n[i]);
        if (!(e <= TOL_F64))
            print_error("%s f64 T=%lld C=%lld S0=%d dST=%d: %s rel err %.3g\n", gdn_family_name(f), (long long)d.T,
                        (long long)C, with_S0, with_dST, out_names[i], e);
        assert_true(e <= TOL_F64);
        worst_all[f].f64 = fmax(worst_all[f].f64, e);
    }

    run_chunk_f32(&p, C, &got); /* rounds p's inputs to fp32 */
    run_oracle(&p, &ref);       /* the exact answer for those rounded inputs */
    for (int i = 0; i < N_OUT; i++) {
        if (!ref.n[i]) continue;
        double e = rel_rms(got.x[i], ref.x[i], ref.n[i]);
        if (!(e <= TOL_F32_RMS))
            print_error("%s f32 T=%lld C=%lld S0=%d dST=%d: %s rel rms %.3g\n", gdn_family_name(f), (long long)d.T,
                        (long long)C, with_S0, with_dST, out_names[i], e);
        assert_true(e <= TOL_F32_RMS);
        worst_all[f].f32 = fmax(worst_all[f].f32, e);
    }
    outs_free(&ref);
    outs_free(&got);
    prob_free(&p);
}

/* The sweep per member: T not a multiple of C (37 / 16, 37 / 4, 130 / 64), an exact multiple
 * (64 / 16), one short chunk (5 / 64), and every combination of S0 and dST. */
static void check_family(enum gdn_family f)
{
    check(f, (struct gdn_dims){2, 37, 2, 8, 6}, 16, true, true, 100 + f);
    check(f, (struct gdn_dims){1, 37, 2, 8, 6}, 4, false, false, 200 + f);
    check(f, (struct gdn_dims){1, 130, 1, 16, 16}, 64, true, false, 300 + f);
    check(f, (struct gdn_dims){1, 64, 2, 8, 4}, 16, false, true, 400 + f);
    check(f, (struct gdn_dims){2, 5, 1, 4, 3}, 64, true, true, 500 + f);
    print_message("%-6s chunked vs oracle: f64 worst rel max %.2g, f32 worst rel rms %.2g\n", gdn_family_name(f),
                  worst_all[f].f64, worst_all[f].f32);
}

static void test_chunk_linear(void **state)
{
    check_family(GDN_LINEAR);
}
static void test_chunk_gla(void **state)
{
    check_family(GDN_GLA);
}
static void test_chunk_ssd(void **state)
{
    check_family(GDN_SSD);
}
static void test_chunk_gdn(void **state)
{
    check_family(GDN_GDN);
}
static void test_chunk_kda(void **state)
{
    check_family(GDN_KDA);
}

/* The chunk length is a blocking choice, not part of the answer: C = 1 (pure recurrence),
 * C = 3 and C >= T agree to rounding. */
static void test_chunk_length_does_not_change_result(void **state)
{
    struct gdn_dims d = {1, 11, 2, 4, 3};
    struct prob p;
    prob_init(&p, GDN_KDA, d, true, true, 7);
    struct gdn_in in = {p.q, p.k, p.v, p.g, p.b, p.S0};
    double *o1 = xalloc(p.nv), *o2 = xalloc(p.nv);
    assert_int_equal(gdn_chunk_fwd_f64(GDN_KDA, &d, 1, NAN, &in, o1, NULL), 0);
    int64_t Cs[] = {3, 11, 1000};
    for (size_t i = 0; i < sizeof Cs / sizeof Cs[0]; i++) {
        assert_int_equal(gdn_chunk_fwd_f64(GDN_KDA, &d, Cs[i], NAN, &in, o2, NULL), 0);
        double e = rel_max(o2, o1, p.nv);
        assert_true(e <= 1e-12);
    }
    free(o1), free(o2);
    prob_free(&p);
}

static void test_bad_arguments_rejected(void **state)
{
    struct gdn_dims d = {1, 4, 1, 2, 2};
    double x[8] = {0}, o[8];
    struct gdn_in in = {x, x, x, NULL, NULL, NULL};
    assert_int_equal(gdn_chunk_fwd_f64(GDN_LINEAR, &d, 2, NAN, &in, o, NULL), 0);
    assert_int_equal(gdn_chunk_fwd_f64(GDN_LINEAR, &d, 0, NAN, &in, o, NULL), GDN_EINVAL);
    assert_int_equal(gdn_chunk_fwd_f64(GDN_SSD, &d, 2, NAN, &in, o, NULL), GDN_EINVAL);
    in.g = x;
    assert_int_equal(gdn_chunk_fwd_f64(GDN_KDA, &d, 2, NAN, &in, o, NULL), GDN_EINVAL);
    assert_int_equal(gdn_chunk_fwd_f64((enum gdn_family)9, &d, 2, NAN, &in, o, NULL), GDN_EINVAL);
    struct gdn_grad gr = {NULL, o, o, NULL, NULL, NULL};
    assert_int_equal(gdn_chunk_bwd_f64(GDN_LINEAR, &d, 2, NAN, &in, x, NULL, &gr), GDN_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunk_linear),
        cmocka_unit_test(test_chunk_gla),
        cmocka_unit_test(test_chunk_ssd),
        cmocka_unit_test(test_chunk_gdn),
        cmocka_unit_test(test_chunk_kda),
        cmocka_unit_test(test_chunk_length_does_not_change_result),
        cmocka_unit_test(test_bad_arguments_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
