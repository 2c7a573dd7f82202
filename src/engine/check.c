/* check.c: the one-shot case most calibrated gates use: inputs, one run, the oracle, a
 * judgement; a run that fails sets the verdict instead. Also the lean case (kg_lean_case),
 * whose smaller batch is taken only after such a case passes there, and the cases prepared
 * with their inputs and oracle values at either size (kg_prepare_cases). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/session.h"

#define SENS_DRAWS 3
/* an element this many times over KG_SENS_K x its change in a draw: the other draws are not tried
 * (they would have to move the oracle there that much more) */
#define SENS_HOPELESS 64.0

/* The case's margin with every element over the threshold allowed KG_SENS_K x its own change
 * (sens); *hopeless: an element is SENS_HOPELESS times over even that, where it did change. The
 * sensitivity where the output errs most goes to ex->sens_err. */
static double conditioned_margin(const struct kg_exec *x, struct kg_expect *ex, const struct kg_judgement *j,
                                 double *const *sens, bool *hopeless)
{
    double margin = 0;
    *hopeless = false;
    for (int o = 0; o < ex->nout; o++) {
        const struct kg_tensor *got = &x->after[ex->arg[o]];
        const double *xe = ex->exact[o].data, thr = ex->threshold[o];
        for (int64_t q = 0; q < got->numel; q++) {
            double err = kg_elem_err(kg_load(got->dtype, got->data, q), xe[q], ex->scale[o]);
            if (err <= thr) continue;
            double allowed = KG_SENS_K * sens[o][q], m = err / (allowed > thr ? allowed : thr);
            if (!(m <= margin)) margin = isnan(m) ? INFINITY : m;
            if (allowed > 0 && !(err <= SENS_HOPELESS * allowed)) *hopeless = true;
        }
        if (j->cmp[o].worst >= 0) ex->sens_err[o] = sens[o][j->cmp[o].worst];
    }
    return margin;
}

/* Judges a failing, not gross, calibrated case again against the inputs' own conditioning. The
 * reference's error calibrates the threshold, but on inputs where the result hangs on the last
 * bits of a few elements (LayerNorm over three nearly equal values: x - mean cancels) any fp32
 * algorithm errs by a lot, and which one errs most there is luck: a two-pass LayerNorm failed at
 * 2.9x the reference's error on one seed of twelve. So: the oracle again on the inputs nudged by
 * an ulp in a checkerboard, then by one or two ulps each way at random (SENS_DRAWS in all); at
 * each element over the threshold, the oracle's largest change there is an error any
 * backward-stable fp32 computation may make, and the element passes within KG_SENS_K times it
 * (on its own: it does not top up the threshold, which a cancelling tanh only just exceeds).
 * Cases of N(0,1) inputs only (accuracy, shapes). Per element, not the output's largest
 * change: a gemm's most ill-conditioned elements would otherwise excuse a tanh that cancels on
 * all the others. Only fp32 inputs (a bf16 or fp16 one cannot move by less than its own ulp). */
static void allow_conditioning(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                               const struct kg_exec *x, struct kg_expect *ex, struct kg_judgement *j)
{
    char why[128];
    /* N(0,1) inputs only: the precision gate's large or mixed magnitudes are there to hold a kernel
     * to the standard algorithm's accuracy, beyond what the inputs' conditioning excuses (a softmax
     * as exp(x - logsumexp(x)) at 1e3 errs as an ulp's nudge of the inputs moves the result, and
     * the max-subtracted one, exact by Sterbenz, does not) */
    if (j->pass || k->dist != KG_DIST_NORMAL || ex->int_out || kg_gross_failure(ex, j, why, sizeof why)) return;
    bool f32 = false;
    for (int i = 0; i < KG_MAX_ARGS; i++) f32 |= in->t[i].data && in->t[i].dtype == KG_F32 && in->t[i].numel;
    struct kg_err e;
    if (!f32 || kg_expect_values(s, ex, &e)) return;
    double *sens[KG_OP_MAX_IO] = {0};
    bool ok = true, hopeless = false;
    double margin = INFINITY;
    for (int o = 0; o < ex->nout && ok; o++)
        ok = (sens[o] = calloc((size_t)(ex->exact[o].numel ? ex->exact[o].numel : 1), sizeof(double))) != NULL;
    /* until every element is excused, or one cannot be */
    for (uint64_t p = 0; p < SENS_DRAWS && ok && !(margin <= 1) && !hopeless; p++) {
        struct kg_inputs r;
        struct kg_expect e2;
        ok = kg_inputs_ulp_nudged(in, k->seed * SENS_DRAWS + p, p == 0, &r) == 0;
        if (!ok) break;
        ok = kg_expect_compute(s, k, &r, &e2, &e) == 0;
        kg_inputs_free(&r);
        if (!ok) break;
        for (int o = 0; o < ex->nout && o < e2.nout; o++) {
            const double *a = e2.exact[o].data, *b = ex->exact[o].data;
            for (int64_t q = 0; q < ex->exact[o].numel; q++) {
                if (!isfinite(a[q]) || !isfinite(b[q])) continue;
                double d = kg_elem_err(a[q], b[q], ex->scale[o]);
                if (d > sens[o][q]) sens[o][q] = d;
            }
        }
        kg_expect_free(&e2);
        margin = conditioned_margin(x, ex, j, sens, &hopeless);
    }
    for (int o = 0; o < ex->nout; o++) free(sens[o]);
    if (!ok || !(margin <= 1)) return;
    j->pass = j->conditioned = true;
    j->margin = margin;
}

int kg_check_case(struct kg_session *s, const struct kg_case *k, const struct kg_exec_opts *o, struct kg_judgement *j,
                  struct kg_expect *ex_out, struct kg_exec *x_out, struct kg_verdict *v)
{
    struct kg_err e;
    struct kg_inputs in; /* the memo's, lent */
    if (kg_session_inputs(s, k, &in, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return -1;
    }
    struct kg_exec x;
    struct kg_exec_opts run = o ? *o : (struct kg_exec_opts){.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5};
    run.flags |= kg_judged_flag(s, k, &run); /* digests too: later runs of k may be judged by them */
    kg_exec(s, k, &in, &run, &x);
    if (x.status == KG_WS_OK && kg_case_outputs_empty(k)) { /* it ran (no crash), but there is nothing to judge */
        kg_verdict_empty(v, k);
        kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
        kg_inputs_free(&in);
        kg_exec_free(&x);
        return -1;
    }
    if (x.status != KG_WS_OK) {
        kg_verdict_from_exec(v, k, &x);
        kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
        kg_inputs_free(&in);
        kg_exec_free(&x);
        return -1;
    }
    struct kg_expect ex;
    if (kg_session_expect(s, k, &ex, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        kg_inputs_free(&in);
        kg_exec_free(&x);
        return -1;
    }
    kg_judge(k, &x, false, &ex, j);
    kg_judged_keep(s, k, &x, j);
    if (!s->judge_broken[0]) allow_conditioning(s, k, &in, &x, &ex, j);
    kg_inputs_free(&in);
    if (s->judge_broken[0]) { /* no comparison: no verdict on the kernel */
        kg_verdict_set(v, KG_ERROR, "%s", s->judge_broken);
        v->not_kernel = true;
        kg_expect_free(&ex);
        kg_exec_free(&x);
        return -1;
    }
    if (ex_out)
        *ex_out = ex;
    else
        kg_expect_free(&ex);
    if (x_out)
        *x_out = x;
    else
        kg_exec_free(&x);
    return 0;
}

/* The symbol that only counts rows (a batch): free, the leading dim of every output, and of
 * every other tensor it is in, and in no other dim; a tensor without it (a LayerNorm's weight, a
 * matmul's B) is the same for every row. Each of its values is then a row computed on its own.
 * -1 when there is none: an output reduced over it (a loss) does not lead with it, and a square
 * matmul's N is also a column count. */
static int batch_symbol(const struct kg_contract *c)
{
    int b = -1, users = 0;
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        if (a->kind != KG_ARG_TENSOR || !kg_arg_is_output(a)) continue;
        int lead = a->rank < 1 ? -1 : kg_expr_symbol(a->dims[0]);
        if (lead < 0 || (b >= 0 && lead != b)) return -1;
        b = lead;
    }
    if (b < 0 || c->fixed[b]) return -1;
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        if (a->kind != KG_ARG_TENSOR) continue;
        for (int d = 0; d < a->rank; d++)
            if (kg_expr_uses(a->dims[d], b) && (d || kg_expr_symbol(a->dims[0]) != b)) return -1;
        users += kg_arg_is_input(a) && a->rank && kg_expr_symbol(a->dims[0]) == b;
    }
    return users ? b : -1;
}

/* The batch value of dtype's lean cases, decided once per session: the batch symbol halved
 * until the case is within the budget, and taken only where the kernel is right there on the
 * nominal N(0,1) inputs' kind (a kernel wrong, refusing or failing at another batch is the
 * shapes gate's finding, never precision's). 0 with *sym and *val set, or -1: the nominal case. */
static int lean_batch(struct kg_session *s, enum kg_dtype dtype, int *sym, int64_t *val)
{
    signed char *st = &s->lean_state[dtype];
    *sym = batch_symbol(s->c);
    if (*st < 0 || *sym < 0) return -1;
    if (*st > 0) {
        *val = s->lean_value[dtype];
        return 0;
    }
    *st = -1;
    struct kg_case k;
    struct kg_err e;
    if (kg_nominal_case(s, dtype, 0, KG_DIST_NORMAL, &k, &e)) return -1;
    int64_t v[KG_MAX_SYMS], nominal = k.sym[*sym];
    memcpy(v, k.sym, sizeof v);
    while (v[*sym] > 1 && !kg_case_affordable(s, &k)) {
        v[*sym] /= 2;
        if (kg_case_init(&k, s->c, v, dtype, k.seed, k.dist, &e)) return -1;
    }
    if (v[*sym] == nominal) return -1;
    struct kg_expect ex;
    if (kg_session_expect(s, &k, &ex, &e))
        return -1; /* the reference cannot compute it (a batch of one in BatchNorm1d) */
    kg_expect_free(&ex);
    struct kg_verdict scratch;
    kg_verdict_init(&scratch, NULL);
    struct kg_judgement j;
    if (kg_check_case(s, &k, NULL, &j, NULL, NULL, &scratch) || !j.pass) return -1;
    *st = 1;
    *val = s->lean_value[dtype] = v[*sym];
    return 0;
}

int kg_lean_case(struct kg_session *s, enum kg_dtype dtype, uint64_t seed_offset, enum kg_dist dist, struct kg_case *k,
                 struct kg_err *e)
{
    if (kg_nominal_case(s, dtype, seed_offset, dist, k, e)) return -1;
    if (s->o.pin_shape || kg_case_affordable(s, k)) return 0;
    int b;
    int64_t val, v[KG_MAX_SYMS];
    if (lean_batch(s, dtype, &b, &val)) return 0;
    memcpy(v, k->sym, sizeof v);
    v[b] = val;
    struct kg_case t;
    if (kg_case_init(&t, s->c, v, dtype, k->seed, k->dist, e)) return 0;
    *k = t;
    return 0;
}

int kg_prepare_cases(struct kg_session *s, int n, bool lean, struct kg_case *k, struct kg_inputs *in,
                     struct kg_expect *ex, struct kg_err *e)
{
    enum kg_dtype dt = kg_contract_default_dtype(s->c);
    for (int i = 0; i < n; i++) {
        if ((lean ? kg_lean_case(s, dt, (uint64_t)i, KG_DIST_NORMAL, &k[i], e)
                  : kg_nominal_case(s, dt, (uint64_t)i, KG_DIST_NORMAL, &k[i], e)) ||
            kg_session_inputs(s, &k[i], &in[i], e))
            return i;
        if (kg_session_expect(s, &k[i], &ex[i], e)) {
            kg_inputs_free(&in[i]);
            return i;
        }
    }
    return n;
}
