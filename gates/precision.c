/* precision.c: inputs that expose low-precision accumulation: a large common mean (1e3 + noise),
 * and the reduction axis made long with positive inputs. Both are judged against the
 * working-precision reference evaluated on the same inputs, so fp32 accumulation passes and
 * fp16/bf16 accumulation or TF32 products do not. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_contract *c = kg_session_contract(s);
    const struct kg_session_opts *opt = kg_session_opts(s);
    enum kg_dtype dts[KG_MAX_DTYPES];
    int nd = kg_instance_dtypes(s, dts);
    int rs = opt->pin_shape ? -1 : kg_reduce_symbol(s);
    json_t *list = json_array();
    v->extra = json_pack("{s:o}", "cases", list);
    double worst = -1;
    int64_t long_len = 0;
    int judged[2] = {0, 0}; /* cases judged: large-mean, long reduction */
    char at[160] = "";      /* where the large-mean case is not the nominal one: its batch */
    char lost[256] = "";    /* the first case whose every output the reference lost */
    for (int d = 0; d < nd; d++)
        for (int variant = 0; variant < 2; variant++) {
            struct kg_case k;
            struct kg_err e;
            if (variant == 0) {
                if (kg_lean_case(s, dts[d], 0, KG_DIST_LARGE_MEAN, &k, &e)) {
                    kg_verdict_set(v, KG_ERROR, "%s", e.msg);
                    return;
                }
                if (!k.nominal && !at[0]) kg_lean_words(s, &k, at, sizeof at);
            } else {
                if (rs < 0) continue;
                int64_t sym[KG_MAX_SYMS]; /* from the lean case: a smaller batch leaves room for a longer axis */
                if (kg_lean_case(s, dts[d], 0, KG_DIST_UNIT, &k, &e)) continue;
                memcpy(sym, k.sym, sizeof sym);
                int64_t target = c->nominal[rs] * 8 > 16384 ? c->nominal[rs] * 8 : 16384;
                for (;; target /= 2) {
                    sym[rs] = target;
                    if (target <= c->nominal[rs]) break;
                    if (kg_case_init(&k, c, sym, dts[d], opt->seed, KG_DIST_UNIT, &e)) break;
                    if (kg_case_affordable(s, &k)) break;
                }
                if (target <= c->nominal[rs]) continue;
                if (kg_case_init(&k, c, sym, dts[d], opt->seed, KG_DIST_UNIT, &e)) continue;
                long_len = target;
            }
            struct kg_judgement j;
            struct kg_expect ex;
            struct kg_exec x;
            if (kg_check_case(s, &k, NULL, &j, &ex, &x, v)) return;
            v->ncases++;
            char id[KG_CASE_ID_MAX];
            kg_case_id(&k, id, sizeof id);
            json_array_append_new(list, kg_case_json(id, &ex, &j));
            if (!j.pass && v->status == KG_FAIL) { /* exhaustive: a later failure, recorded only */
                kg_exec_free(&x);
                kg_expect_free(&ex);
                continue;
            }
            if (!j.pass) {
                char desc[KG_DESCRIBE_MAX];
                const char *what = variant ? "long reduction" : "large-mean inputs (1e3 + N(0,1))";
                kg_describe_worst(&k, &ex, &j, desc, sizeof desc);
                kg_verdict_set(v, KG_FAIL, "%s%s: %s", what, variant ? "" : at, desc);
                kg_verdict_detail(v, "An fp32-accumulating kernel stays within k x the reference's error on these "
                                     "inputs; accumulating in fp16/bf16, or TF32 products, does not.");
                kg_judgement_evidence(s, &k, &ex, &j, v);
                struct kg_inputs in;
                if (kg_session_inputs(s, &k, &in, &e) == 0) {
                    /* a large common mean makes a one-pass variance cancel: an algorithm's fault */
                    kg_diagnose(s, &k, &in, &x, &ex, &j, variant ? NULL : what, false, v);
                    kg_inputs_free(&in);
                } else {
                    kg_verdict_cause(v, KG_CAUSE_GATE, "not diagnosed: %s", e.msg);
                }
                kg_exec_free(&x);
                kg_expect_free(&ex);
                if (!opt->exhaustive) return;
                continue;
            }
            if (j.nlost == ex.nout) { /* nothing judged: the reference has no answer to hold the kernel to */
                if (!lost[0])
                    snprintf(lost, sizeof lost,
                             "%s: the %s reference itself loses %s (its error %.2g of the output's scale)",
                             variant ? "long reduction" : "large-mean inputs", kg_dtype_name(dts[d]),
                             c->args[ex.arg[j.worst]].name, ex.ref_err[j.worst]);
            } else {
                judged[variant]++;
                if (j.margin > worst) worst = j.margin;
            }
            kg_exec_free(&x);
            kg_expect_free(&ex);
        }
    if (v->status == KG_FAIL) return;
    if (!judged[0] && !judged[1] && lost[0]) {
        kg_verdict_set(v, KG_SKIP, "nothing to judge: %s, so every %s answer there is rounding noise%s", lost,
                       kg_dtype_name(dts[0]), rs < 0 ? "; no single-symbol reduction axis to lengthen" : "");
        return;
    }
    char what[400];
    if (judged[1])
        snprintf(what, sizeof what, "%s%s%sa long reduction (%s=%lld)", judged[0] ? "large-mean inputs" : "",
                 judged[0] ? at : "", judged[0] ? " and " : "", c->sym[rs], (long long)long_len);
    else
        snprintf(what, sizeof what, "large-mean inputs%s", at);
    kg_verdict_set(v, KG_PASS, "%s within threshold (worst at %.2g of it)%s%s%s", what, worst,
                   rs < 0 ? "; no single-symbol reduction axis to lengthen" : "", lost[0] ? "; not judged: " : "",
                   lost);
}

const struct kg_gate kg_gate_precision = {
    .id = "precision",
    .title = "no low-precision accumulation",
    .tolerance_free = false,
    .explain = "Two cases per instance dtype: inputs 1e3 + N(0,1) at the nominal shape, and the op's reduction axis\n"
               "(the K of a matmul, the reduced dim of a sum or softmax) lengthened to 8x nominal or 16384 with\n"
               "positive U[0,1) inputs. The threshold is calibrated on the same inputs against sequential fp32\n"
               "accumulation, so a legitimate fp32 kernel passes. Catches: fp16/bf16 accumulators, TF32 in an fp32\n"
               "matmul, half-precision intermediates, one-pass variance. An output the working-precision reference\n"
               "itself loses on a case (its error 0.1 of the output's scale or more: the answer cancels below the\n"
               "dtype's resolution, as a KL divergence of probabilities shifted by 1e3 does) is not judged there.\n"
               "A nominal case over the case budget runs with its batch (the leading dim of every output) halved\n"
               "until it fits, where the kernel is right at that batch on N(0,1) inputs: accumulation is along rows.",
    .explain_python = "KernelBench format: get_inputs() values shifted by 1e3, and the reduction size constant raised.",
    .run = run,
};
