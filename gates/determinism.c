/* determinism.c: identical inputs, repeated runs (fresh buffers each time, and once in a
 * fresh worker process): the outputs must be bit-identical. The runs are kept in the
 * session so the inspector can `replay N M` them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

#define RUNS 6 /* 5 in one worker, the last in a new one */

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_contract *c = kg_session_contract(s);
    struct kg_case k;
    struct kg_inputs in;
    if (kg_nominal_inputs(s, &k, &in, v)) return;
    kg_record_reset(s, &k);
    struct kg_exec first;
    int differing_runs = 0, worst_run = -1;
    int64_t worst_count = 0, worst_idx = -1;
    int worst_arg = -1;
    double max_diff = 0, worst_a = 0, worst_b = 0;
    json_t *runs = json_array();
    for (int r = 0; r < RUNS; r++) {
        struct kg_exec x;
        struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .fresh_worker = r == RUNS - 1};
        kg_exec(s, &k, &in, &o, &x);
        if (x.status != KG_WS_OK) {
            kg_verdict_from_exec(v, &k, &x);
            kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
            kg_exec_free(&x);
            if (r) kg_exec_free(&first);
            goto out;
        }
        kg_record_run(s, r, &x);
        v->ncases++;
        if (r == 0) {
            first = x;
            json_array_append_new(runs, json_pack("{s:i,s:I}", "run", 1, "differing", (json_int_t)0));
            continue;
        }
        int64_t count = 0;
        for (int i = 0; i < k.c->nargs; i++) {
            if (!kg_arg_is_output(&k.c->args[i])) continue;
            size_t es = kg_dtype_size(k.adtype[i]);
            const uint8_t *a = first.after[i].data, *b = x.after[i].data;
            if (!k.numel[i] || !memcmp(a, b, (size_t)k.numel[i] * es)) continue; /* the usual case, at memory speed */
            for (int64_t q = 0; q < k.numel[i]; q++) {
                if (!memcmp(a + q * es, b + q * es, es)) continue;
                count++;
                double va = kg_load(k.adtype[i], a, q), vb = kg_load(k.adtype[i], b, q);
                double d = fabs(va - vb);
                if (isnan(d)) d = INFINITY;
                if (worst_idx < 0 || d > max_diff) {
                    max_diff = d;
                    worst_idx = q;
                    worst_arg = i;
                    worst_a = va;
                    worst_b = vb;
                    worst_run = r;
                }
            }
        }
        json_array_append_new(runs, json_pack("{s:i,s:I,s:b}", "run", r + 1, "differing", (json_int_t)count,
                                              "fresh_process", r == RUNS - 1));
        if (count) differing_runs++;
        if (count > worst_count) worst_count = count;
        kg_exec_free(&x);
    }
    kg_exec_free(&first);
    if (differing_runs) kg_session_note_nondeterministic(s);
    if (!differing_runs) {
        kg_verdict_set(v, KG_PASS, "%d runs bit-identical (%d in one process, 1 in a fresh one)", RUNS, RUNS - 1);
    } else {
        char idx[96];
        struct kg_tensor sh = {.rank = k.shape[worst_arg].rank};
        memcpy(sh.dims, k.shape[worst_arg].dims, sizeof sh.dims);
        kg_tensor_index_str(&sh, worst_idx, idx, sizeof idx);
        enum kg_status st = c->deterministic ? KG_FAIL : KG_PASS;
        kg_verdict_set(
            v, st,
            "%s%d of %d runs differ from run 1 (up to %lld elements); largest at %s%s: run 1 = %.9g, run %d = %.9g",
            c->deterministic ? "" : "reported, declared nondeterministic: ", differing_runs, RUNS - 1,
            (long long)worst_count, k.c->args[worst_arg].name, idx, worst_a, worst_run + 1, worst_b);
        if (st == KG_FAIL)
            kg_verdict_cause(v, KG_CAUSE_NONDETERMINISTIC, "%s%s: run 1 = %.9g, run %d = %.9g (same inputs)",
                             k.c->args[worst_arg].name, idx, worst_a, worst_run + 1, worst_b);
        kg_verdict_detail(v,
                          "Identical inputs gave different bits. Usual causes: floating-point atomics "
                          "(atomicAdd into one accumulator), reductions whose order depends on scheduling, "
                          "reads of uninitialised memory, races. `replay 1 %d` in the inspector shows where.",
                          worst_run + 1);
        v->ev.valid = true;
        kg_strlcpy(v->ev.output, k.c->args[worst_arg].name, sizeof v->ev.output);
        kg_strlcpy(v->ev.index, idx, sizeof v->ev.index);
        v->ev.flat = worst_idx;
        v->ev.got = worst_b;
        v->ev.expected = worst_a;
        v->ev.err = max_diff;
        kg_case_id(&k, v->ev.case_id, sizeof v->ev.case_id);
        kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
    }
out:
    v->extra = json_pack("{s:o,s:b}", "runs", runs, "declared_deterministic", c->deterministic);
    kg_inputs_free(&in);
}

const struct kg_gate kg_gate_determinism = {
    .id = "determinism",
    .title = "bit-identical on repeated runs",
    .tolerance_free = true,
    .explain = "Runs the nominal case 6 times on identical inputs, with fresh buffers each time and the last run\n"
               "in a newly started worker process, and requires bit-identical outputs. The runs are recorded:\n"
               "the inspector's `replay N M` shows which positions differ. Catches: atomicAdd reductions, split-K\n"
               "with unordered accumulation, races between blocks, reads of uninitialised shared or global memory.\n"
               "A contract that says `deterministic: no` gets the same report without a failure. Tolerance-free:\n"
               "bits are equal or they are not.",
    .explain_python = "KernelBench format: ModelNew called repeatedly on clones of the same inputs.",
    .run = run,
};
