/* reduction_order.c: cancellation and mixed magnitudes (+-1e-4..1e4, alternating signs), and,
 * for ops whose result does not depend on the order of the reduced elements (sum, mean, max,
 * min), the reduced axis sorted ascending, the order that makes sequential partial sums
 * swing the most. Judged against the working-precision reference on the same inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/gate.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts every line of tensor t along axis, in place (through float64 values). */
static int sort_axis(struct kg_tensor *t, int axis)
{
    int64_t strides[KG_MAX_RANK];
    kg_tensor_strides(t, strides);
    int64_t len = t->dims[axis], st = strides[axis];
    if (len < 2) return 0;
    double *line = malloc((size_t)len * sizeof *line);
    if (!line) return -1;
    int64_t lines = t->numel / len;
    for (int64_t l = 0; l < lines; l++) {
        /* line l: outer index and inner index around the axis */
        int64_t inner = l % st, outer = l / st, base = outer * st * len + inner;
        for (int64_t i = 0; i < len; i++) line[i] = kg_load(t->dtype, t->data, base + i * st);
        qsort(line, (size_t)len, sizeof *line, cmp_double);
        for (int64_t i = 0; i < len; i++) kg_store(t->dtype, t->data, base + i * st, line[i]);
    }
    free(line);
    return 0;
}

static int check_inputs(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_verdict *v,
                        const char *what, json_t *list)
{
    struct kg_exec x;
    struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5};
    kg_exec(s, k, in, &o, &x);
    if (x.status != KG_WS_OK) {
        kg_verdict_from_exec(v, k, &x);
        kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
        kg_exec_free(&x);
        return -1;
    }
    struct kg_expect ex;
    struct kg_err e;
    if (kg_expect_for_judge(s, k, in, &ex, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        kg_exec_free(&x);
        return -1;
    }
    struct kg_judgement j;
    kg_judge(k, &x, false, &ex, &j);
    v->ncases++;
    json_array_append_new(list, kg_case_json(what, &ex, &j));
    int rc = 0;
    if (!j.pass && v->status == KG_FAIL) { /* exhaustive: a later failure, recorded only */
        rc = 1;
    } else if (!j.pass) {
        char d[KG_DESCRIBE_MAX];
        kg_describe_worst(k, &ex, &j, d, sizeof d);
        kg_verdict_set(v, KG_FAIL, "%s: %s", what, d);
        kg_verdict_detail(v, "Inputs with mixed magnitudes and cancellations separate kernels that reduce stably "
                             "(max-subtracted softmax, two-pass variance, fp32 accumulators) from those that do not.");
        kg_judgement_evidence(s, k, &ex, &j, v);
        kg_diagnose(s, k, in, &x, &ex, &j, what, false, v);
        rc = 1;
    }
    kg_expect_free(&ex);
    kg_exec_free(&x);
    return rc;
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_session_opts *opt = kg_session_opts(s);
    enum kg_dtype dts[KG_MAX_DTYPES];
    int nd = kg_instance_dtypes(s, dts);
    json_t *list = json_array();
    v->extra = json_pack("{s:o}", "cases", list);
    bool sorted = false;
    char at[160] = ""; /* where the cases are not the nominal one: their batch */
    for (int d = 0; d < nd; d++) {
        struct kg_case k;
        struct kg_err e;
        struct kg_inputs in;
        if (kg_lean_case(s, dts[d], 0, KG_DIST_MIXED, &k, &e) || kg_session_inputs(s, &k, &in, &e)) {
            kg_verdict_set(v, KG_ERROR, "%s", e.msg);
            return;
        }
        if (!k.nominal && !at[0]) kg_lean_words(s, &k, at, sizeof at);
        char what[256];
        snprintf(what, sizeof what, "mixed magnitudes (+-1e-4..1e4, alternating signs)%s", k.nominal ? "" : at);
        int rc = check_inputs(s, &k, &in, v, what, list);
        kg_inputs_free(&in);
        if (rc < 0 || (rc && !opt->exhaustive)) return;
        /* sorted reduce axis, for order-invariant ops */
        const struct kg_contract *c = kg_session_contract(s);
        if (!c->has_op || !(c->op.def->flags & KG_OP_PERMUTABLE)) continue;
        int first = -1;
        for (int i = 0; i < c->nargs; i++)
            if (kg_arg_is_input(&c->args[i])) {
                first = i;
                break;
            }
        if (first < 0) continue;
        int axis = kg_op_reduce_axis(&c->op, &k.shape[first]);
        if (axis < 0) continue;
        struct kg_inputs lent;
        if (kg_lean_case(s, dts[d], 1, KG_DIST_NORMAL, &k, &e) || kg_session_inputs(s, &k, &lent, &e)) {
            kg_verdict_set(v, KG_ERROR, "%s", e.msg);
            return;
        }
        int copied = kg_inputs_copy(&in, &lent); /* sorted in place: a copy of the memo's */
        kg_inputs_free(&lent);
        if (copied || sort_axis(&in.t[first], axis)) {
            kg_verdict_set(v, KG_ERROR, "out of memory sorting the reduction axis");
            kg_inputs_free(&in);
            return;
        }
        snprintf(what, sizeof what, "reduction axis sorted ascending%s", k.nominal ? "" : at);
        rc = check_inputs(s, &k, &in, v, what, list);
        kg_inputs_free(&in);
        if (rc < 0) return;
        if (rc && v->status == KG_FAIL && !opt->exhaustive) {
            size_t l = strlen(v->replay);
            if (l)
                snprintf(v->replay + l, sizeof v->replay - l, "  # with %s sorted along dim %d", c->args[first].name,
                         axis);
            return;
        }
        sorted = true;
    }
    if (v->status == KG_FAIL) return;
    kg_verdict_set(v, KG_PASS, "mixed magnitudes%s within threshold%s", sorted ? " and a sorted reduction axis" : "",
                   at);
}

const struct kg_gate kg_gate_reduction_order = {
    .id = "reduction-order",
    .title = "stable under cancellation and reordering",
    .tolerance_free = false,
    .explain = "Inputs of mixed magnitude, 10^U(-4,4) with alternating signs, at the nominal shape; for ops that do\n"
               "not depend on the order of the reduced elements (sum, mean, max, min) also N(0,1) inputs sorted\n"
               "ascending along the reduced axis. Judged against the working-precision reference on the same\n"
               "inputs. Catches: softmax without the max subtraction (exp overflows), one-pass variance\n"
               "(E[x^2]-E[x]^2 cancels), low-precision partial sums, and kernels right only for random order.\n"
               "A nominal case over the case budget runs with its batch halved until it fits, as precision's does.",
    .explain_python = "KernelBench format: the same value transformations applied to get_inputs().",
    .run = run,
};
