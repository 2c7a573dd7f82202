/* shapes.c: boundary sweep. One symbol at a time moves through 1, small primes, powers of two
 * and their neighbours, the block size and its neighbours, the declared sweep and a larger
 * size, the others at nominal; plus one case with every symbol odd. Each case must be within
 * the calibrated threshold, or refused by the kernel. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

#define MAXCASES    96
#define SHRINK_FRAC 16

static void add_value(int64_t *vals, int *n, int64_t v)
{
    if (v < 1 || *n >= 48) return;
    for (int i = 0; i < *n; i++)
        if (vals[i] == v) return;
    vals[(*n)++] = v;
}

/* Output elements of judgement j that still hold kgate's sentinel prefill. */
static int64_t unwritten_count(const struct kg_expect *ex, const struct kg_judgement *j)
{
    int64_t n = 0;
    for (int o = 0; o < ex->nout; o++) n += j->unwritten[o];
    return n;
}

/* Whether an element of run x that held the prefill was computed from it (y += f(x) keeps a
 * NaN prefill NaN): rerun on the same inputs with seeded garbage in the outputs, some such
 * element no longer equals what it held. That is aliasing's finding, not an unwritten tail; so
 * is any failure once aliasing saw the kernel read its outputs. Where the candidate allocates
 * its outputs, an element that follows its memory was never initialised: false. */
static bool follows_prior(struct kg_session *s, const struct kg_case *k, const struct kg_exec *x)
{
    if (kg_session_saw_cause(s, KG_CAUSE_PRIOR_CONTENTS)) return true;
    if (kg_session_can(s, KG_CAP_FRESH_OUTPUTS)) return false;
    struct kg_inputs in;
    struct kg_err e;
    if (kg_session_inputs(s, k, &in, &e)) return false;
    struct kg_exec g;
    struct kg_exec_opts o = {.fill = KG_FILL_GARBAGE, .guard_byte = x->guard_byte};
    kg_exec(s, k, &in, &o, &g);
    bool follows = false;
    for (int i = 0; g.status == KG_WS_OK && i < k->c->nargs && !follows; i++) {
        if (!kg_arg_is_output(&k->c->args[i]) || k->c->alias_of[i] >= 0 || !x->after[i].data) continue;
        size_t es = kg_dtype_size(k->adtype[i]);
        const uint8_t *xa = x->after[i].data, *ga = g.after[i].data;
        for (int64_t q = 0; q < k->numel[i] && !follows; q++)
            if (kg_exec_kept_prefill(x, i, q) && !kg_exec_kept_prefill(&g, i, q) &&
                memcmp(ga + q * es, xa + q * es, es))
                follows = true; /* kept the sentinel, and with garbage became neither it nor the garbage */
    }
    kg_exec_free(&g);
    kg_inputs_free(&in);
    return follows;
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_session_opts *opt = kg_session_opts(s);
    const struct kg_contract *c = kg_session_contract(s);
    int64_t base[KG_MAX_SYMS];
    memcpy(base, opt->pin_shape ? opt->sym : c->nominal, sizeof base);
    /* the candidate cases */
    static int64_t cases[MAXCASES][KG_MAX_SYMS];
    static int moving[MAXCASES]; /* the symbol at a boundary value, whose others may shrink; -1: none */
    int nc = 0, skipped_budget = 0, undefined = 0;
    if (opt->pin_shape) {
        moving[nc] = -1;
        memcpy(cases[nc++], base, sizeof base);
    } else {
        int64_t block = 0;
        if (c->has_launch && c->block[0] && kg_expr_symbol(c->block[0]) < 0) {
            struct kg_err e;
            kg_expr_eval(c->block[0], base, &block, &e);
        }
        for (int sym = 0; sym < c->nsyms; sym++) {
            if (c->fixed[sym]) continue; /* a KernelBench constant no input dim follows */
            int64_t vals[48];
            int n = 0;
            static const int64_t fixed[] = {1, 2, 3, 7, 31, 33, 64, 127, 129, 255, 257, 1009};
            for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) add_value(vals, &n, fixed[i]);
            if (block > 1) {
                add_value(vals, &n, block - 1);
                add_value(vals, &n, block);
                add_value(vals, &n, block + 1);
                add_value(vals, &n, 2 * block + 1);
            }
            int nboundary = n; /* the values above; the declared sweep and the larger size keep the others */
            for (int i = 0; i < c->nsweep[sym]; i++) add_value(vals, &n, c->sweep[sym][i]);
            add_value(vals, &n, 2 * base[sym] + 1);
            for (int i = 0; i < n && nc < MAXCASES; i++) {
                if (vals[i] == base[sym]) continue;
                memcpy(cases[nc], base, sizeof base);
                cases[nc][sym] = vals[i];
                moving[nc] = i < nboundary ? sym : -1;
                nc++;
            }
        }
        if (c->nsyms && nc < MAXCASES) { /* every symbol odd at once */
            memcpy(cases[nc], base, sizeof base);
            moving[nc] = -1;
            for (int sym = 0; sym < c->nsyms; sym++) cases[nc][sym] = c->fixed[sym] ? base[sym] : base[sym] | 1;
            if (memcmp(cases[nc], base, sizeof base)) nc++;
        }
    }
    enum kg_dtype dts[KG_MAX_DTYPES];
    int nd = kg_instance_dtypes(s, dts);
    int pass = 0, refused = 0, ran = 0, conditioned = 0;
    double worst_margin = -1;
    json_t *list = json_array();
    v->extra = json_pack("{s:o}", "cases", list);
    bool failed = false, stop = false;              /* exhaustive (audits): keep measuring after a failure */
    static int64_t seen_sym[MAXCASES][KG_MAX_SYMS]; /* the cases this dtype ran */
    for (int d = 0; d < nd && !stop; d++) {
        int nseen = 0;
        for (int i = 0; i < nc && !stop; i++) {
            struct kg_case k;
            struct kg_err e;
            if (kg_case_init(&k, c, cases[i], dts[d], opt->seed,
                             opt->dist >= 0 ? (enum kg_dist)opt->dist : KG_DIST_NORMAL, &e)) {
                /* a shape the contract's own expressions reject (e.g. a dim that goes negative) */
                json_array_append_new(list, json_pack("{s:s,s:s}", "case", "?", "skipped", e.msg));
                continue;
            }
            /* a boundary value of one symbol needs no nominal-sized others: they shrink (halved,
             * none below 32) until the case costs at most 1/16 of the budget */
            if (!opt->pin_shape && moving[i] >= 0 &&
                kg_case_shrink(s, cases[i], moving[i], SHRINK_FRAC, dts[d], opt->seed, k.dist, &k)) {
                skipped_budget++;
                continue;
            }
            if (!opt->pin_shape && !kg_case_affordable(s, &k)) {
                skipped_budget++;
                continue;
            }
            /* two boundary values shrunk to one case (H=64 with W halved to 64, W=64 with H): once */
            bool seen = false;
            for (int q = 0; q < nseen && !seen; q++) seen = !memcmp(seen_sym[q], k.sym, sizeof k.sym);
            if (seen) continue;
            if (nseen < MAXCASES) memcpy(seen_sym[nseen++], k.sym, sizeof k.sym);
            char id[KG_CASE_ID_MAX];
            kg_case_id(&k, id, sizeof id);
            struct kg_judgement j;
            struct kg_expect ex;
            struct kg_exec x;
            /* a shape the reference itself cannot compute (avg_pool's padding above half the
             * window) tests nothing: skipped, counted. The oracle never sees the candidate. */
            if (!opt->pin_shape) {
                if (kg_session_expect(s, &k, &ex, &e)) {
                    undefined++;
                    json_array_append_new(list, json_pack("{s:s,s:s}", "case", id, "skipped", e.msg));
                    continue;
                }
                kg_expect_free(&ex); /* a pinned shape: the case is the user's, computed below */
            }
            struct kg_verdict tmp;
            kg_verdict_init(&tmp, v->gate);
            ran++;
            if (kg_check_case(s, &k, NULL, &j, &ex, &x, &tmp)) {
                /* a KernelBench candidate that raises at a shape it does not support refuses it */
                if (tmp.status == KG_REFUSED || tmp.wstatus == KG_WS_EXCEPTION) {
                    refused++;
                    json_array_append_new(list, json_pack("{s:s,s:s}", "case", id, "verdict", "refused"));
                    continue;
                }
                if (!failed) {
                    kg_verdict_set(v, tmp.status, "%s", tmp.summary);
                    memcpy(v->detail, tmp.detail, sizeof v->detail);
                    memcpy(v->replay, tmp.replay, sizeof v->replay);
                    v->wstatus = tmp.wstatus;
                    kg_verdict_cause(v, tmp.cause, "%s", tmp.cause_text);
                }
                failed = stop = true;
                break;
            }
            json_array_append_new(list, kg_case_json(id, &ex, &j));
            if (j.pass) {
                pass++;
                conditioned += j.conditioned;
                if (j.margin > worst_margin) worst_margin = j.margin;
            } else if (!failed) {
                char desc[KG_DESCRIBE_MAX], sh[KG_SHAPE_STR_MAX];
                kg_describe_worst(&k, &ex, &j, desc, sizeof desc);
                kg_case_shape_str(&k, sh, sizeof sh);
                kg_verdict_set(v, KG_FAIL, "at %s: %s", sh, desc);
                kg_judgement_evidence(s, &k, &ex, &j, v);
                struct kg_inputs in;
                struct kg_err ie;
                if (kg_session_inputs(s, &k, &in, &ie) == 0) { /* the first failure is diagnosed */
                    kg_diagnose(s, &k, &in, &x, &ex, &j, NULL, false, v);
                    kg_inputs_free(&in);
                } else {
                    kg_verdict_cause(v, KG_CAUSE_GATE, "not diagnosed: %s", ie.msg);
                }
                char gross[160];
                if (v->cause == KG_CAUSE_GATE && !kg_gross_failure(&ex, &j, gross, sizeof gross)) {
                    /* a numerically fragile algorithm errs by the data and the length, not grossly:
                     * left undiagnosed, grouped with the numeric gates' cause */
                    char said[sizeof v->cause_text];
                    snprintf(said, sizeof said, "%s", v->cause_text);
                    kg_verdict_cause(v, KG_CAUSE_GATE, "%s; not shape-specific: %s", said, gross);
                } else if (v->cause == KG_CAUSE_GATE && unwritten_count(&ex, &j) > 0 && !follows_prior(s, &k, &x)) {
                    /* elements that keep kgate's prefill at this shape: a tail the grid or a
                     * vectorised loop does not cover (structure sees only the nominal shape) */
                    kg_verdict_cause(v, KG_CAUSE_UNWRITTEN_OUTPUT,
                                     "at %s, %lld output element%s kgate's prefill (right at the nominal shape)", sh,
                                     (long long)unwritten_count(&ex, &j),
                                     unwritten_count(&ex, &j) == 1 ? " keeps" : "s keep");
                } else if (v->cause == KG_CAUSE_GATE) {
                    /* right where the kernel was written for, grossly wrong here: the shape is the cause */
                    struct kg_case nk;
                    struct kg_judgement nj;
                    struct kg_verdict nv;
                    kg_verdict_init(&nv, v->gate);
                    char nsh[KG_SHAPE_STR_MAX];
                    if (kg_nominal_case(s, dts[d], 0, k.dist, &nk, &e) == 0 &&
                        kg_check_case(s, &nk, NULL, &nj, NULL, NULL, &nv) == 0 && nj.pass) {
                        kg_case_shape_str(&nk, nsh, sizeof nsh);
                        kg_verdict_cause(v, KG_CAUSE_SHAPE_SPECIFIC,
                                         "right at the nominal %s, grossly wrong at %s (%s)", nsh, sh, gross);
                    }
                    kg_verdict_clear(&nv);
                }
                failed = true;
                stop = !opt->exhaustive;
            }
            kg_exec_free(&x);
            kg_expect_free(&ex);
        }
    }
    v->ncases = ran;
    if (!failed) {
        char also[96] = "";
        size_t al = 0;
        if (undefined) kg_appendf(also, sizeof also, &al, "; %d the reference cannot compute skipped", undefined);
        if (conditioned)
            kg_appendf(also, sizeof also, &al, "; %d within %gx the inputs' conditioning", conditioned, KG_SENS_K);
        if (ran == 0)
            kg_verdict_set(v, KG_SKIP, "no affordable boundary case (%d over the size budget%s)", skipped_budget, also);
        else
            kg_verdict_set(v, KG_PASS, "%d boundary cases: %d pass, %d refused%s%s; worst at %.2g of the threshold",
                           ran, pass, refused, skipped_budget ? " (some larger ones skipped: size budget)" : "", also,
                           worst_margin < 0 ? 0 : worst_margin);
    }
}

const struct kg_gate kg_gate_shapes = {
    .id = "shapes",
    .title = "boundary shapes within threshold or refused",
    .tolerance_free = false,
    .explain = "Moves one shape symbol at a time through 1, 2, 3, 7, 31, 33, 64, 127, 129, 255, 257, 1009, the\n"
               "block size -1/+0/+1 and 2*block+1 (the other free symbols halved, none below 32, while the case\n"
               "costs more than 1/16 of the size budget), the contract's declared sweep and 2*nominal+1 (others\n"
               "at nominal), plus one case with every symbol odd; every instance dtype. Each case must pass the\n"
               "calibrated accuracy test or be refused by the kernel (a host entry returning non-zero). Cases over\n"
               "the size budget, and shapes the reference itself cannot compute, are skipped and counted.\n"
               "Catches: hard-coded shapes, missing tail handling, vectorised loads that assume divisibility,\n"
               "tiles that read past the last row. Calibrated, so not tolerance-free; the sweep is deterministic.",
    .explain_python =
        "KernelBench format: the problem's module-level integer constants (batch_size, dim, ...) are the\n"
        "shape symbols; get_inputs()/get_init_inputs() are re-evaluated with the changed values.",
    .run = run,
};
