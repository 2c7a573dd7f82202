/* determinism.c: identical inputs, repeated runs (fresh buffers each time, and once in a
 * fresh worker process): the outputs must be bit-identical. The runs are kept in the
 * session so the inspector can `replay N M` them. Runs that differ are tried again with the
 * device synchronised around the call: a kernel that agrees with itself then races with its
 * own work on another stream (wrong-stream), not with itself (nondeterministic). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

#define RUNS          6  /* 5 in one worker, the last in a new one */
#define SYNC_RUNS_MAX 24 /* synchronised runs at most, for the diagnosis */

/* The worst differing element between two runs' outputs: updated in *w when larger. */
struct diff {
    int64_t idx;
    int arg, run;
    double d, a, b;
};

struct differing {
    const struct kg_case *k;
    const struct kg_exec *a, *b;
    int run;
    struct diff *w;
};

static bool note_worst(void *ctx, int arg, int64_t q)
{
    struct differing *c = ctx;
    double va = kg_load(c->k->adtype[arg], c->a->after[arg].data, q);
    double vb = kg_load(c->k->adtype[arg], c->b->after[arg].data, q);
    double d = fabs(va - vb);
    if (isnan(d)) d = INFINITY;
    if (c->w->idx < 0 || d > c->w->d)
        *c->w = (struct diff){.idx = q, .arg = arg, .run = c->run, .d = d, .a = va, .b = vb};
    return true;
}

/* How many output elements of run x differ from run first, bit for bit; the largest difference
 * goes to w (run number r) when it beats w's. */
static int64_t count_differing(const struct kg_case *k, const struct kg_exec *first, const struct kg_exec *x, int r,
                               struct diff *w)
{
    struct differing c = {.k = k, .a = first, .b = x, .run = r, .w = w};
    return kg_exec_bits_differ(k, first, x, note_worst, &c);
}

/* Comparisons a diagnosis makes among synchronised runs: enough that a kernel which differed in
 * `differing` of RUNS - 1 comparisons for reasons of its own (atomics, a race between its
 * blocks) would, at that rate, agree in all of them with a chance under 1%. */
static int sync_runs_needed(int differing)
{
    double p = (double)differing / (RUNS - 1);
    int n = p >= 1 ? 1 : (int)ceil(log(0.01) / log1p(-p));
    return n < RUNS - 1 ? RUNS - 1 : n > SYNC_RUNS_MAX ? SYNC_RUNS_MAX : n;
}

/* Whether the differences go away with the whole device synchronised before the call and before
 * its outputs are read, as KernelBench calls a candidate: then the kernel leaves work on a stream
 * other than the caller's (or starts it before its inputs' producer finished), and its outputs
 * are read before that work is done. 1: every synchronised run agreed (*n of them after the
 * first); 0: they differ too; -1: not tried (the runner cannot, or a run failed). */
static int agrees_synchronised(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, int differing,
                               int *n)
{
    *n = 0;
    if (!kg_session_can(s, KG_CAP_SYNC_DEVICE)) return -1;
    int want = sync_runs_needed(differing);
    struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .flags = KG_RUN_SYNC_DEVICE};
    struct kg_exec first;
    if (kg_exec(s, k, in, &o, &first) != KG_WS_OK) {
        kg_exec_free(&first);
        return -1;
    }
    int verdict = 1;
    for (int r = 0; r < want && verdict == 1; r++) {
        struct kg_exec x;
        struct diff w = {.idx = -1};
        if (kg_exec(s, k, in, &o, &x) != KG_WS_OK)
            verdict = -1;
        else if (count_differing(k, &first, &x, r, &w))
            verdict = 0;
        else
            ++*n;
        kg_exec_free(&x);
    }
    kg_exec_free(&first);
    return verdict;
}

/* The RUNS runs with their outputs left in the worker (KG_CAP_DIGEST; not in the inspector, whose
 * `replay` needs them), compared by their digests: at KernelBench's real sizes each run's outputs
 * are gigabytes to copy to the judge and compare there. 1: every digest equal to the first's;
 * 0: a run differed (*at: which, 0-based), -1: the backend cannot: the gate then runs with the
 * outputs, which says where they differ; -2: a run failed, and v says how. */
static int digests_agree(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                         struct kg_verdict *v, int *at)
{
    if (!kg_session_can(s, KG_CAP_DIGEST) || kg_session_opts(s)->keep_runs) return -1;
    struct kg_exec first;
    int agree = 1;
    for (int r = 0; r < RUNS && agree == 1; r++) {
        struct kg_exec x;
        struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A,
                                 .guard_byte = 0xA5,
                                 .flags = KG_RUN_DIGEST,
                                 .fresh_worker = r == RUNS - 1,
                                 .spare_worker = r == 0};
        if (kg_exec(s, k, in, &o, &x) != KG_WS_OK) {
            kg_verdict_from_exec(v, k, &x);
            kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
            agree = -2;
        } else if (r == 0) {
            first = x;
            continue;
        } else if (!kg_exec_digests_equal(k, &first, &x)) {
            agree = 0;
            *at = r;
        }
        kg_exec_free(&x);
        if (agree != 1 && r == 0) return agree;
    }
    kg_exec_free(&first);
    return agree;
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_contract *c = kg_session_contract(s);
    struct kg_case k;
    struct kg_inputs in;
    if (kg_nominal_inputs(s, &k, &in, v)) return;
    kg_record_reset(s, &k);
    struct kg_exec first;
    int differing_runs = 0;
    int64_t worst_count = 0;
    struct diff w = {.idx = -1};
    int synced = -1, nsync = 0; /* agrees_synchronised's answer, for the JSON too */
    json_t *runs = json_array();
    int digest_at = 0;
    const int by_digest = digests_agree(s, &k, &in, v, &digest_at);
    if (by_digest == -2) goto out;
    if (by_digest == 1) {
        for (int r = 0; r < RUNS; r++)
            json_array_append_new(runs, json_pack("{s:i,s:I,s:b}", "run", r + 1, "differing", (json_int_t)0,
                                                  "fresh_process", r == RUNS - 1));
        v->ncases = RUNS;
        kg_verdict_set(v, KG_PASS, "%d runs bit-identical (%d in one process, 1 in a fresh one; compared by digest)",
                       RUNS, RUNS - 1);
        goto out;
    }
    for (int r = 0; r < RUNS; r++) {
        struct kg_exec x;
        struct kg_exec_opts o = {
            .fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .fresh_worker = r == RUNS - 1, .spare_worker = r == 0};
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
        int64_t count = count_differing(&k, &first, &x, r, &w);
        json_array_append_new(runs, json_pack("{s:i,s:I,s:b}", "run", r + 1, "differing", (json_int_t)count,
                                              "fresh_process", r == RUNS - 1));
        if (count) differing_runs++;
        if (count > worst_count) worst_count = count;
        kg_exec_free(&x);
    }
    kg_exec_free(&first);
    if (!differing_runs && by_digest == 0) {
        /* Different digests are different bytes: proof enough, even where the runs made again to
         * show where all agreed (a kernel that differs now and then, or on one call of a
         * process only). Which element is not known. */
        kg_session_note_nondeterministic(s);
        enum kg_status st = c->deterministic ? KG_FAIL : KG_PASS;
        kg_verdict_set(v, st,
                       "%srun %d's outputs had other bytes than run 1's (their digests differed), though %d runs "
                       "more with the outputs compared were bit-identical: nondeterministic now and then",
                       c->deterministic ? "" : "reported, declared nondeterministic: ", digest_at + 1, RUNS);
        if (st == KG_FAIL)
            kg_verdict_cause(v, KG_CAUSE_NONDETERMINISTIC,
                             "run %d differed from run 1 on the same inputs (by digest); %d runs after agreed",
                             digest_at + 1, RUNS);
        kg_verdict_detail(v,
                          "Identical inputs gave different bits in the first %d runs, compared by the digests "
                          "of their outputs, but not in the %d runs made again to show where: the kernel "
                          "differs only sometimes (a race that rarely loses, atomics under contention, state "
                          "kept between calls). `KGATE_DIGEST=0` compares every run's outputs.",
                          RUNS, RUNS);
        kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
        goto out;
    }
    if (differing_runs) kg_session_note_nondeterministic(s);
    if (!differing_runs) {
        kg_verdict_set(v, KG_PASS, "%d runs bit-identical (%d in one process, 1 in a fresh one)", RUNS, RUNS - 1);
    } else {
        char idx[96];
        const char *name = k.c->args[w.arg].name;
        struct kg_tensor sh = {.rank = k.shape[w.arg].rank};
        memcpy(sh.dims, k.shape[w.arg].dims, sizeof sh.dims);
        kg_tensor_index_str(&sh, w.idx, idx, sizeof idx);
        enum kg_status st = c->deterministic ? KG_FAIL : KG_PASS;
        kg_verdict_set(
            v, st,
            "%s%d of %d runs differ from run 1 (up to %lld elements); largest at %s%s: run 1 = %.9g, run %d = %.9g",
            c->deterministic ? "" : "reported, declared nondeterministic: ", differing_runs, RUNS - 1,
            (long long)worst_count, name, idx, w.a, w.run + 1, w.b);
        if (st == KG_FAIL) synced = agrees_synchronised(s, &k, &in, differing_runs, &nsync);
        if (synced == 1) {
            kg_verdict_cause(v, KG_CAUSE_WRONG_STREAM,
                             "runs differ only unsynchronised: %s%s: run 1 = %.9g, run %d = %.9g, and %d runs "
                             "more with the whole device synchronised around the call were bit-identical",
                             name, idx, w.a, w.run + 1, w.b, nsync + 1);
            kg_verdict_detail(v,
                              "The outputs are read on the caller's stream as soon as the call's work there is "
                              "done. With the device synchronised before the call and before the outputs are "
                              "read (as KernelBench's harness does), %d runs agreed bit for bit: the kernel works "
                              "on a stream other than the caller's without an event or a wait, so its outputs "
                              "are read before they are written, or its inputs before their producer finished. "
                              "Launch on at::cuda::getCurrentCUDAStream() (torch.cuda.current_stream()).",
                              nsync + 1);
        } else {
            if (st == KG_FAIL)
                kg_verdict_cause(v, KG_CAUSE_NONDETERMINISTIC, "%s%s: run 1 = %.9g, run %d = %.9g (same inputs%s)",
                                 name, idx, w.a, w.run + 1, w.b,
                                 synced == 0 ? "; also with the device synchronised" : "");
            kg_verdict_detail(v,
                              "Identical inputs gave different bits. Usual causes: floating-point atomics "
                              "(atomicAdd into one accumulator), reductions whose order depends on scheduling, "
                              "reads of uninitialised memory, races. `replay 1 %d` in the inspector shows where.",
                              w.run + 1);
        }
        v->ev.valid = true;
        kg_strlcpy(v->ev.output, name, sizeof v->ev.output);
        kg_strlcpy(v->ev.index, idx, sizeof v->ev.index);
        v->ev.flat = w.idx;
        v->ev.got = w.b;
        v->ev.expected = w.a;
        v->ev.err = w.d;
        kg_case_id(&k, v->ev.case_id, sizeof v->ev.case_id);
        kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
    }
out:
    v->extra = json_pack("{s:o,s:b,s:s}", "runs", runs, "declared_deterministic", c->deterministic, "compared",
                         by_digest == 1 ? "digest" : "outputs");
    if (by_digest == 0) /* the digests differed, then the runs with their outputs said how */
        json_object_set_new(v->extra, "digests_differed", json_true());
    if (synced >= 0) /* the diagnosis ran: how many synchronised runs agreed before one differed */
        json_object_set_new(v->extra, "synchronised_runs_agreeing", json_integer(nsync + 1));
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
    .explain_python = "KernelBench format: ModelNew called repeatedly on clones of the same inputs; the worker\n"
                      "answers with a 64-bit digest of each output, and the outputs come to the judge only when\n"
                      "two runs' digests differ (the runs are then made again to show where).",
    .run = run,
};
