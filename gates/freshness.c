/* freshness.c: a kernel must compute from the values it is given, every call. Four runs:
 * X1 in new buffers; X2 in the same buffers (catches caching keyed on pointers); X1 in new
 * buffers (catches state kept between calls); X1 in the same buffers with the outputs
 * poisoned (catches "already computed, skip"). Where the runner digests, a run whose outputs
 * have the bytes of a run of the same case that passed (accuracy's, or an earlier one here)
 * takes its judgement instead of being compared again (kg_exec_judged).
 * At the lean case (kg_lean_case: the nominal one, or over the case budget the same with a
 * smaller batch where the kernel is right there): what is cached between calls does not depend
 * on how many rows there are, and at real sizes the four nominal runs and X2's oracle took 7.1
 * of a 4.3 GB max pool's 37 s check (H100, 2026-12-06). Where the kernel is wrong at the smaller
 * batch the case stays nominal, as for accuracy's later seeds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

struct scenario {
    const char *what;
    int inputs; /* 0: X1, 1: X2 */
    uint32_t flags;
    enum kg_fill fill;
    const char *meaning;
};

static const struct scenario steps[] = {
    {"first call", 0, 0, KG_FILL_SENTINEL_A, ""},
    {"new values in the same buffers", 1, KG_RUN_REUSE, KG_FILL_SENTINEL_A,
     "the kernel returned a stale answer when only the values changed: a cache keyed on pointers or shapes"},
    {"the first values again in new buffers", 0, 0, KG_FILL_SENTINEL_B,
     "the kernel's answer depends on what earlier calls left behind (state kept between calls)"},
    {"same values and buffers, outputs poisoned", 0, KG_RUN_REUSE, KG_FILL_GARBAGE,
     "the kernel skipped work because the call looked like a repeat: the poisoned output survived"},
};

static void run(struct kg_session *s, struct kg_verdict *v)
{
    struct kg_case k[2];
    struct kg_inputs in[2];
    struct kg_expect ex[2];
    struct kg_err e;
    int ready = kg_prepare_cases(s, 2, true, k, in, ex, &e);
    if (ready < 2) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        goto out;
    }
    json_t *runs = json_array();
    v->extra = json_pack("{s:o}", "runs", runs);
    int by_digest = 0; /* runs judged by their outputs' digests (kg_exec_judged): not compared again */
    for (size_t st = 0; st < sizeof steps / sizeof *steps; st++) {
        const struct scenario *sc = &steps[st];
        int w = sc->inputs;
        struct kg_exec x;
        struct kg_exec_opts o = {.fill = sc->fill, .guard_byte = 0xA5, .flags = sc->flags};
        struct kg_judgement j;
        kg_exec_judged(s, &k[w], &in[w], &o, &ex[w], &x, &j);
        if (x.status != KG_WS_OK) {
            kg_verdict_from_exec(v, &k[w], &x);
            kg_replay(s, v->gate, &k[0], v->replay, sizeof v->replay);
            kg_exec_free(&x);
            goto out;
        }
        v->ncases++;
        by_digest += x.judged_by_digest;
        json_array_append_new(runs, json_pack("{s:s,s:b,s:f,s:b}", "run", sc->what, "pass", j.pass, "error",
                                              j.cmp[j.worst].max_err, "by_digest", x.judged_by_digest));
        if (!j.pass) {
            char desc[KG_DESCRIBE_MAX];
            kg_describe_worst(&k[w], &ex[w], &j, desc, sizeof desc);
            if (st == 0) {
                kg_verdict_set(v, KG_SKIP, "the first call is already wrong (%s); see accuracy", desc);
                kg_exec_free(&x);
                goto out;
            }
            /* did it return the other input's answer? */
            struct kg_judgement other;
            kg_judge(&k[!w], &x, false, &ex[!w], &other);
            kg_verdict_set(v, KG_FAIL, "%s: %s", sc->what, desc);
            kg_verdict_detail(v, "%s%s", sc->meaning,
                              other.pass ? " (the output equals the answer for the other call's inputs)" : "");
            kg_verdict_cause(v, KG_CAUSE_STALE_RESULT, "%s: %s%s", sc->what,
                             other.pass ? "the answer for the other call's inputs came back"
                             : st == 3  ? "the poisoned output survived"
                                        : "the answer does not follow the new call's inputs",
                             "");
            kg_judgement_evidence(s, &k[w], &ex[w], &j, v);
            kg_replay(s, v->gate, &k[0], v->replay, sizeof v->replay);
            kg_exec_free(&x);
            goto out;
        }
        kg_exec_free(&x);
    }
    char lean[160];
    kg_lean_words(s, &k[0], lean, sizeof lean);
    kg_verdict_set(v, KG_PASS,
                   "correct after new values in the same buffers, same values in new buffers, and poisoned outputs%s",
                   lean);
    json_object_set_new(v->extra, "judged_by_digest", json_integer(by_digest));
out:
    for (int i = 0; i < ready; i++) {
        kg_expect_free(&ex[i]);
        kg_inputs_free(&in[i]);
    }
}

const struct kg_gate kg_gate_freshness = {
    .id = "freshness",
    .title = "no caching or result reuse between calls",
    .tolerance_free = true,
    .explain = "Four calls in one worker: inputs X1 in new buffers; X2 written into the same buffers; X1 again in\n"
               "new buffers; X1 in the same buffers with the outputs overwritten by garbage first. Each must match\n"
               "the oracle for its own inputs. Catches: results cached by pointer or shape, static state carried\n"
               "between calls, 'skip if already computed' shortcuts, and answers that survive only because the\n"
               "output memory still held the previous result. Tolerance-free in what it decides (a stale answer\n"
               "is off by far more than any threshold); the accuracy threshold only separates right from stale.",
    .explain_python =
        "KernelBench format: the candidate runs first in a fresh process, then again after the reference\n"
        "(result reuse of freed memory), with the same input storage rewritten with new values, and with\n"
        "new storage holding the same values.",
    .run = run,
};
