/* diagnose.c: what a calibrated failure is. A gate that saw a case fail asks here which cause
 * explains the error, and each cause is tested, not guessed: TF32 (the error goes away against
 * the oracle on inputs rounded or truncated to 10 mantissa bits, or when a torch candidate runs
 * with TF32 off), an fp16/bf16 accumulator (the error is of the size a simulated half-precision
 * accumulator gives, and grows with the reduction length as that one's does), an approximation
 * (small, systematic, not growing with the reduction length), an order-sensitive algorithm
 * (right on N(0,1) inputs, wrong on inputs made to cancel, with outputs that do not change with
 * the guard bytes around the buffers). Otherwise the gate's own cause. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/session.h"
#include "oracle/oracle.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* The error of the worst output of judgement j. */
static double worst_err(const struct kg_judgement *j)
{
    return j->cmp[j->worst].max_err;
}

int kg_reduce_symbol(const struct kg_session *s)
{
    const struct kg_contract *c = kg_session_contract(s);
    if (!c->has_op) return -1;
    for (int i = 0; i < c->nargs; i++)
        if (kg_arg_is_input(&c->args[i])) {
            struct kg_shape sh = {.rank = c->args[i].rank};
            struct kg_err e;
            for (int d = 0; d < sh.rank; d++)
                if (kg_expr_eval(c->args[i].dims[d], c->nominal, &sh.dims[d], &e)) return -1;
            int ax = kg_op_reduce_axis(&c->op, &sh);
            if (ax < 0 || ax >= c->args[i].rank) return -1;
            return kg_expr_symbol(c->args[i].dims[ax]);
        }
    return -1;
}

/* ---- results held in half precision ------------------------------------------------------- */

/* An fp32 output whose every finite nonzero value is a bf16 (or fp16) number, where the fp32
 * reference's mostly are not, was rounded to that dtype: a fact of the bits, not a fit of the
 * error's size. At least 64 such values, so that chance (a bf16 number among fp32 results is
 * one in 2^16) cannot; and nine in ten of them within 8 of that dtype's epsilons of the
 * reference, as a rounded result is: a wrong formula's constant outputs (softmax over an axis of
 * length 1 gives 1.0 everywhere) are bf16 numbers too. */
static bool diagnose_half_output(const struct kg_case *k, const struct kg_exec *x, const struct kg_expect *ex,
                                 const struct kg_judgement *j, struct kg_verdict *v)
{
    int o = j->worst;
    if (k->adtype[ex->arg[o]] != KG_F32 || !ex->ref[o].data) return false;
    const struct kg_tensor *got = &x->after[ex->arg[o]];
    const double *ref = ex->ref[o].data;
    static const enum kg_dtype half[2] = {KG_BF16, KG_F16};
    static const enum kg_cause causes[2] = {KG_CAUSE_BF16_COMPUTE, KG_CAUSE_FP16_COMPUTE};
    static const char *const names[2] = {"bfloat16", "float16"};
    for (int h = 0; h < 2; h++) {
        int64_t n = 0, in_half = 0, near = 0, ref_n = 0, ref_half = 0;
        const double tol = 8 * kg_dtype_eps(half[h]);
        for (int64_t i = 0; i < got->numel; i++) {
            double g = kg_load(got->dtype, got->data, i), r = ref[i];
            if (isfinite(g) && g != 0) n++, in_half += kg_round(half[h], g) == g, near += fabs(g - r) <= tol * fabs(r);
            if (isfinite(r) && r != 0) ref_n++, ref_half += kg_round(half[h], r) == r;
        }
        if (n < 64 || in_half != n || ref_half * 2 > ref_n || near * 10 < n * 9) continue;
        kg_verdict_cause(v, causes[h],
                         "every one of the %lld nonzero outputs is a %s number, where %lld of the fp32 reference's "
                         "%lld are: the result was computed or stored in %s",
                         (long long)n, names[h], (long long)ref_half, (long long)ref_n, names[h]);
        return true;
    }
    return false;
}

/* ---- TF32 --------------------------------------------------------------------------------- */

/* Whether run x is within the fp32 threshold of the oracle on inputs cut to TF32 (then the
 * whole error is TF32's), or nearly so: its error there at most TF32_REST times the threshold and
 * a tenth of what it is against the true oracle (tensor cores round their fp32 accumulation
 * differently from the reference, so K = 4096 leaves a few thresholds of error after the inputs'
 * rounding is taken out). Within the threshold counts only where the TF32 oracle takes away at
 * least half the error: where TF32's rounding hardly moves the result (a LayerNorm over two
 * values is +-1 whatever the inputs' last bits), a kernel just over the threshold is also just
 * under it against that oracle by chance (seen: a one-pass variance at 1.17 thresholds, 0.76
 * against TF32's, called TF32). *margin: err / threshold there. */
#define TF32_REST 8.0
static bool tf32_inputs_explain(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                                const struct kg_exec *x, const struct kg_expect *ex, double err, bool truncate,
                                double *margin)
{
    struct kg_inputs r;
    bool ok = false;
    if (kg_inputs_tf32(in, truncate, &r)) return false;
    struct kg_expect ex2;
    struct kg_err e;
    if (kg_expect_for_judge(s, k, &r, &ex2, &e)) goto out;
    for (int o = 0; o < ex2.nout; o++) ex2.threshold[o] = ex->threshold[o]; /* fp32 noise, as given */
    struct kg_judgement j2;
    kg_judge(k, x, false, &ex2, &j2);
    double rest = j2.cmp[j2.worst].max_err;
    ok = (j2.pass && rest <= err / 2) || (j2.margin <= TF32_REST && rest <= err / 10);
    *margin = j2.margin;
    kg_expect_free(&ex2);
out:
    kg_inputs_free(&r);
    return ok;
}

/* Inputs with 10-bit mantissas are TF32's or fp16's; their ranges tell them apart. Whether the
 * candidate, on in scaled by 2^16 (exact in fp32), gives inf or NaN where the oracle and the
 * fp32 reference are finite: fp16 overflows at 65504, TF32 keeps fp32's range. *n: how many. */
static bool overflows_fp16(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, int64_t *n)
{
    struct kg_inputs r;
    bool yes = false;
    *n = 0;
    if (kg_inputs_scaled(in, 65536.0, &r)) return false;
    struct kg_expect ex2;
    struct kg_err e;
    if (kg_expect_compute(s, k, &r, &ex2, &e) == 0) {
        struct kg_exec y;
        struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5};
        kg_exec(s, k, &r, &o, &y);
        for (int q = 0; y.status == KG_WS_OK && q < ex2.nout; q++) {
            const struct kg_tensor *got = &y.after[ex2.arg[q]];
            const double *xe = ex2.exact[q].data, *xr = ex2.ref[q].data;
            for (int64_t i = 0; i < got->numel; i++)
                if (isfinite(xe[i]) && (!xr || isfinite(xr[i])) && fabs(xe[i]) < 1e30 &&
                    !isfinite(kg_load(got->dtype, got->data, i)))
                    (*n)++;
        }
        yes = *n > 0;
        kg_exec_free(&y);
        kg_expect_free(&ex2);
    }
    kg_inputs_free(&r);
    return yes;
}

static bool diagnose_tf32(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                          const struct kg_exec *x, const struct kg_expect *ex, const struct kg_judgement *j,
                          struct kg_verdict *v)
{
    if (k->adtype[ex->arg[j->worst]] != KG_F32 || !isfinite(worst_err(j))) return false;
    double ratio = j->ratio, m;
    int64_t nover;
    for (int t = 0; t < 2; t++)
        if (tf32_inputs_explain(s, k, in, x, ex, worst_err(j), t == 1, &m)) {
            if (overflows_fp16(s, k, in, &nover)) {
                kg_verdict_cause(v, KG_CAUSE_FP16_COMPUTE,
                                 "%.3gx the fp32 reference's error, but %s (%.2g of the threshold) of the oracle on "
                                 "inputs %s to 10 mantissa bits; with the inputs x65536 it gives inf at %lld "
                                 "positions where the oracle is finite: fp16's range, not TF32's",
                                 ratio, m <= 1 ? "within fp32 noise" : "within a few thresholds", m,
                                 t ? "truncated" : "rounded", (long long)nover);
                v->cause_of = NULL;
                return true;
            }
            kg_verdict_cause(v, KG_CAUSE_TF32,
                             "%.3gx the fp32 reference's error, but %s (%.2g of the threshold) of the oracle on "
                             "inputs %s to TF32's 10 mantissa bits",
                             ratio, m <= 1 ? "within fp32 noise" : "within a few thresholds", m,
                             t ? "truncated" : "rounded");
            v->cause_of = NULL;
            return true;
        }
    if (!kg_session_can(s, KG_CAP_TF32_SWITCH)) return false;
    struct kg_exec y;
    struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .flags = KG_RUN_NO_TF32};
    kg_exec(s, k, in, &o, &y);
    bool ok = false;
    if (y.status == KG_WS_OK) {
        struct kg_judgement j2;
        kg_judge(k, &y, false, ex, &j2);
        if (j2.pass) {
            kg_verdict_cause(v, KG_CAUSE_TF32,
                             "%.3gx the fp32 reference's error with TF32 as the candidate has it; re-run with TF32 "
                             "off (torch.backends.cuda.matmul.allow_tf32 and cudnn.allow_tf32 False): %.2gx, "
                             "within the threshold",
                             ratio, j2.ratio);
            ok = true;
        }
    }
    kg_exec_free(&y);
    return ok;
}

/* ---- fp16 / bf16 accumulation ------------------------------------------------------------- */

/* The error vs the oracle of the op evaluated with an fp16 or bf16 accumulator (outputs rounded
 * to their dtypes), of the worst output o; NaN when the op cannot be simulated. *same: the
 * candidate's non-finite values are the simulation's (same positions and kinds). */
static double lowacc_err(const struct kg_case *k, const struct kg_inputs *in, const struct kg_exec *x,
                         const struct kg_expect *ex, int o, enum kg_arith mode, bool *same)
{
    const struct kg_contract *c = k->c;
    *same = false;
    if (!c->has_op || !(c->op.def->flags & KG_OP_LOWACC)) return NAN;
    struct kg_tensor in64[KG_OP_MAX_IO], out[KG_OP_MAX_IO];
    const struct kg_tensor *ins[KG_OP_MAX_IO];
    struct kg_tensor *outs[KG_OP_MAX_IO];
    int nin = 0, nout = 0;
    struct kg_err e;
    double r = NAN;
    memset(out, 0, sizeof out);
    if (kg_inputs_to_f64(k, in, in64, &nin, &e)) return NAN;
    for (int q = 0; q < nin; q++) ins[q] = &in64[q];
    for (; nout < ex->nout; nout++) {
        const struct kg_shape *sh = &k->shape[ex->arg[nout]];
        if (kg_tensor_alloc(&out[nout], KG_F64, sh->rank, sh->dims)) goto done;
        outs[nout] = &out[nout];
    }
    if (kg_op_eval(&c->op, mode, ins, outs, &e)) goto done;
    enum kg_dtype t = k->adtype[ex->arg[o]];
    double *d = out[o].data;
    for (int64_t i = 0; i < out[o].numel; i++) d[i] = kg_round(t, d[i]);
    struct kg_cmp cmp;
    kg_compare(&out[o], &ex->exact[o], ex->scale[o], &cmp);
    r = cmp.max_err;
    /* the non-finite pattern: an fp16 accumulator overflows at 65504 where fp32 does not */
    const struct kg_tensor *got = &x->after[ex->arg[o]];
    bool eq = cmp.nonfinite_mismatch > 0;
    for (int64_t i = 0; eq && i < got->numel; i++) {
        double g = kg_load(got->dtype, got->data, i);
        if (isfinite(g) != isfinite(d[i]) || (!isfinite(g) && !(isnan(g) ? isnan(d[i]) : g == d[i]))) eq = false;
    }
    *same = eq;
done:
    for (int q = 0; q < nin; q++) kg_tensor_free(&in64[q]);
    for (int q = 0; q < nout; q++) kg_tensor_free(&out[q]);
    return r;
}

/* The error of the exact result rounded to dtype t: the least error an accumulator of that
 * dtype can have, since the sum is held in it at least once. */
static double rounding_err(const struct kg_expect *ex, int o, enum kg_dtype t)
{
    struct kg_tensor r;
    if (kg_tensor_alloc(&r, KG_F64, ex->exact[o].rank, ex->exact[o].dims)) return NAN;
    const double *x = ex->exact[o].data;
    double *d = r.data;
    for (int64_t i = 0; i < r.numel; i++) d[i] = kg_round(t, x[i]);
    struct kg_cmp cmp;
    kg_compare(&r, &ex->exact[o], ex->scale[o], &cmp);
    kg_tensor_free(&r);
    return cmp.max_err;
}

/* The same measurements at the reduction length / 8 (same dtype, seed, distribution): the
 * candidate's error and the simulation's. -1 when there is no such shorter case or it did not
 * run. */
struct shorter {
    double err, sim[2];
};

static int measure_shorter(struct kg_session *s, const struct kg_case *k, struct shorter *out)
{
    int rs = kg_reduce_symbol(s);
    if (rs < 0 || k->sym[rs] < 64) return -1;
    int64_t sym[KG_MAX_SYMS];
    memcpy(sym, k->sym, sizeof sym);
    sym[rs] = k->sym[rs] / 8;
    struct kg_case k2;
    struct kg_err e;
    if (kg_case_init(&k2, k->c, sym, k->dtype, k->seed, k->dist, &e)) return -1;
    struct kg_verdict scratch;
    kg_verdict_init(&scratch, NULL);
    struct kg_judgement j;
    struct kg_expect ex;
    struct kg_exec x;
    if (kg_check_case(s, &k2, NULL, &j, &ex, &x, &scratch)) return -1;
    if (kg_expect_values(s, &ex, &e)) {
        kg_expect_free(&ex);
        kg_exec_free(&x);
        return -1;
    }
    struct kg_inputs in;
    int rc = -1;
    if (!kg_session_inputs(s, &k2, &in, &e)) {
        bool same;
        out->err = worst_err(&j);
        out->sim[0] = lowacc_err(&k2, &in, &x, &ex, j.worst, KG_WACC16, &same);
        out->sim[1] = lowacc_err(&k2, &in, &x, &ex, j.worst, KG_WACCBF16, &same);
        kg_inputs_free(&in);
        rc = 0;
    }
    kg_expect_free(&ex);
    kg_exec_free(&x);
    return rc;
}

/* The nominal N(0,1) case, run once more for a consistency check: whether the kernel passes
 * it, and what each simulated accumulator's error (sim) and the threshold (thr) of output o are
 * there. -1 when it cannot run (then nothing is ruled out). */
struct at_nominal {
    bool pass;
    double sim[2], thr;
};

static int measure_nominal(struct kg_session *s, enum kg_dtype dtype, int o, struct at_nominal *out)
{
    struct kg_case k;
    struct kg_err e;
    if (kg_nominal_case(s, dtype, 0, KG_DIST_NORMAL, &k, &e)) return -1;
    struct kg_verdict scratch;
    kg_verdict_init(&scratch, NULL);
    struct kg_judgement j;
    struct kg_expect ex;
    struct kg_exec x;
    if (kg_check_case(s, &k, NULL, &j, &ex, &x, &scratch)) return -1;
    if (kg_expect_values(s, &ex, &e)) {
        kg_expect_free(&ex);
        kg_exec_free(&x);
        return -1;
    }
    struct kg_inputs in;
    int rc = -1;
    if (o < ex.nout && !kg_session_inputs(s, &k, &in, &e)) {
        bool same;
        out->pass = j.pass;
        out->thr = ex.threshold[o];
        out->sim[0] = lowacc_err(&k, &in, &x, &ex, o, KG_WACC16, &same);
        out->sim[1] = lowacc_err(&k, &in, &x, &ex, o, KG_WACCBF16, &same);
        kg_inputs_free(&in);
        rc = 0;
    }
    kg_expect_free(&ex);
    kg_exec_free(&x);
    return rc;
}

static bool elementwise_shaped(const struct kg_case *k, const struct kg_expect *ex);

/* Positions of output o of run x that are infinite (or NaN) where the oracle and the fp32
 * reference are finite and the oracle is well inside fp16's range; *top: the largest |oracle|. */
static int64_t half_overflows(const struct kg_case *k, const struct kg_exec *x, const struct kg_expect *ex, int o,
                              double *top)
{
    const struct kg_tensor *got = &x->after[ex->arg[o]];
    const double *xe = ex->exact[o].data, *xr = ex->ref[o].data;
    int64_t n = 0;
    *top = 0;
    (void)k;
    for (int64_t i = 0; i < got->numel; i++) {
        if (!isfinite(xe[i]) || (xr && !isfinite(xr[i]))) return 0; /* the reference overflows too: no evidence */
        if (fabs(xe[i]) > *top) *top = fabs(xe[i]);
        if (!isfinite(kg_load(got->dtype, got->data, i))) n++;
    }
    return *top < 65504.0 / 16 ? n : 0;
}

/* An op kgate cannot simulate (a problem's Model): a reduction whose fp32 result is inf where
 * the exact one is finite and far inside fp16's range, on inputs of a large common mean (1e3 +
 * N(0,1): the partial sums pass 65504 long before the outputs do), holds a sum in fp16. Run on
 * the case itself when it has such inputs (the precision gate's), else on the nominal shape. */
static bool diagnose_half_overflow(struct kg_session *s, const struct kg_case *k, const struct kg_exec *x,
                                   const struct kg_expect *ex, const struct kg_judgement *j, struct kg_verdict *v)
{
    int o = j->worst;
    if (k->adtype[ex->arg[o]] != KG_F32 || elementwise_shaped(k, ex)) return false;
    double top;
    int64_t n;
    if (k->dist == KG_DIST_LARGE_MEAN) {
        n = half_overflows(k, x, ex, o, &top);
    } else {
        struct kg_case k2;
        struct kg_err e;
        if (kg_nominal_case(s, k->dtype, 0, KG_DIST_LARGE_MEAN, &k2, &e)) return false;
        struct kg_verdict scratch;
        kg_verdict_init(&scratch, NULL);
        struct kg_judgement j2;
        struct kg_expect ex2;
        struct kg_exec x2;
        if (kg_check_case(s, &k2, NULL, &j2, &ex2, &x2, &scratch)) return false;
        if (kg_expect_values(s, &ex2, &e)) {
            kg_expect_free(&ex2);
            kg_exec_free(&x2);
            return false;
        }
        n = o < ex2.nout ? half_overflows(&k2, &x2, &ex2, o, &top) : 0;
        kg_expect_free(&ex2);
        kg_exec_free(&x2);
    }
    if (!n) return false;
    kg_verdict_cause(v, KG_CAUSE_FP16_ACCUMULATION,
                     "on 1e3 + N(0,1) inputs %lld outputs are infinite where the fp32 reference is finite and no "
                     "exact output exceeds %.4g: a partial sum passed fp16's 65504",
                     (long long)n, top);
    return true;
}

static bool diagnose_lowacc(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                            const struct kg_exec *x, const struct kg_expect *ex, const struct kg_judgement *j,
                            bool nominal, bool *ruled_out, struct shorter *sh, int *have_sh, struct kg_verdict *v)
{
    static const enum kg_arith modes[2] = {KG_WACC16, KG_WACCBF16};
    static const enum kg_dtype acc_t[2] = {KG_F16, KG_BF16};
    static const enum kg_cause causes[2] = {KG_CAUSE_FP16_ACCUMULATION, KG_CAUSE_BF16_ACCUMULATION};
    static const char *const names[2] = {"fp16", "bf16"};
    double err = worst_err(j), sim[2], lower[2];
    bool same[2], fits[2];
    int o = j->worst;
    for (int m = 0; m < 2; m++) {
        sim[m] = lowacc_err(k, in, x, ex, o, modes[m], &same[m]);
        lower[m] = rounding_err(ex, o, acc_t[m]);
        /* "of its size": within 4x of the simulation either way (a pairwise half-precision sum
         * errs less than the sequential one simulated, but not by orders of magnitude) */
        fits[m] = same[m] || (isfinite(err) && isfinite(sim[m]) && sim[m] > 0 && err >= lower[m] / 2 &&
                              err >= sim[m] / 4 && err <= 4 * sim[m] && err > ex->ref_err[o]);
    }
    if (isnan(sim[0]) && isnan(sim[1])) return diagnose_half_overflow(s, k, x, ex, j, v);
    if (!fits[0] && !fits[1]) return false;
    /* Consistency with the nominal case: a kernel that passes it cannot hold its sums in an
     * accumulator that already fails it there. The simulation is carried over at the ratio the
     * kernel's error bears to it here (at most 1: a pairwise half-precision sum errs less than
     * the sequential one simulated). */
    struct at_nominal an;
    if (!nominal && measure_nominal(s, k->dtype, o, &an) == 0 && an.pass)
        for (int q = 0; q < 2; q++)
            if (fits[q] && !same[q] && sim[q] > 0 && an.sim[q] * fmin(1, err / sim[q]) > an.thr) fits[q] = false;
    if (!fits[0] && !fits[1]) {
        *ruled_out = true;
        return false;
    }
    int m = fits[0] && fits[1] ? (fabs(log(err / sim[0])) <= fabs(log(err / sim[1])) ? 0 : 1) : fits[0] ? 0 : 1;
    if (same[m]) {
        kg_verdict_cause(v, causes[m],
                         "the non-finite outputs are those of a simulated %s accumulator (it overflows where the "
                         "fp32 reference does not)",
                         names[m]);
        return true;
    }
    if (*have_sh == 0) *have_sh = measure_shorter(s, k, sh) == 0 ? 1 : -1;
    if (*have_sh > 0 && sh->err > 0 && sh->sim[m] > 0) {
        double gc = err / sh->err, gs = sim[m] / sh->sim[m];
        if (!(gc >= 1.5 && fabs(log(gc / gs)) <= log(4.0))) return false;
        kg_verdict_cause(v, causes[m],
                         "error %.2g, a simulated %s accumulator's %.2g; with the reduction 8x shorter %.2g and %.2g: "
                         "it grows %.2gx as %s's does (%.2gx)",
                         err, names[m], sim[m], sh->err, sh->sim[m], gc, names[m], gs);
        return true;
    }
    /* the size alone is weaker evidence: within 2x of the simulation */
    if (!(err >= sim[m] / 2 && err <= 2 * sim[m])) return false;
    kg_verdict_cause(v, causes[m],
                     "error %.2g, within 2x of a simulated %s accumulator's (%.2g; rounding to %s alone gives "
                     "%.2g); growth with the reduction length not measured",
                     err, names[m], sim[m], names[m], lower[m]);
    return true;
}

/* ---- approximation ------------------------------------------------------------------------ */

/* No reduction is involved: a built-in elementwise op, or (a problem's Model, whose op kgate
 * does not know) every output has as many elements as the first input. */
static bool elementwise_shaped(const struct kg_case *k, const struct kg_expect *ex)
{
    const struct kg_contract *c = k->c;
    if (c->has_op) return (c->op.def->flags & KG_OP_ELEMENTWISE) != 0;
    for (int i = 0; i < c->nargs; i++)
        if (kg_arg_is_input(&c->args[i]) && c->args[i].kind == KG_ARG_TENSOR) {
            for (int o = 0; o < ex->nout; o++)
                if (k->numel[ex->arg[o]] != k->numel[i]) return false;
            return true;
        }
    return false;
}

/* Whether case k run again on the same inputs, its buffers' guards filled with guard, gives run
 * x's outputs bit for bit. */
static bool same_as_rerun(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                          const struct kg_exec *x, uint8_t guard)
{
    struct kg_exec y;
    struct kg_exec_opts o = {.fill = x->fill, .guard_byte = guard};
    kg_exec(s, k, in, &o, &y);
    bool same = y.status == KG_WS_OK;
    for (int i = 0; i < k->c->nargs && same; i++)
        if (kg_arg_is_output(&k->c->args[i]))
            same = y.after[i].data && x->after[i].data &&
                   !memcmp(y.after[i].data, x->after[i].data, kg_tensor_bytes(&x->after[i]));
    kg_exec_free(&y);
    return same;
}

/* Whether run x's outputs repeat: a formula gives the same error every run, noise does not. */
static bool repeats(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, const struct kg_exec *x)
{
    return !kg_session_nondeterministic(s) && same_as_rerun(s, k, in, x, x->guard_byte);
}

static bool nominal_passes(struct kg_session *s, enum kg_dtype dtype, double *margin);

/* The nominal N(0,1) case's result, run at most once per diagnosis (have: 0 not yet, 1 run) */
struct nominal_run {
    int have;
    bool pass;
    double margin; /* err / threshold there; 0 when the case could not run */
};

static bool nominal_once(struct kg_session *s, enum kg_dtype dtype, struct nominal_run *nr, double *margin)
{
    if (!nr->have) nr->pass = nominal_passes(s, dtype, &nr->margin), nr->have = 1;
    *margin = nr->margin;
    return nr->pass;
}

/* How many times its N(0,1) error (in thresholds) a kernel's error on inputs that stress
 * magnitudes must be to be called cancellation's rather than a formula's */
#define MAGNITUDE_GROWTH 8.0

static bool diagnose_approximation(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                                   const struct kg_exec *x, const struct kg_expect *ex, const struct kg_judgement *j,
                                   bool nominal, struct shorter *sh, int *have_sh, struct nominal_run *nr,
                                   struct kg_verdict *v)
{
    double err = worst_err(j);
    int o = j->worst;
    /* small: a fast-math exp or a tanh GELU is off by ~1e-3 at most, a wrong formula by more */
    if (!isfinite(err) || err > 1e-2) return false;
    const struct kg_tensor *got = &x->after[ex->arg[o]];
    const double *xe = ex->exact[o].data;
    int64_t over = 0;
    for (int64_t i = 0; i < got->numel; i++)
        if (!(kg_elem_err(kg_load(got->dtype, got->data, i), xe[i], ex->scale[o]) <= ex->threshold[o])) over++;
    /* systematic: not a few unlucky elements but a share of all of them */
    if (over * 100 < got->numel || over < 2) return false;
    /* and repeatable: a formula gives the same error every run, noise does not */
    if (!repeats(s, k, in, x)) return false;
    /* and not only on inputs made to stress magnitudes: an approximate exp or erf errs on N(0,1)
     * inputs too, so a kernel right there and wrong on large or mixed magnitudes loses digits to
     * cancellation (x - logsumexp(x) at 1e3), the order-sensitive algorithm's cause */
    double m = 0;
    if (!nominal && k->dist != KG_DIST_NORMAL) {
        if (nominal_once(s, k->dtype, nr, &m)) return false;
        /* wrong on N(0,1) inputs too, but far less: an error that grows with the inputs'
         * magnitudes is cancellation's (kg_diagnose names it); an approximate formula's relative
         * error is no larger at 1e3 + N(0,1) */
        if (m > 0 && j->margin > MAGNITUDE_GROWTH * m) return false;
    }
    if (kg_reduce_symbol(s) >= 0) {
        if (*have_sh == 0) *have_sh = measure_shorter(s, k, sh) == 0 ? 1 : -1;
        if (*have_sh < 0 || !(sh->err > 0)) return false;
        double g = err / sh->err;
        if (!(g >= 0.5 && g <= 2)) return false;
        kg_verdict_cause(v, KG_CAUSE_APPROXIMATION,
                         "error %.2g on %lld of %lld elements (systematic), %.2gx with the reduction 8x shorter: it "
                         "does not grow with the reduction length",
                         err, (long long)over, (long long)got->numel, g);
        return true;
    }
    if (!elementwise_shaped(k, ex)) return false; /* a reduction whose growth cannot be measured */
    kg_verdict_cause(v, KG_CAUSE_APPROXIMATION,
                     "error %.2g on %lld of %lld elements (systematic, no reduction involved): a formula not "
                     "accurate to the dtype",
                     err, (long long)over, (long long)got->numel);
    return true;
}

/* A formula that cancels: where its result is far smaller than the terms it is computed from (tanh
 * as 1 - 2/(exp(2x)+1) near 0, exp(x) - 1, log(1 + exp(x)) at very negative x), the digits kept
 * are the terms', so the absolute error there stays the size of an ordinary result's rounding
 * error instead of shrinking with the result. The failing elements are all small results
 * (|exact| <= scale/8), their largest error within 1/16..2x the largest error over the ordinary
 * results (|exact| >= scale), which pass, and the run repeats. Not a flush to zero (an error the
 * size of the tiny result itself) nor a reduction whose error grows with its length. */
static bool diagnose_cancellation(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                                  const struct kg_exec *x, const struct kg_expect *ex, const struct kg_judgement *j,
                                  struct shorter *sh, int *have_sh, struct kg_verdict *v)
{
    double err = worst_err(j);
    int o = j->worst;
    if (!isfinite(err) || err > 1e-2) return false;
    const struct kg_tensor *got = &x->after[ex->arg[o]];
    const double *xe = ex->exact[o].data;
    const double scale = ex->scale[o];
    if (!(scale > 0)) return false;
    double e_small = 0, e_large = 0, a_small = 0; /* largest errors: failing small results, ordinary ones */
    int64_t failing = 0;
    for (int64_t i = 0; i < got->numel; i++) {
        double g = kg_load(got->dtype, got->data, i), a = fabs(xe[i]);
        if (!isfinite(g) || !isfinite(xe[i])) continue;
        double d = fabs(g - xe[i]);
        if (a >= scale && d > e_large) e_large = d;
        if (kg_elem_err(g, xe[i], scale) <= ex->threshold[o]) continue;
        if (!(a <= scale / 8) || !(d < a)) return false; /* a large result wrong, or no digit right */
        failing++;
        if (d > e_small) e_small = d, a_small = a;
    }
    if (!failing || !(e_large > 0) || !(e_small >= e_large / 16 && e_small <= 2 * e_large)) return false;
    if (!repeats(s, k, in, x)) return false;
    if (kg_reduce_symbol(s) >= 0) {
        if (*have_sh == 0) *have_sh = measure_shorter(s, k, sh) == 0 ? 1 : -1;
        if (*have_sh > 0 && !(sh->err * 2 >= err)) return false; /* it shrinks with the reduction length */
    }
    kg_verdict_cause(v, KG_CAUSE_APPROXIMATION,
                     "a formula that cancels: %lld results far below the output's scale %.3g (%.3g at the worst) "
                     "are off by up to %.3g, as much as results of ordinary size round by (%.3g): it keeps the "
                     "digits of terms larger than its result (tanh as 1 - 2/(exp(2x)+1), exp(x) - 1, log(1 + exp(x)))",
                     (long long)failing, scale, a_small, e_small, e_large);
    return true;
}

/* ---- gross failures ----------------------------------------------------------------------- */

/* ---- order-sensitive algorithms ------------------------------------------------------------- */

/* Right at the nominal shape on N(0,1) inputs: *margin is err / threshold there. */
static bool nominal_passes(struct kg_session *s, enum kg_dtype dtype, double *margin)
{
    struct kg_case k;
    struct kg_err e;
    if (kg_nominal_case(s, dtype, 0, KG_DIST_NORMAL, &k, &e)) return false;
    struct kg_verdict scratch;
    kg_verdict_init(&scratch, NULL);
    struct kg_judgement j;
    if (kg_check_case(s, &k, NULL, &j, NULL, NULL, &scratch)) return false;
    *margin = j.margin;
    return j.pass;
}

/* Whether the outputs of run x (case k, inputs in) depend on the bytes around the buffers: a
 * re-run with x's guard fill gives x's outputs bit for bit (else the kernel differs run to run
 * and nothing can be said), one with other guard bytes does not. *alt: that fill. Such a result
 * is not the algorithm's: the kernel read outside a buffer. */
static bool depends_on_guards(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                              const struct kg_exec *x, uint8_t *alt)
{
    const uint8_t fills[3] = {x->guard_byte, x->guard_byte == 0xFF ? 0xA5 : 0xFF, x->guard_byte == 0x7F ? 0xA5 : 0x7F};
    bool differs = false;
    for (int f = 0; f < 3 && !differs; f++) {
        bool same = same_as_rerun(s, k, in, x, fills[f]);
        if (f == 0 && !same) return false; /* not repeatable: not a question of the guards */
        if (f > 0 && !same) differs = true, *alt = fills[f];
    }
    return differs;
}

/* "3.1e+03x the reference's error", or what stands for it when the error is not finite */
static const char *ratio_words(const struct kg_judgement *j, char *buf, size_t n)
{
    if (isfinite(j->ratio))
        snprintf(buf, n, "%.3gx the reference's error", j->ratio);
    else
        snprintf(buf, n, "%s",
                 isfinite(worst_err(j)) ? "an error where the reference is exact"
                                        : "non-finite values where the reference is finite");
    return buf;
}

void kg_diagnose(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, const struct kg_exec *x,
                 const struct kg_expect *ex, const struct kg_judgement *j, const char *cancellation, bool nominal,
                 struct kg_verdict *v)
{
    char rw[96];
    struct shorter sh = {0};
    int have_sh = 0;
    struct kg_err fe;
    if (kg_expect_values(s, ex, &fe)) return; /* every diagnosis reads the values: the gate's own words stand */
    /* Defects an earlier gate saw that explain any error on any later case: that finding again.
     * A kernel that returns earlier calls' results errs on any new inputs (freshness); one on a
     * stream the caller does not wait on is read before it finishes, now and then (placement). */
    static const struct {
        enum kg_cause cause;
        const char *why;
    } explains[] = {
        {KG_CAUSE_STALE_RESULT,
         "the freshness gate saw this kernel return results of earlier calls, which explains any error on new inputs"},
        {KG_CAUSE_WRONG_STREAM, "the placement gate saw this kernel run on a stream the caller does not wait on, so "
                                "its outputs may be read before it has written them"},
    };
    for (size_t q = 0; q < sizeof explains / sizeof *explains; q++)
        if (kg_session_saw_cause(s, explains[q].cause)) {
            kg_verdict_cause(v, explains[q].cause, "%s; %s", ratio_words(j, rw, sizeof rw), explains[q].why);
            return;
        }
    /* A gate after accuracy, on a case of its own, when accuracy already named the precision the
     * kernel computes in: if the nominal case fails too, this is that finding again, and a second
     * diagnosis on other data could only disagree by chance (a fast rsqrt at one row "grew" with
     * the reduction length like an fp16 sum) */
    static const enum kg_cause precision_causes[] = {KG_CAUSE_TF32, KG_CAUSE_FP16_COMPUTE, KG_CAUSE_FP16_ACCUMULATION,
                                                     KG_CAUSE_BF16_ACCUMULATION, KG_CAUSE_APPROXIMATION};
    int named = 0;
    enum kg_cause which = KG_CAUSE_GATE;
    for (size_t q = 0; q < sizeof precision_causes / sizeof *precision_causes; q++)
        if (kg_session_saw_cause(s, precision_causes[q])) named++, which = precision_causes[q];
    struct nominal_run nr = {0};
    double m = 0;
    if (!nominal && named && !nominal_once(s, k->dtype, &nr, &m)) {
        if (named == 1) { /* that cause, so that reports count the record as that cause's alone */
            kg_verdict_cause(v, which, "%s; the nominal N(0,1) case fails too, as diagnosed there",
                             ratio_words(j, rw, sizeof rw));
        } else {
            kg_verdict_cause(v, KG_CAUSE_GATE, "the nominal N(0,1) case fails too: the accuracy gate's finding");
            v->cause_of = "accuracy";
        }
        return;
    }
    if (diagnose_tf32(s, k, in, x, ex, j, v)) return;
    bool lowacc_ruled_out = false;
    if (diagnose_lowacc(s, k, in, x, ex, j, nominal, &lowacc_ruled_out, &sh, &have_sh, v)) return;
    /* after the accumulators: an fp16 sum widened at the end is fp16 values too, and its own
     * cause is the more telling one */
    if (diagnose_half_output(k, x, ex, j, v)) return;
    if (diagnose_approximation(s, k, in, x, ex, j, nominal, &sh, &have_sh, &nr, v)) return;
    bool nominal_ok = !nominal && nominal_once(s, k->dtype, &nr, &m);
    uint8_t alt = 0;
    if (cancellation && nominal_ok && depends_on_guards(s, k, in, x, &alt)) {
        /* e.g. a row's max read one past its end: the next row's value, or the guard's */
        kg_verdict_cause(v, KG_CAUSE_GATE,
                         "not diagnosed: %s on %s, but the outputs on these inputs change with the bytes around "
                         "the buffers (0x%02x guards, then 0x%02x): a read outside a buffer, not the algorithm, "
                         "decides them",
                         ratio_words(j, rw, sizeof rw), cancellation, x->guard_byte, alt);
        return;
    }
    if (cancellation && nominal_ok) {
        kg_verdict_cause(v, KG_CAUSE_REDUCTION_ORDER,
                         "within threshold on N(0,1) inputs (%.2g of it), %s on %s: the algorithm, not the "
                         "precision, loses the answer",
                         m, ratio_words(j, rw, sizeof rw), cancellation);
        return;
    }
    if (cancellation && !nominal_ok && m > 0 && m <= MAGNITUDE_GROWTH && j->margin > MAGNITUDE_GROWTH * m) {
        /* a little wrong on N(0,1) inputs, far more on large or mixed magnitudes: digits lost to
         * cancellation (x - logsumexp(x) with the row's sum near 1e3), one defect seen twice */
        kg_verdict_cause(v, KG_CAUSE_REDUCTION_ORDER,
                         "%.2g thresholds on N(0,1) inputs, %.3g on %s (%s): the error grows with the inputs' "
                         "magnitudes, so the algorithm, not the precision, loses the answer",
                         m, j->margin, cancellation, ratio_words(j, rw, sizeof rw));
        return;
    }
    if (!cancellation && (nominal || nominal_ok) && diagnose_cancellation(s, k, in, x, ex, j, &sh, &have_sh, v)) return;
    if (!nominal && !nominal_ok) { /* wrong on the accuracy gate's own inputs: that gate's finding */
        kg_verdict_cause(v, KG_CAUSE_GATE,
                         "not diagnosed, and the nominal N(0,1) case fails too: the accuracy "
                         "gate's finding");
        v->cause_of = "accuracy";
        return;
    }
    kg_verdict_cause(v, KG_CAUSE_GATE,
                     "not diagnosed: not TF32, not an fp16/bf16 accumulator%s, not a small systematic "
                     "approximation%s",
                     lowacc_ruled_out ? " (one would fail the nominal case already, which passes)"
                     : k->c->has_op && (k->c->op.def->flags & KG_OP_LOWACC) ? ""
                                                                            : " (not simulated for this op)",
                     nominal ? "" : "; the nominal N(0,1) case passes");
}
