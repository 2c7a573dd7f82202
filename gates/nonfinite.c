/* nonfinite.c: NaN, +Inf, -Inf, -0 and subnormals are injected into the inputs at recorded
 * positions; the output's non-finite positions and kinds must equal the oracle's exactly.
 * Finite values are not judged here (that is accuracy's job), so this gate needs no
 * tolerance. Integer outputs (argmax) must equal the oracle's exactly. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

static const char *cls_name(double v)
{
    static const char *const n[] = {"finite", "NaN", "+Inf", "-Inf"};
    return n[kg_value_class(v)];
}

/* The injected special value most likely behind output element `flat` of output arg o, by
 * position alone: at the same flat index of an input as large, else in the same row of an input
 * whose size is a multiple of the output's (a reduction over trailing dims); -1 when neither. */
static int injected_for(const struct kg_case *k, const struct kg_inputs *in, int o, int64_t flat)
{
    int best = -1;
    for (int q = 0; q < in->nspecial && best < 0; q++)
        if (k->numel[in->special[q].arg] == k->numel[o] && in->special[q].index == flat) best = q;
    for (int q = 0; q < in->nspecial && best < 0; q++) {
        int64_t ni = k->numel[in->special[q].arg], no = k->numel[o];
        if (no > 0 && ni > no && ni % no == 0 && in->special[q].index / (ni / no) == flat) best = q;
    }
    return best;
}

/* ---- asking the oracle where a non-finite value comes from ---------------------------------- */

/* The oracle's values on inputs in with injected non-finite values replaced by a finite one
 * (0.5: inside the domain of log, sqrt, acos...): every NaN, and every infinity too unless
 * nan_only; special keep (-1: none) stays. -1 when the oracle cannot be asked. */
static int expect_replaced(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, bool nan_only,
                           int keep, struct kg_expect *ex)
{
    struct kg_inputs r;
    int rc = -1;
    if (kg_inputs_copy(&r, in)) goto out;
    for (int q = 0; q < in->nspecial; q++) {
        double val = in->special[q].value;
        if (q == keep || isfinite(val) || (nan_only && !isnan(val))) continue;
        kg_store(r.t[in->special[q].arg].dtype, r.t[in->special[q].arg].data, in->special[q].index, 0.5);
    }
    struct kg_err e;
    rc = kg_expect_compute(s, k, &r, ex, &e);
out:
    kg_inputs_free(&r);
    return rc;
}

/* The injected value that alone, among the non-finite ones (the NaNs only when nan_only), gives
 * output j's element pos the oracle's class: found by keeping it and replacing the others; by
 * position (injected_for) when none does. */
static int culprit(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                   const struct kg_expect *ex, int j, int64_t pos, bool nan_only)
{
    double want = ((const double *)ex->exact[j].data)[pos];
    for (int q = 0; q < in->nspecial; q++) {
        double val = in->special[q].value;
        if (isfinite(val) || (nan_only && !isnan(val))) continue;
        struct kg_expect e2;
        if (expect_replaced(s, k, in, nan_only, q, &e2)) continue;
        bool it = kg_value_class(((const double *)e2.exact[j].data)[pos]) == kg_value_class(want);
        kg_expect_free(&e2);
        if (it) return q;
    }
    return injected_for(k, in, ex->arg[j], pos);
}

static void num_words(double v, bool unwritten, char *buf, size_t n)
{
    if (unwritten)
        snprintf(buf, n, "unwritten");
    else if (isnan(v))
        snprintf(buf, n, "NaN");
    else if (isinf(v))
        snprintf(buf, n, v > 0 ? "+Inf" : "-Inf");
    else
        snprintf(buf, n, "%.9g", v);
}

/* The cause of a class mismatch at one element: got g, the oracle e; finite_ok says whether
 * the finite elements are right (else the output is wrong everywhere: not a NaN/Inf matter).
 * A NaN of the oracle that the kernel does not give is nan-swallowed only where it comes from
 * an input NaN (decided by the caller, who asked the oracle): one made of infinities (inf - inf)
 * is the kernel's different Inf arithmetic, not diagnosed. */
static enum kg_cause diagnose(double g, double e, bool unwritten, bool finite_ok)
{
    if (unwritten || !finite_ok) return KG_CAUSE_GATE;
    if (isnan(e)) return KG_CAUSE_GATE;
    if (isinf(e)) return KG_CAUSE_INF_LOST;
    return KG_CAUSE_SPURIOUS_NONFINITE;
}

/* The injection line "x[1059] = NaN -> y[1059] = 0, oracle NaN" for element i of output j
 * (special q, or none) */
static void inject_line(const struct kg_contract *c, const struct kg_inputs *in, int q, const struct kg_tensor *got,
                        const char *name, int64_t i, double exp, bool unwritten, char *line, size_t n)
{
    char idx[96], gw[40], ew[40];
    kg_tensor_index_str(got, i, idx, sizeof idx);
    num_words(kg_load(got->dtype, got->data, i), unwritten, gw, sizeof gw);
    num_words(exp, false, ew, sizeof ew);
    if (q >= 0) {
        char iidx[96], iv[40];
        kg_tensor_index_str(&in->t[in->special[q].arg], in->special[q].index, iidx, sizeof iidx);
        num_words(in->special[q].value, false, iv, sizeof iv);
        snprintf(line, n, "%s%s = %s -> %s%s = %s, oracle %s", c->args[in->special[q].arg].name, iidx, iv, name, idx,
                 gw, ew);
    } else {
        snprintf(line, n, "%s%s = %s, oracle %s", name, idx, gw, ew);
    }
}

static double g_at(const struct kg_tensor *got, int64_t i)
{
    return kg_load(got->dtype, got->data, i);
}

static bool is_unwritten(const struct kg_contract *c, int arg, const struct kg_tensor *got, int64_t i)
{
    size_t es = kg_dtype_size(got->dtype);
    bool u = c->args[arg].io == KG_OUT;
    for (size_t b = 0; b < es && u; b++) u = ((const uint8_t *)got->data)[i * es + b] == 0xFF;
    return u;
}

/* The first element of output j where the oracle's NaN comes from an injected NaN (it turns
 * finite with the injected NaNs replaced) and the kernel gives a written, non-NaN value: a NaN
 * swallowed; -1 when none, *asked false when the oracle could not be asked. */
static int64_t swallowed_at(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                            const struct kg_expect *ex, int j, const struct kg_tensor *got, bool *asked)
{
    const struct kg_contract *c = k->c;
    const double *exp = ex->exact[j].data;
    *asked = true;
    bool any = false;
    for (int64_t i = 0; i < got->numel && !any; i++) any = isnan(exp[i]) && !isnan(g_at(got, i));
    if (!any) return -1;
    struct kg_expect e2;
    if (expect_replaced(s, k, in, true, -1, &e2)) {
        *asked = false;
        return -1;
    }
    const double *fin = e2.exact[j].data;
    int64_t at = -1;
    for (int64_t i = 0; i < got->numel && at < 0; i++)
        if (isnan(exp[i]) && isfinite(fin[i]) && !isnan(g_at(got, i)) &&
            !(ex->alt[j].data &&
              kg_value_class(((const double *)ex->alt[j].data)[i]) == kg_value_class(g_at(got, i))) &&
            !is_unwritten(c, ex->arg[j], got, i))
            at = i;
    kg_expect_free(&e2);
    return at;
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_contract *c = kg_session_contract(s);
    bool any_float_in = false;
    for (int i = 0; i < c->nargs; i++)
        if (kg_arg_is_input(&c->args[i]) &&
            kg_dtype_is_float(kg_arg_dtype(&c->args[i], kg_contract_default_dtype(c))) && c->args[i].dist != KG_AD_INT)
            any_float_in = true;
    if (!any_float_in) {
        kg_verdict_set(v, KG_SKIP, "no floating-point input to inject special values into");
        return;
    }
    json_t *inj = json_array();
    int64_t positions = 0, oracle_nonfinite = 0;
    bool failed = false;
    char at[140] = ""; /* where the second seed ran at a smaller batch: the batch */
    for (int seed = 0; seed < 2 && !failed; seed++) {
        struct kg_case k;
        struct kg_err e;
        /* the second seed at the lean batch (kg_lean_case: every row whole, within the case
         * budget): propagation is a property of each row's arithmetic, and the first seed keeps
         * the nominal size's code paths; at KernelBench's real sizes each seed at the nominal
         * was an fp64 oracle of the whole problem (a 4.3 GB average pool: 13.2 s for the two) */
        const enum kg_dtype dt = kg_contract_default_dtype(c);
        if (seed ? kg_lean_case(s, dt, (uint64_t)seed, KG_DIST_SPECIAL, &k, &e)
                 : kg_nominal_case(s, dt, (uint64_t)seed, KG_DIST_SPECIAL, &k, &e)) {
            kg_verdict_set(v, KG_ERROR, "%s", e.msg);
            break;
        }
        if (!k.nominal) kg_lean_words(s, &k, at, sizeof at);
        struct kg_inputs in;
        if (kg_session_inputs(s, &k, &in, &e)) {
            kg_verdict_set(v, KG_ERROR, "%s", e.msg);
            break;
        }
        for (int q = 0; q < in.nspecial && seed == 0; q++) {
            char idx[96];
            kg_tensor_index_str(&in.t[in.special[q].arg], in.special[q].index, idx, sizeof idx);
            char val[32];
            snprintf(val, sizeof val, "%g", in.special[q].value);
            json_array_append_new(
                inj, json_pack("{s:s,s:s,s:s}", "input", c->args[in.special[q].arg].name, "index", idx, "value", val));
        }
        struct kg_exec x;
        struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5};
        kg_exec(s, &k, &in, &o, &x);
        if (x.status != KG_WS_OK) {
            kg_verdict_from_exec(v, &k, &x);
            kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
            kg_exec_free(&x);
            kg_inputs_free(&in);
            json_decref(inj);
            return;
        }
        struct kg_expect ex;
        struct kg_classes cl[KG_OP_MAX_IO];
        if (kg_session_expect(s, &k, &ex, &e) || kg_compare_classes(s, &x, &ex, cl, &e)) {
            kg_expect_free(&ex);
            kg_verdict_set(v, KG_ERROR, "%s", e.msg);
            kg_exec_free(&x);
            kg_inputs_free(&in);
            break;
        }
        v->ncases++;
        for (int j = 0; j < ex.nout && !failed; j++) {
            const struct kg_tensor *got = &x.after[ex.arg[j]];
            const int64_t mism = cl[j].mismatches, first = cl[j].first;
            oracle_nonfinite += cl[j].oracle_nonfinite;
            positions += got->numel;
            if (mism) {
                failed = true;
                /* the diagnosis reads the values (a pass never needs them here) */
                if (kg_expect_values(s, &ex, &e)) {
                    kg_verdict_set(v, KG_ERROR, "%s", e.msg);
                    break;
                }
                const double *exp = ex.exact[j].data;
                char idx[96];
                kg_tensor_index_str(got, first, idx, sizeof idx);
                double g = kg_load(got->dtype, got->data, first);
                const char *name = c->args[ex.arg[j]].name;
                /* the finite elements: right within the threshold, or is the whole output wrong? */
                double worst_finite = 0;
                for (int64_t i = 0; i < got->numel; i++) {
                    double gi = kg_load(got->dtype, got->data, i);
                    if (!isfinite(gi) || !isfinite(exp[i])) continue;
                    double ei = kg_elem_err(gi, exp[i], ex.scale[j]);
                    if (!(ei <= worst_finite)) worst_finite = isnan(ei) ? INFINITY : ei;
                }
                bool finite_ok = worst_finite <= ex.threshold[j];
                bool unwritten = is_unwritten(c, ex.arg[j], got, first);
                char ew[40], line[KG_SUMMARY_MAX];
                num_words(exp[first], false, ew, sizeof ew);
                bool is_float = !ex.int_out && kg_dtype_is_float(got->dtype);
                /* an input NaN the output should carry and does not: asked of the oracle */
                bool asked = true;
                int64_t sw = is_float && finite_ok ? swallowed_at(s, &k, &in, &ex, j, got, &asked) : -1;
                int q = is_float ? culprit(s, &k, &in, &ex, j, first, false) : injected_for(&k, &in, ex.arg[j], first);
                inject_line(c, &in, q, got, name, first, exp[first], unwritten, line, sizeof line);
                json_t *lines = json_array();
                json_array_append_new(lines, json_string(line));
                v->extra = json_pack("{s:o}", "lines", lines);
                enum kg_cause cause = diagnose(g, exp[first], unwritten, finite_ok);
                if (sw >= 0) {
                    char swl[KG_SUMMARY_MAX];
                    inject_line(c, &in, culprit(s, &k, &in, &ex, j, sw, true), got, name, sw, exp[sw], false, swl,
                                sizeof swl);
                    if (sw != first) json_array_append_new(lines, json_string(swl));
                    kg_verdict_cause(v, KG_CAUSE_NAN_SWALLOWED, "%s", swl);
                } else if (cause == KG_CAUSE_GATE && unwritten)
                    kg_verdict_cause(v, cause, "%s: kgate's prefill, not a NaN the kernel made", line);
                else if (cause == KG_CAUSE_GATE && !finite_ok)
                    kg_verdict_cause(v, cause, "the finite outputs are wrong too (error %.2g, threshold %.2g)",
                                     worst_finite, ex.threshold[j]);
                else if (cause == KG_CAUSE_GATE && isnan(exp[first]) && !isnan(g))
                    kg_verdict_cause(v, cause,
                                     "%s: not diagnosed: the oracle's NaN %s, so no input NaN was swallowed; the "
                                     "kernel's arithmetic on infinities differs",
                                     line,
                                     asked ? "comes from the injected infinities (it stays NaN with the injected "
                                             "NaNs replaced by finite values)"
                                           : "could not be traced (the oracle failed on the inputs without NaNs)");
                else
                    kg_verdict_cause(v, cause, "%s", line);
                if (unwritten)
                    kg_verdict_set(
                        v, KG_FAIL,
                        "%s%s is unwritten (kgate's prefill), the oracle gives %s: %lld of %lld positions differ", name,
                        idx, ew, (long long)mism, (long long)got->numel);
                else if (ex.int_out || !kg_dtype_is_float(got->dtype))
                    kg_verdict_set(v, KG_FAIL, "%s%s = %.17g, expected %.17g with special inputs (%lld of %lld differ)",
                                   name, idx, g, exp[first], (long long)mism, (long long)got->numel);
                else
                    kg_verdict_set(
                        v, KG_FAIL, "%s%s is %s (%g), the oracle gives %s (%g): %lld of %lld positions differ", name,
                        idx, cls_name(g), g, cls_name(exp[first]), exp[first], (long long)mism, (long long)got->numel);
                kg_verdict_detail(v, "Special values were injected into the inputs (all of them: evidence.injected, "
                                     "and `show inputs` in the inspector). A NaN that disappears was swallowed "
                                     "(fmaxf, a comparison that drops NaN, a clamp); an Inf that turns finite or NaN "
                                     "shows an unsafe formula.");
                v->ev.unwritten = unwritten;
                v->ev.valid = true;
                kg_strlcpy(v->ev.output, name, sizeof v->ev.output);
                kg_strlcpy(v->ev.index, idx, sizeof v->ev.index);
                v->ev.flat = first;
                v->ev.got = g;
                v->ev.expected = exp[first];
                v->ev.err = INFINITY;
                kg_case_id(&k, v->ev.case_id, sizeof v->ev.case_id);
                kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
                size_t rl = strlen(v->replay);
                snprintf(v->replay + rl, sizeof v->replay - rl, " --dist special");
            }
        }
        kg_expect_free(&ex);
        kg_exec_free(&x);
        kg_inputs_free(&in);
    }
    if (!failed && v->ncases == 2)
        kg_verdict_set(v, KG_PASS,
                       "NaN, +-Inf, -0, subnormals injected: non-finite outputs match the oracle at all %lld positions "
                       "(%lld non-finite), 2 seeds%s%s",
                       (long long)positions, (long long)oracle_nonfinite, at[0] ? ", the second" : "", at);
    if (!v->extra) v->extra = json_object();
    json_object_set_new(v->extra, "injected", inj);
    json_object_set_new(v->extra, "oracle_nonfinite", json_integer(oracle_nonfinite));
}

const struct kg_gate kg_gate_nonfinite = {
    .id = "nonfinite",
    .title = "NaN and Inf propagate as in the oracle",
    .tolerance_free = true,
    .explain = "Injects one NaN, one +Inf, one -Inf, two -0 and two subnormals into every floating input at\n"
               "recorded positions (2 seeds), then requires that each output element is finite, NaN, +Inf or -Inf\n"
               "exactly when the fp64 oracle's is (the oracle follows PyTorch: relu(NaN) = NaN, max over a row\n"
               "with a NaN is NaN, argmax points at the first NaN). Catches: NaN swallowed by fmaxf or by a\n"
               "`x > 0 ? x : 0` that happens to be written the other way round, clamps, softmax without the max\n"
               "subtraction producing Inf/Inf, masks that turn -Inf into a finite value. Tolerance-free: only the\n"
               "class of each value is compared.",
    .explain_python = "KernelBench format: the same injections into the tensors get_inputs() returns.",
    .run = run,
};
