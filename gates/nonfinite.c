/* nonfinite.c: NaN, +Inf, -Inf, -0 and subnormals are injected into the inputs at recorded
 * positions; the output's non-finite positions and kinds must equal the oracle's exactly.
 * Finite values are not judged here (that is accuracy's job), so this gate needs no
 * tolerance. Integer outputs (argmax) must equal the oracle's exactly. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

static int cls(double v)
{
    return isnan(v) ? 1 : v == INFINITY ? 2 : v == -INFINITY ? 3 : 0;
}

static const char *cls_name(double v)
{
    static const char *const n[] = {"finite", "NaN", "+Inf", "-Inf"};
    return n[cls(v)];
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
    for (int seed = 0; seed < 2 && !failed; seed++) {
        struct kg_case k;
        struct kg_err e;
        if (kg_nominal_case(s, kg_contract_default_dtype(c), (uint64_t)seed, KG_DIST_SPECIAL, &k, &e)) {
            kg_verdict_set(v, KG_ERROR, "%s", e.msg);
            break;
        }
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
            return;
        }
        struct kg_expect ex;
        if (kg_session_expect(s, &k, &ex, &e)) {
            kg_verdict_set(v, KG_ERROR, "%s", e.msg);
            kg_exec_free(&x);
            kg_inputs_free(&in);
            break;
        }
        v->ncases++;
        for (int j = 0; j < ex.nout && !failed; j++) {
            const struct kg_tensor *got = &x.after[ex.arg[j]];
            const double *exp = ex.exact[j].data, *alt = ex.alt[j].data;
            int64_t mism = 0, first = -1;
            for (int64_t i = 0; i < got->numel; i++) {
                double g = kg_load(got->dtype, got->data, i);
                bool bad = ex.int_out || !kg_dtype_is_float(got->dtype) ? !(g == exp[i]) && !(isnan(g) && isnan(exp[i]))
                                                                        : cls(g) != cls(exp[i]);
                /* an op with two legitimate algorithms: either's pattern is right */
                if (bad && alt && cls(g) == cls(alt[i])) bad = false;
                if (cls(exp[i])) oracle_nonfinite++;
                if (bad) {
                    if (first < 0) first = i;
                    mism++;
                }
            }
            positions += got->numel;
            if (mism) {
                failed = true;
                char idx[96];
                kg_tensor_index_str(got, first, idx, sizeof idx);
                double g = kg_load(got->dtype, got->data, first);
                const char *name = c->args[ex.arg[j]].name;
                if (ex.int_out || !kg_dtype_is_float(got->dtype))
                    kg_verdict_set(v, KG_FAIL, "%s%s = %.17g, expected %.17g with special inputs (%lld of %lld differ)",
                                   name, idx, g, exp[first], (long long)mism, (long long)got->numel);
                else
                    kg_verdict_set(
                        v, KG_FAIL, "%s%s is %s (%g), the oracle gives %s (%g): %lld of %lld positions differ", name,
                        idx, cls_name(g), g, cls_name(exp[first]), exp[first], (long long)mism, (long long)got->numel);
                kg_verdict_detail(v, "Special values were injected into the inputs (see evidence.injected). A NaN "
                                     "that disappears was swallowed (fmaxf, a comparison that drops NaN, a "
                                     "clamp); an Inf that turns finite or NaN shows an unsafe formula.");
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
                       "(%lld non-finite), 2 seeds",
                       (long long)positions, (long long)oracle_nonfinite);
    v->extra = json_pack("{s:o,s:I}", "injected", inj, "oracle_nonfinite", (json_int_t)oracle_nonfinite);
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
