/* test_core.c: the pieces every verdict rests on: the counter-based generator is reproducible
 * and well distributed, dtype conversions round to nearest even, special values land where
 * they are recorded, and the comparison metric fails on NaN and non-finite mismatches. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/compare.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "engine/backend.h"
#include "base/dtype.h"
#include "kgate.h"
#include "base/rng.h"
#include "base/tensor.h"
#include "base/segment.h"
#include "base/parallel.h"
#include "base/ledger.h"
#include "base/memwatch.h"
#include "base/cache.h"
#include <sys/file.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static void test_rng_is_a_pure_function_of_seed_stream_index(void **state)
{
    double a = kg_rng_normal(7, 3, 12345), b = kg_rng_normal(7, 3, 12345);
    assert_true(a == b);
    assert_true(kg_rng_normal(8, 3, 12345) != a);
    assert_true(kg_rng_normal(7, 4, 12345) != a);
    assert_true(kg_rng_normal(7, 3, 12346) != a);
    /* a known value pins the algorithm across machines and versions */
    uint32_t w[4];
    kg_philox(0, 0, 0, w);
    assert_int_equal(w[0], 0x6627e8d5u);
    assert_int_equal(w[1], 0xe169c58du);
    assert_int_equal(w[2], 0xbc57ac4cu);
    assert_int_equal(w[3], 0x9b00dbd8u);
}

static void test_rng_moments(void **state)
{
    double s = 0, ss = 0, u = 0;
    int n = 200000;
    for (int i = 0; i < n; i++) {
        double x = kg_rng_normal(1, 1, (uint64_t)i);
        s += x;
        ss += x * x;
        double v = kg_rng_uniform(1, 2, (uint64_t)i);
        assert_true(v >= 0 && v < 1);
        u += v;
    }
    assert_true(fabs(s / n) < 0.01);
    assert_true(fabs(ss / n - 1) < 0.02);
    assert_true(fabs(u / n - 0.5) < 0.005);
}

static void test_f16_and_bf16_round_to_nearest_even(void **state)
{
    /* 1 + 2^-11 is halfway between f16 1.0 and 1 + 2^-10: ties to even gives 1.0 */
    assert_true(kg_round(KG_F16, 1.0 + 0x1p-11) == 1.0);
    assert_true(kg_round(KG_F16, 1.0 + 3 * 0x1p-11) == 1.0 + 0x1p-9);
    assert_true(kg_round(KG_F16, 65504) == 65504);
    assert_true(isinf(kg_round(KG_F16, 65520)));
    assert_true(kg_round(KG_F16, 0x1p-24) == 0x1p-24); /* smallest subnormal */
    assert_true(kg_round(KG_F16, 0x1p-26) == 0);
    assert_true(isnan(kg_round(KG_F16, NAN)));
    assert_true(kg_round(KG_BF16, 1.0 + 0x1p-8) == 1.0);
    assert_true(kg_round(KG_BF16, 1.0 + 3 * 0x1p-8) == 1.0 + 0x1p-6);
    assert_true(isnan(kg_round(KG_BF16, NAN)));
    assert_true(kg_round(KG_BF16, -0.0) == 0 && signbit(kg_round(KG_BF16, -0.0)));
    /* double -> f16 without double rounding through float */
    double v = 1.0 + 0x1p-11 + 0x1p-40; /* just above the tie: must round up */
    assert_true(kg_round(KG_F16, v) == 1.0 + 0x1p-10);
    /* every f16 bit pattern survives a round trip through float */
    for (uint32_t b = 0; b < 0x10000; b++) {
        kg_f16 h = {(uint16_t)b};
        float f = kg_f16_to_f32(h);
        if (f != f) continue;
        assert_int_equal(kg_f32_to_f16(f).bits, b);
    }
    assert_int_equal(kg_round(KG_I32, 2.5), 2);
    assert_int_equal(kg_round(KG_I32, 1e20), 2147483647);
    assert_int_equal(kg_round(KG_U8, -3), 0);
}

static struct kg_tensor f64(double *v, int n)
{
    struct kg_tensor t = {KG_F64, 1, {n}, n, v};
    return t;
}

static void test_compare_fails_on_nan_and_nonfinite_mismatch(void **state)
{
    double e[4] = {1, 2, NAN, INFINITY}, g[4] = {1, 2, NAN, INFINITY};
    struct kg_tensor te = f64(e, 4), tg = f64(g, 4);
    struct kg_cmp c;
    kg_compare(&tg, &te, kg_scale_of(&te), &c);
    assert_true(c.max_err == 0);
    assert_int_equal(c.nonfinite_mismatch, 0);
    g[2] = 3; /* NaN swallowed */
    kg_compare(&tg, &te, kg_scale_of(&te), &c);
    assert_true(isinf(c.max_err));
    assert_int_equal(c.nonfinite_mismatch, 1);
    assert_int_equal(c.worst, 2);
    g[2] = NAN;
    g[3] = -INFINITY; /* wrong kind */
    kg_compare(&tg, &te, kg_scale_of(&te), &c);
    assert_int_equal(c.worst, 3);
    g[3] = INFINITY;
    g[0] = NAN; /* a NaN where a number was expected */
    kg_compare(&tg, &te, kg_scale_of(&te), &c);
    assert_int_equal(c.worst, 0);
    assert_false(c.max_err <= 1e300);
}

/* The comparison's loop, specialised per dtype of got, against the plain definition (kg_elem_err
 * per element, the first maximum, the excused non-finites): same fields, bit for bit. */
static void test_compare_same_in_every_dtype(void **state)
{
    enum { N = 4099 };
    static double e[N], r[N];
    static unsigned char buf[N * 8];
    for (int i = 0; i < N; i++) {
        e[i] = sin(i * 0.37) * (i % 97 == 0 ? 1e4 : 3);
        r[i] = e[i];
    }
    e[5] = NAN;
    e[6] = INFINITY;
    r[7] = -INFINITY; /* the working precision overflows where the oracle does not: excused */
    r[9] = INFINITY;  /* but not when got is -Inf there */
    enum kg_dtype dts[] = {KG_F32, KG_F64, KG_BF16, KG_F16};
    for (int d = 0; d < 4; d++) {
        struct kg_tensor tg = {dts[d], 1, {N}, N, buf}, te = f64(e, N), tr = f64(r, N);
        for (int i = 0; i < N; i++) kg_store(dts[d], buf, i, e[i] + (i % 13) * 1e-3 * e[i]);
        kg_store(dts[d], buf, 5, 1.0);       /* NaN swallowed */
        kg_store(dts[d], buf, 7, -INFINITY); /* excused */
        kg_store(dts[d], buf, 9, -INFINITY); /* wrong kind of Inf */
        double s = kg_scale_of(&te);
        for (int cal = 0; cal < 2; cal++) {
            struct kg_cmp c;
            if (cal)
                kg_compare_calibrated(&tg, &te, &tr, s, &c);
            else
                kg_compare(&tg, &te, s, &c);
            double max = 0, num = 0, den = 0;
            int64_t worst = -1, mism = 0, nonf = 0, first_nonf = -1, exc = 0;
            for (int i = 0; i < N; i++) {
                double g = kg_load(dts[d], buf, i);
                if (cal && !isfinite(g) && isfinite(e[i]) && g == r[i]) {
                    exc++;
                    continue;
                }
                double er = kg_elem_err(g, e[i], s);
                mism += er > 0;
                if (isinf(er)) {
                    nonf++;
                    if (first_nonf < 0) first_nonf = i;
                }
                if (worst < 0 || er > max) {
                    max = er;
                    worst = i;
                }
                if (isfinite(g) && isfinite(e[i])) {
                    num += (g - e[i]) * (g - e[i]);
                    den += e[i] * e[i];
                }
            }
            assert_int_equal(c.nonfinite_mismatch, nonf);
            assert_int_equal(c.worst, first_nonf >= 0 ? first_nonf : worst);
            assert_int_equal(c.mismatches, mism);
            assert_int_equal(c.excused, exc);
            assert_int_equal(exc, cal ? 1 : 0);
            assert_true(c.rms_rel == sqrt(num / den));
            assert_true(isinf(c.max_err));
        }
    }
    (void)state;
}

static void test_element_error_is_scale_relative_near_zero(void **state)
{
    /* scale s = rms of the oracle; near zero the error is relative to s, not to |exp| */
    assert_true(kg_elem_err(1e-9, 0, 1.0) == 1e-9);
    assert_true(fabs(kg_elem_err(101, 100, 1.0) - 1.0 / 101) < 1e-15);
    assert_true(isinf(kg_elem_err(1, 0, 0)));
    assert_true(kg_elem_err(0, 0, 0) == 0);
    assert_true(isinf(kg_elem_err(NAN, 1, 1)));
}

static void test_allclose_is_the_standard_test(void **state)
{
    double r[3] = {1, 100, 0};
    float gv[3] = {1.019f, 100.9f, 0.0099f};
    struct kg_tensor ref = f64(r, 3), got = {KG_F32, 1, {3}, 3, gv};
    int64_t bad = -1;
    assert_true(kg_allclose(&got, &ref, 1e-2, 1e-2, &bad));
    gv[1] = 101.2f;
    assert_false(kg_allclose(&got, &ref, 1e-2, 1e-2, &bad));
    assert_int_equal(bad, 1);
    gv[1] = NAN;
    assert_false(kg_allclose(&got, &ref, 1e-2, 1e-2, &bad));
}

/* shape-specific needs a gross failure: a fragile algorithm's small error is not one */
static void test_gross_failure_bar(void **state)
{
    (void)state;
    struct kg_expect ex;
    struct kg_judgement j;
    char why[160];
    memset(&ex, 0, sizeof ex);
    memset(&j, 0, sizeof j);
    ex.nout = 1;
    ex.ref_err[0] = 2.9e-6;
    j.cmp[0].max_err = 6.1e-4; /* one-pass variance at N=2: 212x the reference, tiny */
    j.ratio = 212;
    assert_false(kg_gross_failure(&ex, &j, why, sizeof why));
    assert_non_null(strstr(why, "below the gross bar"));
    j.cmp[0].max_err = 0.898; /* a hard-coded row length: a tail left 0 */
    assert_true(kg_gross_failure(&ex, &j, why, sizeof why));
    ex.ref_err[0] = 4e-3; /* bf16: 0.2 is only 50x its reference */
    j.cmp[0].max_err = 0.2;
    assert_false(kg_gross_failure(&ex, &j, why, sizeof why));
    j.cmp[0].nonfinite_mismatch = 3;
    assert_true(kg_gross_failure(&ex, &j, why, sizeof why));
    j.cmp[0].nonfinite_mismatch = 0;
    j.unwritten[0] = 1;
    assert_true(kg_gross_failure(&ex, &j, why, sizeof why));
    assert_non_null(strstr(why, "unwritten"));
}

/* One candidate value against an expect of one output, the reference at refv: the judgement. */
static void judge_one(double exact, double refv, double got, struct kg_judgement *j)
{
    static double e[1], r[1], g[1];
    e[0] = exact;
    r[0] = refv;
    g[0] = got;
    struct kg_expect ex;
    struct kg_exec x;
    struct kg_case k;
    memset(&ex, 0, sizeof ex);
    memset(&x, 0, sizeof x);
    memset(&k, 0, sizeof k);
    ex.nout = 1;
    ex.exact[0] = f64(e, 1);
    ex.ref[0] = f64(r, 1);
    ex.scale[0] = kg_scale_of(&ex.exact[0]);
    ex.floor[0] = kg_floor(KG_F32);
    struct kg_cmp c;
    kg_compare(&ex.ref[0], &ex.exact[0], ex.scale[0], &c);
    ex.ref_err[0] = c.max_err;
    ex.threshold[0] = 2 * c.max_err + ex.floor[0];
    x.fill = KG_FILL_ZERO;
    x.after[0] = f64(g, 1);
    kg_judge(&k, &x, false, &ex, j);
}

/* An output the working-precision reference itself lost (a KL divergence of inputs shifted by 1e3,
 * measured on the H200: the fp32 reference off by 100%, an FMA-contracted kernel by 23x more) is
 * compared but judged neither way; a value that is non-finite, or 100x even that reference's
 * error, still fails; a reference that kept the answer judges as before. */
static void test_judge_leaves_outputs_the_reference_lost(void **state)
{
    (void)state;
    struct kg_judgement j;
    judge_one(0.0455444, 0.0, 1.0878156, &j); /* the reference's error 0.5 of the scale */
    assert_true(j.pass);
    assert_true(j.lost[0]);
    assert_int_equal(j.nlost, 1);
    assert_true(j.cmp[0].max_err > 11 && j.cmp[0].max_err < 12); /* still compared */
    judge_one(0.0455444, 0.0455444 * (1 + 1e-3), 1.0878156, &j);
    assert_false(j.pass);
    assert_int_equal(j.nlost, 0);
    judge_one(0.0455444, 0.0, NAN, &j);
    assert_false(j.pass);
    assert_false(j.lost[0]);
    judge_one(0.0455444, 0.0, 1e3, &j); /* 10^4 of the scale: past 100x the reference's 0.5 */
    assert_false(j.pass);
    assert_false(j.lost[0]);
}

/* A freed large block comes back for the next allocation of its size: zeroed when asked for by
 * kg_tensor_alloc, holding the source's bytes after kg_tensor_copy; a small one is not kept. */
static void test_tensor_pool_reuses_large_blocks(void **state)
{
    (void)state;
    int64_t big[2] = {1024, 2048}, small[1] = {16};
    struct kg_tensor a, b, c;
    assert_int_equal(kg_tensor_alloc(&a, KG_F32, 2, big), 0);
    memset(a.data, 0x5A, kg_tensor_bytes(&a));
    void *p = a.data;
    kg_tensor_free(&a);
    assert_null(a.data);
    assert_int_equal(kg_tensor_alloc(&b, KG_F32, 2, big), 0);
    assert_ptr_equal(b.data, p); /* the pool's block, not a fresh mapping */
    const uint8_t *bytes = b.data;
    size_t nonzero = 0;
    for (size_t i = 0; i < kg_tensor_bytes(&b); i++) nonzero += bytes[i] != 0;
    assert_int_equal(nonzero, 0);
    ((float *)b.data)[12345] = 3.5f;
    assert_int_equal(kg_tensor_copy(&c, &b), 0);
    assert_ptr_not_equal(c.data, b.data);
    assert_int_equal(c.numel, b.numel);
    assert_int_equal(memcmp(c.data, b.data, kg_tensor_bytes(&b)), 0);
    kg_tensor_free(&b);
    kg_tensor_free(&c);
    /* a block twice the size is not handed out for half of it */
    int64_t half[2] = {512, 2048};
    struct kg_tensor d;
    assert_int_equal(kg_tensor_alloc(&d, KG_F64, 2, big), 0);
    void *q = d.data;
    kg_tensor_free(&d);
    assert_int_equal(kg_tensor_alloc(&d, KG_F32, 2, half), 0);
    assert_ptr_not_equal(d.data, q);
    kg_tensor_free(&d);
    assert_int_equal(kg_tensor_alloc(&a, KG_F32, 1, small), 0);
    kg_tensor_free(&a);
}

/* A segment's notes of what it holds: exact regions and tags only, forgotten on request and
 * when pages are discarded; a kept segment that holds a tag is handed out first for it. */
static void test_segment_notes_what_it_holds(void **state)
{
    (void)state;
    struct kg_err e;
    struct kg_seg *a = kg_seg_get(KG_SEG_RUN, (uint64_t)3 << 20, 0, &e),
                  *b = kg_seg_get(KG_SEG_RUN, (uint64_t)3 << 20, 0, &e);
    assert_non_null(a);
    assert_non_null(b);
    assert_false(kg_seg_holds(a, 64, 4096, 7));
    kg_seg_hold(a, 64, 4096, 7);
    kg_seg_hold(a, 8192, 100, 0); /* no tag: nothing noted */
    assert_true(kg_seg_holds(a, 64, 4096, 7));
    assert_false(kg_seg_holds(a, 64, 4096, 8));
    assert_false(kg_seg_holds(a, 64, 4095, 7));
    assert_false(kg_seg_holds(a, 0, 4096, 7));
    assert_false(kg_seg_holds(a, 8192, 100, 0));
    kg_seg_forget(a);
    assert_false(kg_seg_holds(a, 64, 4096, 7));
    kg_seg_hold(a, 64, 4096, 7);
    kg_seg_discard(a, 1 << 20, 4096); /* pages elsewhere: still every note gone */
    assert_false(kg_seg_holds(a, 64, 4096, 7));
    kg_seg_hold(b, 64, 4096, 9);
    uint8_t *mb = b->mem;
    kg_seg_put(a); /* a first: without the tag, the first kept one of the size would come back */
    kg_seg_put(b);
    struct kg_seg *c = kg_seg_get(KG_SEG_RUN, (uint64_t)3 << 20, 9, &e);
    assert_ptr_equal(c->mem, mb);
    assert_true(kg_seg_holds(c, 64, 4096, 9));
    kg_seg_put(c);
}

/* kg_seg_touch faults in the pages of a new segment up to a length (resident afterwards, as
 * mincore sees the memfd's pages), not beyond, and leaves the bytes already there as they were. */
static void test_segment_touch_faults_pages_in(void **state)
{
    (void)state;
    struct kg_err e;
    struct kg_seg *g = kg_seg_get(KG_SEG_RUN, (uint64_t)40 << 20, 0, &e); /* no kept one this size */
    assert_non_null(g);
    assert_int_equal(g->touched, 0);
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    g->mem[5 * page + 7] = 0x42;
    const uint64_t len = (uint64_t)24 << 20;
    kg_seg_touch(g, len - 1);
    assert_true(g->touched >= len - 1);
    assert_int_equal(g->mem[5 * page + 7], 0x42);
    assert_int_equal(g->mem[6 * page], 0);
    size_t npages = g->size / page;
    unsigned char *in = malloc(npages);
    assert_non_null(in);
    assert_int_equal(mincore(g->mem, g->size, in), 0);
    size_t resident = 0;
    for (size_t i = 0; i < len / page; i++) resident += in[i] & 1;
    assert_int_equal(resident, len / page);
    for (size_t i = len / page + 1; i < npages; i++) assert_int_equal(in[i] & 1, 0);
    kg_seg_touch(g, 4096); /* below what is touched: nothing to do */
    assert_true(g->touched >= len - 1);
    free(in);
    kg_seg_put(g);
}

/* A child that reserves bytes in the ledger at path and writes the seconds it waited to fd. */
static pid_t reserver(const char *path, uint64_t bytes, int fd)
{
    pid_t pid = fork();
    if (pid) return pid;
    double waited = -1;
    struct kg_err e;
    if (kg_ledger_reserve(path, bytes, NULL, NULL, &waited, &e)) waited = -1;
    if (write(fd, &waited, sizeof waited) != (ssize_t)sizeof waited) _exit(1);
    pause(); /* the reservation lasts while this process does */
    _exit(0);
}

static double waited_of(int fd)
{
    double w = -2;
    assert_int_equal(read(fd, &w, sizeof w), (ssize_t)sizeof w);
    return w;
}

/* A fresh ledger of budget bytes at path, a mkstemp template. */
static void make_ledger(char *path, uint64_t budget)
{
    int tmp = mkstemp(path);
    assert_true(tmp >= 0);
    close(tmp);
    struct kg_err e;
    assert_int_equal(kg_ledger_create(path, budget, &e), 0);
}

/* The checks of an audit share the host through the ledger: a reservation that fits beside the
 * live ones starts at once, one that does not waits until a holder exits (no release needed),
 * and one larger than the whole budget runs when it is alone. */
static void test_ledger_shares_the_host(void **state)
{
    (void)state;
    char path[] = "/tmp/kgate-ledger-XXXXXX";
    make_ledger(path, 100);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t a = reserver(path, 70, p[1]);
    assert_true(waited_of(p[0]) < 0.19); /* alone */
    pid_t c = reserver(path, 30, p[1]);
    assert_true(waited_of(p[0]) < 0.19); /* 70 + 30 fit in 100 */
    pid_t b = reserver(path, 50, p[1]);  /* 70 + 30 + 50 do not: it waits for a or c */
    usleep(600 * 1000);
    kill(a, SIGKILL);
    waitpid(a, NULL, 0);
    double wb = waited_of(p[0]);
    assert_true(wb > 0.5 && wb < 2.0);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    kill(b, SIGKILL);
    waitpid(b, NULL, 0);
    pid_t d = reserver(path, 500, p[1]); /* more than the budget, alone: it runs */
    assert_true(waited_of(p[0]) < 0.19);
    kill(d, SIGKILL);
    waitpid(d, NULL, 0);
    close(p[0]);
    close(p[1]);
    unlink(path);
}

/* What an audit learns: the ledger keeps the most bytes per tensor byte it is told per runner
 * kind, and a running check that sets its reservation lower makes room for a waiting one at once
 * (the case kgate audit meets when its first checks reserved from the constant and the later
 * ones learned they need less). */
static void test_ledger_learns_and_resizes(void **state)
{
    (void)state;
    char path[] = "/tmp/kgate-ledger-XXXXXX";
    make_ledger(path, 100);
    struct kg_err e;
    assert_true(kg_ledger_learned(path, "torch") == 0);
    assert_int_equal(kg_ledger_learn(path, "torch", 6.5, &e), 0);
    assert_int_equal(kg_ledger_learn(path, "torch", 4.0, &e), 0); /* less: the most is kept */
    assert_int_equal(kg_ledger_learn(path, "cuda", 3.0, &e), 0);
    assert_int_equal(kg_ledger_learn(path, "torch", NAN, &e), 0); /* nothing to learn */
    assert_true(kg_ledger_learned(path, "torch") == 6.5);
    assert_true(kg_ledger_learned(path, "cuda") == 3.0);
    assert_true(kg_ledger_learned(path, "host") == 0);
    /* each runner's classes (run.c's host_class) are kinds of their own beside it: nine fit */
    const char *cls[] = {"host", "host/in", "host/io", "cuda/in", "cuda/io", "torch/in", "torch/io"};
    for (int i = 0; i < 7; i++) assert_int_equal(kg_ledger_learn(path, cls[i], 1.0 + i, &e), 0);
    for (int i = 0; i < 7; i++) assert_true(kg_ledger_learned(path, cls[i]) == 1.0 + i);
    assert_true(kg_ledger_learned(path, "torch") == 6.5);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t a = reserver(path, 90, p[1]);
    assert_true(waited_of(p[0]) < 0.19);
    pid_t b = reserver(path, 40, p[1]); /* 90 + 40 do not fit: it waits */
    usleep(400 * 1000);
    /* a resizes itself (the ledger is keyed by pid: this process stands in for it with a line
     * of its own, then a's line is rewritten by hand as a's resize would) */
    FILE *f = fopen(path, "r");
    char text[512] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    assert_non_null(strstr(text, "learned torch 6.5"));
    char line[64];
    snprintf(line, sizeof line, "%ld 90\n", (long)a);
    char *at = strstr(text, line);
    assert_non_null(at);
    at[strlen(line) - 3] = '5'; /* "PID 90" -> "PID 50", in place (b holds the file open) */
    f = fopen(path, "r+");
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    double wb = waited_of(p[0]); /* 50 + 40 fit now */
    assert_true(wb > 0.3 && wb < 1.5);
    assert_int_equal(kg_ledger_resize(path, 7, &e), 0); /* this process's own line, added */
    f = fopen(path, "r");
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    snprintf(line, sizeof line, "%ld 7\n", (long)getpid());
    assert_non_null(strstr(text, line));
    assert_non_null(strstr(text, "learned cuda 3")); /* learning survives every rewrite */
    kill(a, SIGKILL);
    kill(b, SIGKILL);
    waitpid(a, NULL, 0);
    waitpid(b, NULL, 0);
    close(p[0]);
    close(p[1]);
    unlink(path);
}

/* The check's memory as memwatch measures it: this process plus a tracked child that holds
 * 256 MiB it wrote; once untracked and gone, the child no longer counts, but the peak stays. */
static void test_memwatch_counts_tracked_workers(void **state)
{
    (void)state;
    assert_true(kg_memwatch_start(0.02));
    int p[2];
    assert_int_equal(pipe(p), 0);
    const size_t big = (size_t)256 << 20;
    pid_t c = fork();
    if (c == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed assertion leaves no child behind */
        char *m = malloc(big);
        if (!m) _exit(1);
        memset(m, 1, big);
        if (write(p[1], m + big / 2, 1) != 1) _exit(1); /* the bytes are used: the memset stays */
        pause();
        _exit(0);
    }
    char ok = 0;
    assert_int_equal(read(p[0], &ok, 1), 1);
    uint64_t self, shm, anon;
    assert_true(kg_proc_mem(getpid(), &self, &shm));
    assert_true(kg_proc_mem(c, &anon, &shm) && anon >= big);
    kg_memwatch_track(c);
    usleep(100 * 1000);
    const uint64_t peak = kg_memwatch_peak();
    assert_true(peak >= big + self / 2);
    kg_memwatch_untrack(c);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    assert_true(kg_memwatch_peak() >= peak);
    assert_false(kg_proc_mem(c, &anon, &shm)); /* gone */
    close(p[0]);
    close(p[1]);
}

/* A segment the pool does not keep gives its pages back even where another mapping of its memfd
 * (a worker's) outlives it: it is truncated to nothing (9 GiB: more than a pool fixed by
 * KGATE_SEG_POOL keeps, 8 GiB at most; sparse, so only the one page written is ever allocated). */
static void test_segment_dropped_gives_pages_back(void **state)
{
    (void)state;
    struct kg_err e;
    setenv("KGATE_SEG_POOL", "64", 1);
    kg_seg_pool_reset();
    struct kg_seg *g = kg_seg_get(KG_SEG_RUN, (uint64_t)9 << 30, 0, &e);
    assert_non_null(g);
    g->mem[12345] = 7;
    int other = dup(g->fd); /* the worker's side */
    assert_true(other >= 0);
    struct stat st;
    assert_int_equal(fstat(other, &st), 0);
    assert_true(st.st_size >= (off_t)9 << 30);
    assert_true(st.st_blocks > 0);
    kg_seg_put(g);
    assert_int_equal(fstat(other, &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_int_equal(st.st_blocks, 0);
    close(other);
    unsetenv("KGATE_SEG_POOL");
    kg_seg_pool_reset();
}

/* Byte 0 of g's memfd, read through the file: what a worker mapping it would see. */
static int seg_byte0(const struct kg_seg *g)
{
    uint8_t b = 0;
    return pread(g->fd, &b, 1, 0) == 1 ? b : -1;
}

/* Segments larger than the pool's floor (a real-size case's) are kept once the process has had
 * that much out at once, so the next gate finds its pages in place; and a segment made anew first
 * gives back what is kept, so what is kept and out never passes that peak. Sizes past the floor,
 * sparse: only the bytes written are allocated. */
static void test_segment_pool_keeps_what_was_out_at_once(void **state)
{
    (void)state;
    struct kg_err e;
    kg_seg_pool_reset();
    const uint64_t floor = kg_seg_pool_cap();
    const uint64_t sz = (floor / 2 + ((uint64_t)1 << 20)) & ~(((uint64_t)1 << 20) - 1);
    struct kg_seg *a = kg_seg_get(KG_SEG_RUN, sz, 0, &e), *b = kg_seg_get(KG_SEG_RUN, sz, 0, &e),
                  *c = kg_seg_get(KG_SEG_RUN, sz, 0, &e);
    assert_true(a && b && c);
    assert_true(kg_seg_pool_cap() >= 3 * sz); /* three out at once: past the floor */
    a->mem[0] = 0xA1;
    b->mem[0] = 0xB2;
    c->mem[0] = 0xC3;
    kg_seg_put(a);
    kg_seg_put(b);
    kg_seg_put(c);
    struct kg_seg *d = kg_seg_get(KG_SEG_RUN, sz, 0, &e), *d2 = kg_seg_get(KG_SEG_RUN, sz, 0, &e),
                  *d3 = kg_seg_get(KG_SEG_RUN, sz, 0, &e); /* all three were kept */
    assert_true(d && d2 && d3);
    assert_int_equal(seg_byte0(d) + seg_byte0(d2) + seg_byte0(d3), 0xA1 + 0xB2 + 0xC3);
    assert_true(seg_byte0(d) != seg_byte0(d2) && seg_byte0(d2) != seg_byte0(d3) && seg_byte0(d) != seg_byte0(d3));
    kg_seg_put(d2);
    kg_seg_put(d3);
    /* one four times as large matches none kept: the two kept are given back before it is made,
     * so the process holds d and it, never d, it and the two */
    struct kg_seg *big = kg_seg_get(KG_SEG_RUN, 4 * sz, 0, &e);
    assert_non_null(big);
    struct kg_seg *n = kg_seg_get(KG_SEG_RUN, sz, 0, &e);
    assert_non_null(n);
    assert_int_equal(seg_byte0(n), 0); /* new: the kept ones were truncated and closed */
    kg_seg_put(n);
    kg_seg_put(big);
    kg_seg_put(d);
    kg_seg_pool_reset();
}

/* A freed run segment comes back, its bytes in place, for a later run of about its size (not
 * for one more than twice smaller); the memfd behind it is the one mapped. */
static void test_segment_pool_reuses_segments(void **state)
{
    (void)state;
    struct kg_err e;
    struct kg_seg *a = kg_seg_get(KG_SEG_RUN, (uint64_t)3 << 20, 0, &e);
    assert_non_null(a);
    assert_true(a->size >= (uint64_t)3 << 20);
    memset(a->mem, 0x5A, a->size);
    uint8_t probe = 0;
    assert_int_equal(pread(a->fd, &probe, 1, 4096), 1);
    assert_int_equal(probe, 0x5A); /* the mapping is the memfd's: what a worker sees */
    struct kg_seg *b = kg_seg_get(KG_SEG_RUN, (uint64_t)3 << 20, 0, &e);
    assert_non_null(b);
    assert_ptr_not_equal(a, b); /* a held segment is never handed out twice */
    uint8_t *mem = a->mem;
    kg_seg_put(a);
    struct kg_seg *c = kg_seg_get(KG_SEG_RUN, (uint64_t)2 << 20, 0, &e);
    assert_ptr_equal(c->mem, mem);
    assert_int_equal(c->mem[12345], 0x5A); /* pages kept: no fault, no zeroing */
    kg_seg_put(c);
    struct kg_seg *d = kg_seg_get(KG_SEG_RUN, (uint64_t)1 << 20, 0, &e); /* under half: a new one */
    assert_ptr_not_equal(d->mem, mem);
    kg_seg_put(d);
    kg_seg_put(b);
    kg_seg_put(NULL);
    /* a segment an oracle wrote into never goes to a candidate's run */
    struct kg_seg *o = kg_seg_get(KG_SEG_ORACLE, (uint64_t)3 << 20, 0, &e);
    assert_non_null(o);
    uint8_t *omem = o->mem;
    kg_seg_put(o);
    struct kg_seg *r = kg_seg_get(KG_SEG_RUN, (uint64_t)3 << 20, 0, &e);
    assert_ptr_not_equal(r->mem, omem);
    kg_seg_put(r);
    o = kg_seg_get(KG_SEG_ORACLE, (uint64_t)3 << 20, 0, &e);
    assert_ptr_equal(o->mem, omem);
    kg_seg_put(o);
}

static void square_range(void *ctx, int64_t lo, int64_t hi)
{
    int64_t *v = ctx;
    for (int64_t i = lo; i < hi; i++) v[i] = i * i + 1;
}

/* The parallel loop covers every index exactly once, above and below its split size. */
static void test_parallel_for_covers_each_index_once(void **state)
{
    (void)state;
    const int64_t sizes[] = {0, 1, 1000, (1 << 20) * 3 + 7};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int64_t n = sizes[t];
        int64_t *v = calloc((size_t)n + 1, sizeof *v);
        assert_non_null(v);
        v[n] = -5;
        kg_parallel_for(n, KG_PARALLEL_GRAIN, square_range, v);
        for (int64_t i = 0; i < n; i++)
            if (v[i] != i * i + 1) fail_msg("index %lld of %lld", (long long)i, (long long)n);
        assert_int_equal(v[n], -5);
        free(v);
    }
    assert_true(kg_parallel_threads() >= 1 && kg_parallel_threads() <= 8);
}

/* The parallel copy copies every byte, of any size and alignment, and nothing past the end. */
static void test_memcpy_parallel_copies_every_byte(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 4095, ((size_t)16 << 20) - 1, ((size_t)16 << 20) * 3 + 7};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        size_t n = sizes[t];
        uint8_t *src = malloc(n + 3), *dst = malloc(n + 3);
        assert_non_null(src);
        assert_non_null(dst);
        for (size_t i = 0; i < n + 3; i++) {
            src[i] = (uint8_t)(i * 2654435761u >> 13);
            dst[i] = 0xEE;
        }
        kg_memcpy_parallel(dst + 1, src + 1, n); /* unaligned on both sides */
        assert_int_equal(dst[0], 0xEE);
        if (n) assert_memory_equal(dst + 1, src + 1, n);
        assert_int_equal(dst[n + 1], 0xEE);
        free(src);
        free(dst);
    }
}

/* The GPU's lock for cases past 2^31 elements is host-wide (KGATE_LOCK_DIR, else /tmp), one file
 * per CUDA_VISIBLE_DEVICES value; a take waits while another holder has it, for at most its
 * limit (then -1, having waited that long), and takes it at once when it is free. */
static bool stop_now(void *ud)
{
    return *(int *)ud != 0;
}

static void test_gpu_lock_is_host_wide_and_bounded(void **state)
{
    (void)state;
    char dir[] = "/tmp/kgate-lock-XXXXXX", path[256], want[300];
    assert_non_null(mkdtemp(dir));
    setenv("KGATE_LOCK_DIR", dir, 1);
    kg_gpu_lock_path("3", path, sizeof path);
    snprintf(want, sizeof want, "%s/kgate-limits-gpu-3.lock", dir);
    assert_string_equal(path, want);
    kg_gpu_lock_path(NULL, path, sizeof path);
    snprintf(want, sizeof want, "%s/kgate-limits-gpu-all.lock", dir);
    assert_string_equal(path, want);
    int holder = kg_gpu_lock_open("0"), taker = kg_gpu_lock_open("0");
    assert_true(holder >= 0 && taker >= 0);
    struct stat st;
    kg_gpu_lock_path("0", path, sizeof path);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666); /* other users' kgate share the GPU too */
    assert_int_equal(flock(holder, LOCK_EX), 0);
    double waited = -1;
    int stop = 0;
    assert_int_equal(kg_gpu_lock_take(taker, 0.3, stop_now, &stop, &waited), -1);
    assert_true(waited >= 0.3 && waited < 5);
    stop = 1; /* an interrupt ends the wait at once */
    assert_int_equal(kg_gpu_lock_take(taker, 60, stop_now, &stop, &waited), -1);
    assert_true(waited < 1);
    /* another device's lock is another file: free */
    int other = kg_gpu_lock_open("1");
    assert_int_equal(kg_gpu_lock_take(other, 0.3, NULL, NULL, &waited), 0);
    close(other);
    close(holder); /* releases it */
    assert_int_equal(kg_gpu_lock_take(taker, 0.3, NULL, NULL, &waited), 0);
    assert_true(waited < 0.3);
    close(taker);
    unsetenv("KGATE_LOCK_DIR");
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    assert_int_equal(system(rm), 0);
}

/* kg_session_sample_turn: a fake runner whose sample meets a full device fake_full times; at each
 * call the turn's lock must be held (another descriptor cannot take it), and while the session
 * waits for room a rival process must get the turn */
static int fake_full, fake_calls, fake_held_at_call;
static char fake_lock[300];

static int fake_sample(struct kg_session *s, bool candidate, const struct kg_case *k, const int64_t *idx, int n,
                       int nout, double *vals, struct kg_reply *rp, struct kg_err *e)
{
    (void)s, (void)candidate, (void)k, (void)idx, (void)n, (void)nout, (void)vals;
    fake_calls++;
    int other = open(fake_lock, O_RDWR);
    if (other >= 0 && flock(other, LOCK_EX | LOCK_NB) != 0) fake_held_at_call++;
    if (other >= 0) close(other);
    memset(rp, 0, sizeof *rp);
    if (fake_full-- > 0) {
        rp->status = KG_WS_EXCEPTION;
        snprintf(rp->msg, sizeof rp->msg, "OutOfMemoryError: CUDA out of memory");
        return kg_errf(e, "%s", rp->msg);
    }
    rp->status = KG_WS_OK;
    return 0;
}

static void test_sample_turn_gives_up_the_lock_while_waiting(void **state)
{
    (void)state;
    char dir[] = "/tmp/kgate-turn-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("KGATE_LOCK_DIR", dir, 1);
    setenv("KGATE_CHECKS_AT_ONCE", "3", 1); /* as under kgate audit: a full device is waited out */
    setenv("KGATE_DEVICE_WAIT", "1.5", 1);
    kg_gpu_lock_path("7", fake_lock, sizeof fake_lock);
    int fd = kg_gpu_lock_open("7");
    double waited;
    assert_int_equal(kg_gpu_lock_take(fd, 1, NULL, NULL, &waited), 0);
    /* a rival check: takes the turn as soon as it is free, holds it 0.2 s, says so */
    int pp[2];
    assert_int_equal(pipe(pp), 0);
    pid_t rival = fork();
    if (rival == 0) {
        int r = kg_gpu_lock_open("7");
        double w;
        char c = r >= 0 && kg_gpu_lock_take(r, 10, NULL, NULL, &w) == 0 ? 'y' : 'n';
        usleep(200000);
        if (write(pp[1], &c, 1) != 1) _exit(2);
        _exit(0);
    }
    close(pp[1]);
    static struct kg_backend fake;
    fake.name = fake.title = "fake";
    fake.sample = fake_sample;
    struct kg_session *s = calloc(1, sizeof *s);
    s->be = &fake;
    struct kg_case k;
    memset(&k, 0, sizeof k);
    int64_t idx[1] = {0};
    double vals[1];
    struct kg_reply rp;
    struct kg_err e;
    fake_full = 1, fake_calls = 0, fake_held_at_call = 0;
    assert_int_equal(kg_session_sample_turn(s, true, &k, idx, 1, 1, vals, fd, 10, &rp, &e), 0);
    assert_int_equal(fake_calls, 2);
    assert_int_equal(fake_held_at_call, 2); /* sent with the turn held, both times */
    char c = 0;
    assert_int_equal(read(pp[0], &c, 1), 1);
    assert_int_equal(c, 'y'); /* the rival had its turn during the wait */
    int st;
    waitpid(rival, &st, 0);
    assert_true(s->t_devwait >= 1.0);
    assert_int_equal(s->judge_broken[0], 0);
    /* full every time: the wait's budget is spent, the judge is broken (the gate errs, no verdict
     * on the kernel), and the call's error stands */
    fake_full = 100, fake_calls = 0;
    s->t_devwait = 0;
    assert_int_not_equal(kg_session_sample_turn(s, true, &k, idx, 1, 1, vals, fd, 10, &rp, &e), 0);
    assert_true(fake_calls >= 2 && fake_calls <= 4);
    assert_non_null(strstr(s->judge_broken, "the device ran out of memory"));
    close(pp[0]);
    close(fd);
    free(s);
    unsetenv("KGATE_LOCK_DIR");
    unsetenv("KGATE_CHECKS_AT_ONCE");
    unsetenv("KGATE_DEVICE_WAIT");
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    assert_int_equal(system(rm), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng_is_a_pure_function_of_seed_stream_index),
        cmocka_unit_test(test_tensor_pool_reuses_large_blocks),
        cmocka_unit_test(test_segment_pool_reuses_segments),
        cmocka_unit_test(test_segment_notes_what_it_holds),
        cmocka_unit_test(test_segment_touch_faults_pages_in),
        cmocka_unit_test(test_ledger_shares_the_host),
        cmocka_unit_test(test_ledger_learns_and_resizes),
        cmocka_unit_test(test_memwatch_counts_tracked_workers),
        cmocka_unit_test(test_segment_dropped_gives_pages_back),
        cmocka_unit_test(test_segment_pool_keeps_what_was_out_at_once),
        cmocka_unit_test(test_parallel_for_covers_each_index_once),
        cmocka_unit_test(test_memcpy_parallel_copies_every_byte),
        cmocka_unit_test(test_rng_moments),
        cmocka_unit_test(test_f16_and_bf16_round_to_nearest_even),
        cmocka_unit_test(test_compare_fails_on_nan_and_nonfinite_mismatch),
        cmocka_unit_test(test_compare_same_in_every_dtype),
        cmocka_unit_test(test_element_error_is_scale_relative_near_zero),
        cmocka_unit_test(test_allclose_is_the_standard_test),
        cmocka_unit_test(test_gross_failure_bar),
        cmocka_unit_test(test_judge_leaves_outputs_the_reference_lost),
        cmocka_unit_test(test_gpu_lock_is_host_wide_and_bounded),
        cmocka_unit_test(test_sample_turn_gives_up_the_lock_while_waiting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
