/* accuracy.c: the nominal shape, several seeds, every dtype instance: the error against the
 * fp64 oracle must stay within k x the error of the working-precision reference + floor. The
 * first seed runs the nominal case; the others vary the values, not the shape, so where the
 * nominal case is over the case budget they run at the lean batch (kg_lean_case: every row
 * whole, fewer of them; at KernelBench's real sizes a nominal case costs seconds: l1_42's three
 * took 14.1 s on the H200). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

#define SEEDS 3

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_contract *c = kg_session_contract(s);
    enum kg_dtype dts[KG_MAX_DTYPES];
    int nd = kg_instance_dtypes(s, dts);
    double worst_margin = -1, worst_ratio = 0, worst_err = 0;
    json_t *cases = json_array();
    int ncases = 0, conditioned = 0;
    char at[160] = ""; /* where seeds after the first run at a smaller batch: the batch */
    for (int d = 0; d < nd; d++)
        for (int seed = 0; seed < SEEDS; seed++) {
            struct kg_case k;
            struct kg_err e;
            if (seed ? kg_lean_case(s, dts[d], (uint64_t)seed, KG_DIST_NORMAL, &k, &e)
                     : kg_nominal_case(s, dts[d], (uint64_t)seed, KG_DIST_NORMAL, &k, &e)) {
                kg_verdict_set(v, KG_ERROR, "%s", e.msg);
                goto out;
            }
            if (!k.nominal && !at[0]) {
                char w[140];
                kg_lean_words(s, &k, w, sizeof w);
                snprintf(at, sizeof at, "; seeds 2-%d%s", SEEDS, w);
            }
            struct kg_judgement j;
            struct kg_expect ex;
            struct kg_exec x;
            if (kg_check_case(s, &k, NULL, &j, &ex, &x, v)) goto out;
            ncases++;
            conditioned += j.pass && j.conditioned;
            char id[KG_CASE_ID_MAX];
            kg_case_id(&k, id, sizeof id);
            json_array_append_new(cases, kg_case_json(id, &ex, &j));
            if (j.margin > worst_margin) {
                worst_margin = j.margin;
                worst_ratio = j.ratio;
                worst_err = j.cmp[j.worst].max_err;
                kg_judgement_evidence(s, &k, &ex, &j, v);
                if (!j.pass) {
                    char w[KG_DESCRIBE_MAX];
                    kg_describe_worst(&k, &ex, &j, w, sizeof w);
                    kg_verdict_set(v, KG_FAIL, "%s [%s seed %llu]", w, kg_dtype_name(k.dtype),
                                   (unsigned long long)k.seed);
                }
            }
            if (!j.pass && v->cause == KG_CAUSE_NONE) { /* the first failure is diagnosed */
                struct kg_inputs in;
                if (kg_session_inputs(s, &k, &in, &e) == 0) {
                    kg_diagnose(s, &k, &in, &x, &ex, &j, NULL, true, v);
                    kg_inputs_free(&in);
                } else {
                    kg_verdict_cause(v, KG_CAUSE_GATE, "not diagnosed: %s", e.msg);
                }
            }
            kg_exec_free(&x);
            kg_expect_free(&ex);
        }
    v->ncases = ncases;
    if (worst_margin > 1 || isnan(worst_margin)) {
        kg_verdict_detail(v,
                          "threshold = k x (error of the working-precision reference vs fp64) + floor(dtype), "
                          "k = %g; the reference accumulates sequentially in the working precision, the least "
                          "accurate legitimate order.",
                          c->tol_k);
    } else {
        char dl[64] = "";
        size_t len = 0;
        for (int d = 0; d < nd; d++) kg_appendf(dl, sizeof dl, &len, "%s%s", d ? "," : "", kg_dtype_name(dts[d]));
        if (worst_err == 0)
            kg_verdict_set(v, KG_PASS, "exact on %d cases (%d seeds, %s%s)", ncases, SEEDS, dl, at);
        else if (isinf(worst_ratio))
            kg_verdict_set(v, KG_PASS, "max error %.2e within the floor (the reference is exact), %d seeds, %s%s",
                           worst_err, SEEDS, dl, at);
        else
            kg_verdict_set(v, KG_PASS, "max error %.2e = %.2gx the reference's (limit %gx + floor), %d seeds, %s%s",
                           worst_err, worst_ratio, c->tol_k, SEEDS, dl, at);
        if (conditioned)
            kg_verdict_detail(v,
                              "%d case%s passed only on the inputs' conditioning: every element over the threshold "
                              "errs by at most %gx the change of the fp64 oracle itself there when the fp32 inputs "
                              "move by an ulp or two (an ill-conditioned row, where the reference was luckier than "
                              "a legitimate algorithm need be).",
                              conditioned, conditioned == 1 ? "" : "s", KG_SENS_K);
        v->replay[0] = 0;
    }
out:
    v->extra = json_pack("{s:o}", "cases", cases);
}

const struct kg_gate kg_gate_accuracy = {
    .id = "accuracy",
    .title = "error vs fp64 oracle at the nominal shape",
    .tolerance_free = false,
    .explain = "Runs the nominal shape with 3 seeds of N(0,1) inputs (every instance dtype) and measures each\n"
               "element's error against the fp64 oracle: |got - exp| / (|exp| + rms(exp)). The threshold is\n"
               "calibrated, not guessed: k (default 2) times the error of the working-precision reference (the\n"
               "same op computed with inputs rounded to the dtype and sequential fp32 accumulation, the least\n"
               "accurate legitimate kernel) plus a floor of 8 units of roundoff of the output dtype.\n"
               "Catches: wrong formulas, wrong indexing, TF32 or fp16 shortcuts that hurt at this shape, fast-math\n"
               "approximations. Not tolerance-free: the threshold depends on k; the ratio err/ref is reported.\n"
               "Seeds 2 and 3 vary the values, not the shape: where the nominal case is over the case budget they\n"
               "run at a smaller batch, as precision does (every row whole, fewer rows).",
    .explain_python = "KernelBench format: the reference Model run in float64 is the oracle; the same Model in the\n"
                      "problem's dtype is the working-precision reference that calibrates the threshold.",
    .run = run,
};
