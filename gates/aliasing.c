/* aliasing.c: the kernel must not write its inputs, must not read its outputs' prior
 * contents, and must be right in place when the contract declares `alias: out=in`.
 * Where the nominal case is over the case budget, its inputs and their storage are checked in
 * one run at the nominal size (nominal_inputs_intact: a kernel may use an input as scratch only
 * where its workspace would be large), and the four prefilled runs are made at the lean case
 * (kg_lean_case): whether an output's prior contents are read does not depend on how many rows
 * there are, and the four nominal runs took 5.4 of a 4.3 GB max pool's 37 s check (H100,
 * 2026-12-06). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

static bool same_outputs(const struct kg_case *k, const struct kg_exec *a, const struct kg_exec *b, int *arg,
                         int64_t *idx, int64_t *count)
{
    *idx = -1;
    *count = kg_exec_first_diff(k, a, b, false, arg, idx);
    return *count == 0;
}

/* Fills v's evidence with element idx of tensor arg: got in one run, expected in another. */
static void element_evidence(struct kg_session *s, const struct kg_case *k, struct kg_verdict *v, int arg,
                             const char *index, int64_t idx, const void *got, const void *expected)
{
    v->ev.valid = true;
    kg_strlcpy(v->ev.output, k->c->args[arg].name, sizeof v->ev.output);
    kg_strlcpy(v->ev.index, index, sizeof v->ev.index);
    v->ev.flat = idx;
    v->ev.got = kg_load(k->adtype[arg], got, idx);
    v->ev.expected = kg_load(k->adtype[arg], expected, idx);
    kg_case_id(k, v->ev.case_id, sizeof v->ev.case_id);
    kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
}

/* 1. Inputs untouched (those the contract declares in place excepted); true when one changed. */
static bool input_changed(struct kg_session *s, const struct kg_case *k, const struct kg_exec *x, struct kg_verdict *v)
{
    const struct kg_contract *c = k->c;
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        if (a->kind != KG_ARG_TENSOR || a->io != KG_IN) continue;
        bool aliased = false;
        for (int o = 0; o < c->nargs; o++) aliased |= c->alias_of[o] == i;
        if (aliased) continue;
        size_t es = kg_dtype_size(k->adtype[i]);
        int64_t changed = 0, first = -1;
        const uint8_t *b = x->before[i].data, *af = x->after[i].data;
        if (b == af || !k->numel[i] || !memcmp(b, af, (size_t)k->numel[i] * es))
            continue; /* unchanged (b == af: exec saw so) */
        for (int64_t q = 0; q < k->numel[i]; q++)
            if (memcmp(b + q * es, af + q * es, es)) {
                if (first < 0) first = q;
                changed++;
            }
        if (!changed) continue;
        char idx[KG_INDEX_MAX];
        kg_tensor_index_str(&x->after[i], first, idx, sizeof idx);
        kg_verdict_set(v, KG_FAIL,
                       "input %s was modified by the kernel: %lld of %lld elements changed (first %s%s: %.9g -> %.9g)",
                       a->name, (long long)changed, (long long)k->numel[i], a->name, idx,
                       kg_load(k->adtype[i], b, first), kg_load(k->adtype[i], af, first));
        kg_verdict_detail(v, "An `in` tensor must be bit-identical after the call. A kernel that uses its input "
                             "as scratch, zeroes it, or works in place without declaring `alias:` corrupts the "
                             "caller's data, and can make a second call look right.");
        kg_verdict_cause(v, KG_CAUSE_INPUT_MUTATED, "%s%s was %.9g before the call, %.9g after (%lld elements changed)",
                         a->name, idx, kg_load(k->adtype[i], b, first), kg_load(k->adtype[i], af, first),
                         (long long)changed);
        element_evidence(s, k, v, i, idx, first, af, b);
        return true;
    }
    return false;
}

/* Whether run r agrees with run 0: bitwise for a deterministic kernel, else by the oracle's
 * threshold. -1 when the oracle failed (v set). */
/* The largest element difference between runs a and b over the oracle's outputs (compare.h's
 * measure, infinite where their NaN/Inf patterns differ). */
static double run_spread(const struct kg_expect *ex, const struct kg_exec *a, const struct kg_exec *b)
{
    double d = 0;
    for (int o = 0; o < ex->nout; o++) {
        const struct kg_tensor *ta = &a->after[ex->arg[o]], *tb = &b->after[ex->arg[o]];
        for (int64_t i = 0; i < ta->numel; i++) {
            double e = kg_elem_err(kg_load(ta->dtype, ta->data, i), kg_load(tb->dtype, tb->data, i), ex->scale[o]);
            if (!(e <= d)) d = e;
        }
    }
    return d;
}

static int agrees(struct kg_session *s, const struct kg_case *k, const struct kg_exec *x, int r, bool deterministic,
                  int *arg, int64_t *idx, int64_t *count, struct kg_verdict *v)
{
    if (deterministic) return same_outputs(k, &x[0], &x[r], arg, idx, count);
    /* a nondeterministic kernel: judge each run against the oracle instead */
    struct kg_expect ex;
    struct kg_err e;
    if (kg_session_expect(s, k, &ex, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return -1;
    }
    struct kg_judgement j;
    kg_judge(k, &x[r], false, &ex, &j);
    /* ... or against its own zero-prefilled run, within twice the spread of two such runs (a
     * kernel that adds noise fails the oracle on every prefill alike) */
    double spread = run_spread(&ex, &x[0], &x[1]);
    bool within = spread > 0 && run_spread(&ex, &x[0], &x[r]) <= 2 * spread;
    if (!j.pass && !within) {
        *arg = ex.arg[j.worst];
        *idx = j.cmp[j.worst].worst;
        *count = j.cmp[j.worst].mismatches;
    }
    kg_expect_free(&ex);
    return j.pass || within;
}

/* 2. Outputs independent of their prior contents (x[r] prefilled with fill_names[r]); true
 * when they are not, or the check could not be made (v set either way). */
static bool reads_prior(struct kg_session *s, const struct kg_case *k, const struct kg_exec *x,
                        const char *const *fill_names, bool *deterministic, struct kg_verdict *v)
{
    int arg = 0;
    int64_t idx = -1, count = 0;
    *deterministic = !kg_session_nondeterministic(s) && same_outputs(k, &x[0], &x[1], &arg, &idx, &count);
    for (int r = 2; r < 4; r++) {
        int same = agrees(s, k, x, r, *deterministic, &arg, &idx, &count, v);
        if (same < 0) return true;
        if (same) continue;
        const char *name = k->c->args[arg].name;
        char ix[KG_INDEX_MAX];
        kg_tensor_index_str(&x[r].after[arg], idx, ix, sizeof ix);
        kg_verdict_set(v, KG_FAIL,
                       "output %s depends on its prior contents: prefilled with %s instead of zeros, %lld elements "
                       "differ (first %s%s: %.9g vs %.9g)",
                       name, fill_names[r], (long long)count, name, ix,
                       kg_load(k->adtype[arg], x[r].after[arg].data, idx),
                       kg_load(k->adtype[arg], x[0].after[arg].data, idx));
        /* elements that simply kept each run's prefill were never written: structure's finding */
        size_t es = kg_dtype_size(k->adtype[arg]);
        const uint8_t *ra = x[r].after[arg].data, *za = x[0].after[arg].data;
        bool kept = true; /* every differing element kept its prefill in both runs */
        for (int64_t q = 0; q < k->numel[arg] && kept; q++)
            if (memcmp(ra + q * es, za + q * es, es))
                kept = kg_exec_kept_prefill(&x[r], arg, q) && kg_exec_kept_prefill(&x[0], arg, q);
        if (!kept && kg_session_can(s, KG_CAP_FRESH_OUTPUTS)) {
            /* where the candidate allocates its outputs, the only prior contents are memory it
             * never initialised: structure's finding either way */
            kg_verdict_detail(v, "The candidate allocates this output, and these elements follow what the memory it "
                                 "got held (the runner fills it before each call): never initialised.");
            kg_verdict_cause(v, KG_CAUSE_UNWRITTEN_OUTPUT, "%s%s = %.9g with the memory zeroed, %.9g with it %s", name,
                             ix, kg_load(k->adtype[arg], x[0].after[arg].data, idx),
                             kg_load(k->adtype[arg], x[r].after[arg].data, idx), fill_names[r]);
        } else if (kept) {
            kg_verdict_detail(v, "These elements kept whatever the buffer held in each run: never written.");
            kg_verdict_cause(v, KG_CAUSE_UNWRITTEN_OUTPUT, "%s%s keeps its prefill (%s, zeros)", name, ix,
                             fill_names[r]);
        } else {
            kg_verdict_detail(v, "The kernel reads the output before writing it: it accumulates into it (`y += ...`) "
                                 "assuming zeros, or leaves part of it to whatever was there.");
            kg_verdict_cause(v, KG_CAUSE_PRIOR_CONTENTS, "%s%s = %.9g after a zero prefill, %.9g after %s", name, ix,
                             kg_load(k->adtype[arg], x[0].after[arg].data, idx),
                             kg_load(k->adtype[arg], x[r].after[arg].data, idx), fill_names[r]);
        }
        element_evidence(s, k, v, arg, ix, idx, x[r].after[arg].data, x[0].after[arg].data);
        return true;
    }
    return false;
}

/* 3. Declared aliasing honoured: the in-place run must be right. true when it is not (or the
 * oracle failed: v set); *has_alias says whether the contract declares any. */
static bool wrong_in_place(struct kg_session *s, const struct kg_case *k, const struct kg_exec *x0, bool *has_alias,
                           struct kg_verdict *v)
{
    *has_alias = false;
    for (int i = 0; i < k->c->nargs; i++) *has_alias |= k->c->alias_of[i] >= 0;
    if (!*has_alias) return false;
    struct kg_expect ex;
    struct kg_err e;
    if (kg_session_expect(s, k, &ex, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return true;
    }
    struct kg_judgement j;
    kg_judge(k, x0, false, &ex, &j);
    if (!j.pass) {
        char d[KG_SUMMARY_MAX];
        kg_describe_worst(k, &ex, &j, d, sizeof d);
        kg_verdict_set(v, KG_FAIL, "declared in-place (alias), but wrong in place: %s", d);
        kg_judgement_evidence(s, k, &ex, &j, v);
    }
    kg_expect_free(&ex);
    return !j.pass;
}

/* zero, zero again (determinism check for this gate), garbage, sentinel */
static const enum kg_fill fills[] = {KG_FILL_ZERO, KG_FILL_ZERO, KG_FILL_GARBAGE, KG_FILL_SENTINEL_A};
static const char *const fill_names[] = {"zeros", "zeros", "garbage", "NaN sentinel"};

/* The four prefilled runs with their outputs left in the worker (KG_CAP_DIGEST; not for a
 * declared alias, judged against the oracle in place): the inputs are checked from the first as
 * below, and where the four digests are equal and the kernel has not been seen to differ run to
 * run, the outputs are independent of their prior contents bit for bit, as reads_prior would
 * find: 1, a pass, nothing copied to the judge; 2: a run failed or an input changed (v says so,
 * as below); 0: an output shares an input's storage or the digests differ, and -1 where there
 * are no digests: the runs are made again with the outputs. */
static int prior_by_digest(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                           struct kg_verdict *v)
{
    bool alias = false;
    for (int i = 0; i < k->c->nargs; i++) alias |= k->c->alias_of[i] >= 0;
    if (alias || !kg_session_can(s, KG_CAP_DIGEST)) return -1;
    struct kg_exec x[4];
    int n = 0, rc = 1;
    for (; n < 4 && rc == 1; n++) {
        struct kg_exec_opts o = {.fill = fills[n], .guard_byte = 0xA5, .flags = KG_RUN_DIGEST};
        if (kg_exec(s, k, in, &o, &x[n]) != KG_WS_OK) {
            kg_verdict_from_exec(v, k, &x[n]);
            kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
            rc = 2;
        } else if (n == 0 && (x[0].found & KG_RUN_OUT_SHARES_INPUT))
            rc = 0;
        else if (n == 0 && input_changed(s, k, &x[0], v))
            rc = 2;
        else if (n > 0 && (kg_session_nondeterministic(s) || !kg_exec_digests_equal(k, &x[0], &x[n])))
            rc = 0;
    }
    for (int r = 0; r < n; r++) kg_exec_free(&x[r]);
    if (rc == 1) v->ncases = 4;
    return rc;
}

/* The verdict on a run whose worker saw an output share an input's storage. */
static void shares_input(struct kg_session *s, const struct kg_case *k, const struct kg_exec *x, struct kg_verdict *v)
{
    kg_verdict_set(v, KG_FAIL, "an output shares storage with an input (it is a view of, or is, the input)");
    kg_verdict_detail(v, "%s", x->msg);
    kg_verdict_cause(v, KG_CAUSE_INPUT_MUTATED, "an output is a view of an input: writing it writes the input");
    kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
}

/* The nominal case's run with a zero prefill, for its inputs (input_changed) and whether an output
 * is a view of one: true when it passed, else v is set. Its outputs stay in the worker where it
 * digests. */
static bool nominal_inputs_intact(struct kg_session *s, struct kg_verdict *v)
{
    struct kg_case k;
    struct kg_inputs in;
    if (kg_nominal_inputs(s, &k, &in, v)) return false;
    struct kg_exec x;
    struct kg_exec_opts o = {
        .fill = fills[0], .guard_byte = 0xA5, .flags = kg_session_can(s, KG_CAP_DIGEST) ? KG_RUN_DIGEST : 0};
    bool ok = false;
    if (kg_exec(s, &k, &in, &o, &x) != KG_WS_OK) {
        kg_verdict_from_exec(v, &k, &x);
        kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
    } else if (x.found & KG_RUN_OUT_SHARES_INPUT) {
        shares_input(s, &k, &x, v);
    } else
        ok = !input_changed(s, &k, &x, v);
    kg_exec_free(&x);
    kg_inputs_free(&in);
    return ok;
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    struct kg_case k;
    struct kg_inputs in;
    struct kg_err e;
    if (kg_lean_case(s, kg_contract_default_dtype(kg_session_contract(s)), 0, KG_DIST_NORMAL, &k, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return;
    }
    if (!k.nominal && !nominal_inputs_intact(s, v)) return;
    if (kg_session_inputs(s, &k, &in, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return;
    }
    char lean[160];
    kg_lean_words(s, &k, lean, sizeof lean);
    struct kg_exec x[4];
    int n = 0;
    const int fast = prior_by_digest(s, &k, &in, v);
    if (fast == 1)
        kg_verdict_set(
            v, KG_PASS,
            "inputs unchanged; outputs independent of their prior contents (zeros, garbage, NaN; compared by "
            "digest)%s",
            lean);
    if (fast >= 1) goto out;
    for (; n < 4; n++) {
        struct kg_exec_opts o = {.fill = fills[n], .guard_byte = 0xA5};
        kg_exec(s, &k, &in, &o, &x[n]);
        if (x[n].status != KG_WS_OK) {
            kg_verdict_from_exec(v, &k, &x[n]);
            kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
            kg_exec_free(&x[n]);
            goto out;
        }
    }
    v->ncases = 4;
    bool deterministic = true, has_alias = false;
    if (x[0].found & KG_RUN_OUT_SHARES_INPUT) {
        shares_input(s, &k, &x[0], v);
    } else if (!input_changed(s, &k, &x[0], v) && !reads_prior(s, &k, x, fill_names, &deterministic, v) &&
               !wrong_in_place(s, &k, &x[0], &has_alias, v)) {
        kg_verdict_set(v, KG_PASS,
                       "inputs unchanged; outputs independent of their prior contents (zeros, garbage, NaN)%s%s%s",
                       has_alias ? "; correct in place as declared" : "",
                       deterministic ? "" : " (judged by threshold: the kernel is not bit-reproducible)", lean);
    }
out:
    for (int r = 0; r < n; r++) kg_exec_free(&x[r]);
    kg_inputs_free(&in);
}

const struct kg_gate kg_gate_aliasing = {
    .id = "aliasing",
    .title = "inputs untouched, outputs not read, aliasing as declared",
    .tolerance_free = true,
    .explain = "Runs the nominal case with the outputs prefilled with zeros (twice), garbage and NaN (over the case\n"
               "budget: one run at the nominal size for the inputs, the four at a smaller batch). Inputs\n"
               "(`in` tensors) must be bit-identical after the call; the outputs must not depend on the prefill\n"
               "(bitwise, or within the accuracy threshold for a kernel that is not bit-reproducible); with\n"
               "`alias: y=x` the kernel runs in place and must still be right. Catches: inputs used as scratch or\n"
               "zeroed, `y +=` accumulation that assumes a zeroed output, in-place updates that were not declared.\n"
               "Tolerance-free: a changed input or a prefill-dependent output is a bit-level fact.",
    .explain_python =
        "KernelBench format: inputs must be bit-identical after the call, and no output may share storage\n"
        "with an input. The prefilled runs' outputs are compared by the worker's digests of them; they\n"
        "come to the judge only when two differ.",
    .run = run,
};
