/* structure.c: every output element is written. The outputs are prefilled twice with two
 * different sentinels (0xFF and 0x7F bytes); an element that still holds the sentinel both
 * times was never written. A kernel that writes the sentinel's exact bits on purpose would
 * have to write both, which it cannot. Where the candidate can start work on streams of its
 * own, elements written once the whole device is synchronised were read too early: wrong-stream. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

static bool all_bytes(const uint8_t *p, size_t n, uint8_t b)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != b) return false;
    return true;
}

/* Whether arg i is a pure output: inout and aliased tensors start with input values, so what
 * they hold after a call says nothing of which elements were written. */
static bool pure_output(const struct kg_contract *c, int i)
{
    return c->args[i].kind == KG_ARG_TENSOR && c->args[i].io == KG_OUT && c->alias_of[i] < 0;
}

/* Elements of output i that held the prefill in runs a and b (and in c, prefilled with seeded
 * garbage, when c is not NULL); the first one into *first. */
static int64_t count_unwritten(const struct kg_case *k, int i, const struct kg_exec *a, const struct kg_exec *b,
                               const struct kg_exec *c, int64_t *first)
{
    size_t es = kg_dtype_size(k->adtype[i]);
    int64_t n = 0;
    *first = -1;
    const uint8_t *pa = a->after[i].data, *pb = b->after[i].data;
    for (int64_t j = 0; j < k->numel[i]; j++) {
        if (!all_bytes(pa + j * es, es, 0xFF) || !all_bytes(pb + j * es, es, 0x7F)) continue;
        if (c && !kg_exec_kept_prefill(c, i, j)) continue;
        if (*first < 0) *first = j;
        n++;
    }
    return n;
}

/* Whether every output element is written when the whole device is synchronised before the call
 * and before its outputs are read (KG_RUN_SYNC_DEVICE): then the elements that held the prefill
 * were written by work the call left running on a stream other than the caller's. */
static bool written_synchronised(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in)
{
    if (!kg_session_can(s, KG_CAP_SYNC_DEVICE)) return false;
    struct kg_exec a, b;
    struct kg_exec_opts oa = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .flags = KG_RUN_SYNC_DEVICE};
    struct kg_exec_opts ob = {.fill = KG_FILL_SENTINEL_B, .guard_byte = 0xA5, .flags = KG_RUN_SYNC_DEVICE};
    if (kg_exec(s, k, in, &oa, &a) != KG_WS_OK) {
        kg_exec_free(&a);
        return false;
    }
    bool written = kg_exec(s, k, in, &ob, &b) == KG_WS_OK;
    for (int i = 0; i < k->c->nargs && written; i++) {
        int64_t first;
        if (pure_output(k->c, i)) written = !count_unwritten(k, i, &a, &b, NULL, &first);
    }
    kg_exec_free(&b);
    kg_exec_free(&a);
    return written;
}

/* One run whose outputs stay in the worker, which counts the elements that kept the 0xFF prefill
 * (KG_CAP_DIGEST, where the candidate allocates its outputs from prefilled memory: then the two
 * runs below could only show again that none did): 1 with *total the elements checked when no
 * pure output has one, every element written, and nothing copied to the judge (at real sizes the
 * outputs are gigabytes, and counting sentinels there took seconds); 0 when some kept it, -1
 * where the backend cannot: the two prefilled runs below then judge, and say which; -2 when the
 * run failed: v says how. */
static int written_by_count(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, int64_t *total,
                            json_t **outs, struct kg_verdict *v)
{
    if (!kg_session_can(s, KG_CAP_DIGEST) || !kg_session_can(s, KG_CAP_FRESH_OUTPUTS)) return -1;
    struct kg_exec x;
    struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .flags = KG_RUN_DIGEST};
    if (kg_exec(s, k, in, &o, &x) != KG_WS_OK) {
        kg_verdict_from_exec(v, k, &x);
        kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
        kg_exec_free(&x);
        return -2;
    }
    int written = 1;
    *total = 0;
    for (int i = 0; i < k->c->nargs && written; i++) {
        if (!pure_output(k->c, i)) continue;
        *total += k->numel[i];
        written = x.prefilled[i] == 0;
    }
    kg_exec_free(&x);
    if (!written) return 0;
    *outs = json_array();
    for (int i = 0; i < k->c->nargs; i++)
        if (pure_output(k->c, i))
            json_array_append_new(*outs, json_pack("{s:s,s:I,s:I}", "output", k->c->args[i].name, "elements",
                                                   (json_int_t)k->numel[i], "unwritten", (json_int_t)0));
    return 1;
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_contract *c = kg_session_contract(s);
    struct kg_case k;
    struct kg_inputs in;
    if (kg_nominal_inputs(s, &k, &in, v)) return;
    int64_t counted = 0;
    json_t *counted_outs = NULL;
    const int by_count = written_by_count(s, &k, &in, &counted, &counted_outs, v);
    if (by_count == -2) {
        kg_inputs_free(&in);
        return;
    }
    if (by_count == 1) {
        v->ncases = 1;
        v->extra = json_pack("{s:o,s:s}", "outputs", counted_outs, "compared", "prefill count");
        if (!counted)
            kg_verdict_set(v, KG_SKIP, "no pure output to check (inout and aliased tensors start with input values)");
        else
            kg_verdict_set(v, KG_PASS,
                           "all %lld output elements written (no element kept the prefill, counted in the worker)",
                           (long long)counted);
        kg_inputs_free(&in);
        return;
    }
    struct kg_exec a, b;
    struct kg_exec_opts oa = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5};
    struct kg_exec_opts ob = {.fill = KG_FILL_SENTINEL_B, .guard_byte = 0xA5};
    kg_exec(s, &k, &in, &oa, &a);
    if (a.status != KG_WS_OK) {
        kg_verdict_from_exec(v, &k, &a);
        kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
        goto out_a;
    }
    kg_exec(s, &k, &in, &ob, &b);
    if (b.status != KG_WS_OK) {
        kg_verdict_from_exec(v, &k, &b);
        kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
        goto out_b;
    }
    /* an element that held both sentinels was never written, or computed from its prior
     * contents (y += x on NaN stays NaN, on 3.4e38 stays 3.4e38): a third run with seeded finite
     * garbage tells them apart, and the second kind is aliasing's finding, not this gate's. Not
     * where the candidate allocates its outputs: there the judge cannot see what an element held
     * before the call, and an element computed from memory nobody initialised is unwritten too. */
    struct kg_exec g;
    bool have_g = false, fresh = kg_session_can(s, KG_CAP_FRESH_OUTPUTS);
    int64_t from_prior = 0;
    for (int i = 0; i < c->nargs && !have_g && !fresh; i++) {
        int64_t first;
        if (!pure_output(c, i)) continue;
        if (!count_unwritten(&k, i, &a, &b, NULL, &first)) continue;
        struct kg_exec_opts og = {.fill = KG_FILL_GARBAGE, .guard_byte = 0xA5};
        kg_exec(s, &k, &in, &og, &g);
        if (g.status != KG_WS_OK) {
            kg_verdict_from_exec(v, &k, &g);
            kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
            kg_exec_free(&g);
            goto out_g;
        }
        have_g = true;
    }
    int64_t total = 0, checked = 0;
    json_t *outs = json_array();
    bool failed = false;
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *arg = &c->args[i];
        if (!pure_output(c, i)) continue;
        checked++;
        int64_t first = -1, first2;
        int64_t unwritten = count_unwritten(&k, i, &a, &b, have_g ? &g : NULL, &first);
        int64_t kept = have_g ? count_unwritten(&k, i, &a, &b, NULL, &first2) : unwritten;
        if (kept > unwritten) {
            /* some elements follow their prior contents (y += f(x)): the others that kept the
             * prefill are most likely y += 0, the same defect, which aliasing reports */
            from_prior += kept;
            unwritten = 0;
        }
        total += k.numel[i];
        json_array_append_new(outs, json_pack("{s:s,s:I,s:I}", "output", arg->name, "elements", (json_int_t)k.numel[i],
                                              "unwritten", (json_int_t)unwritten));
        if (unwritten && !failed) {
            failed = true;
            char idx[96];
            kg_tensor_index_str(&a.after[i], first, idx, sizeof idx);
            kg_verdict_set(
                v, KG_FAIL,
                "%s: %lld of %lld elements still hold the prefill after two different prefills (first at %s)",
                arg->name, (long long)unwritten, (long long)k.numel[i], idx);
            if (fresh)
                kg_verdict_detail(v, "The candidate allocates its outputs; the memory they come from was filled with "
                                     "0xFF bytes (NaN), then with 0x7F bytes, and these elements held that fill both "
                                     "times: never written (torch.empty memory is not zeroed). A kernel that leaves "
                                     "outputs unwritten returns whatever the memory held: stale results, or zeros "
                                     "that happen to pass.");
            else
                kg_verdict_detail(v, "The output was prefilled with 0xFF bytes (NaN), then with 0x7F bytes, then with "
                                     "seeded finite values; these elements held the prefill after all three runs: "
                                     "never written. A kernel that leaves outputs unwritten returns whatever the "
                                     "memory held: stale results, or zeros that happen to pass.");
            kg_verdict_cause(v, KG_CAUSE_UNWRITTEN_OUTPUT,
                             "%lld of %lld elements of %s keep kgate's prefill (first %s%s)", (long long)unwritten,
                             (long long)k.numel[i], arg->name, arg->name, idx);
            v->ev.valid = true;
            v->ev.unwritten = true;
            kg_strlcpy(v->ev.output, arg->name, sizeof v->ev.output);
            kg_strlcpy(v->ev.index, idx, sizeof v->ev.index);
            v->ev.flat = first;
            v->ev.got = kg_load(k.adtype[i], a.after[i].data, first);
            v->ev.expected = NAN;
            kg_case_id(&k, v->ev.case_id, sizeof v->ev.case_id);
            kg_replay(s, v->gate, &k, v->replay, sizeof v->replay);
            if (written_synchronised(s, &k, &in)) {
                kg_verdict_cause(v, KG_CAUSE_WRONG_STREAM,
                                 "%lld of %lld elements of %s were read before they were written (first %s%s): "
                                 "with the whole device synchronised around the call, every element is written",
                                 (long long)unwritten, (long long)k.numel[i], arg->name, arg->name, idx);
                kg_verdict_detail(v,
                                  "The outputs are read on the caller's stream as soon as the call's work there "
                                  "is done; synchronised first (as KernelBench's harness does), they are whole: "
                                  "the kernel writes them on a stream of its own, with no event or wait for the "
                                  "caller. Launch on at::cuda::getCurrentCUDAStream() (torch.cuda.current_stream()).");
            }
        }
    }
    v->extra = json_pack("{s:o,s:s}", "outputs", outs, "compared", "outputs");
    if (by_count == 0) /* an element held the prefill's bits: the two prefilled runs said whether it was written */
        json_object_set_new(v->extra, "prefill_bits_seen", json_true());
    if (!checked)
        kg_verdict_set(v, KG_SKIP, "no pure output to check (inout and aliased tensors start with input values)");
    else if (!failed && from_prior)
        kg_verdict_set(v, KG_PASS,
                       "all %lld output elements written; %lld computed from their prior contents (see aliasing)",
                       (long long)total, (long long)from_prior);
    else if (!failed)
        kg_verdict_set(v, KG_PASS, "all %lld output elements written (two sentinel prefills)", (long long)total);
    v->ncases = 1;
    if (have_g) kg_exec_free(&g);
out_g:
    kg_exec_free(&b);
out_b:
out_a:
    kg_exec_free(&a);
    kg_inputs_free(&in);
}

const struct kg_gate kg_gate_structure = {
    .id = "structure",
    .title = "every output element written",
    .tolerance_free = true,
    .explain = "Runs the kernel twice on the nominal case with its outputs prefilled with two different sentinels\n"
               "(0xFF bytes, then 0x7F bytes) and reports every element that still holds the sentinel both times.\n"
               "Catches: kernels that skip tail elements, early-return threads, grids too small for the shape, and\n"
               "outputs 'computed' by reusing memory that held a previous answer (torch.empty that happens to\n"
               "contain the right values). Tolerance-free: an element is written or it is not.",
    .explain_python =
        "KernelBench format: the output tensors ModelNew returns must have the reference's shape, dtype and\n"
        "device; every free block of the CUDA caching allocator is filled with the sentinel before the call\n"
        "(whichever block torch.empty hands out, including one that held a previous call's output), so an\n"
        "output left partly unwritten shows the sentinel. The worker counts the elements holding it; only\n"
        "where there are some do the two prefilled runs follow, with the outputs copied to the judge.",
    .run = run,
};
