/* bounds.c: guard bands before and after every buffer. Any byte written outside fails; an
 * output that changes when only the guard contents change means the kernel read outside its
 * buffers. Runs at the nominal shape and at a ragged one (every symbol + 1). On the host runner
 * an access far outside also hits an inaccessible page and crashes the worker. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

static bool outputs_equal(const struct kg_case *k, const struct kg_exec *a, const struct kg_exec *b, int *arg,
                          int64_t *idx)
{
    return kg_exec_first_diff(k, a, b, true, arg, idx) == 0;
}

/* Whether the outputs of runs a and b are bit-identical: by digest where both left their outputs
 * in the worker (then *arg and *idx are not known), else element by element. */
static bool same_bits(const struct kg_case *k, const struct kg_exec *a, const struct kg_exec *b, int *arg, int64_t *idx)
{
    return a->digested ? kg_exec_digests_equal(k, a, b) : outputs_equal(k, a, b, arg, idx);
}

/* 1: failed (v set), 0: clean, -1: error (v set), 2: the kernel refused the case; 3 (digest: the
 * runs left their outputs in the worker, KG_CAP_DIGEST): two runs' outputs differ, to be compared
 * again with the outputs, which say where */
static int check(struct kg_session *s, const struct kg_case *k, struct kg_verdict *v, json_t *list, bool digest)
{
    struct kg_inputs in;
    struct kg_err e;
    if (kg_session_inputs(s, k, &in, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return -1;
    }
    /* each guard fill twice or more: a read outside shows as outputs that follow the fill, equal
     * within a fill and different across; a kernel that differs run to run (a race) is not
     * mistaken for one, as it was with one run per fill */
    static const uint8_t pats[5] = {0xA5, 0xFF, 0xA5, 0xFF, 0xA5};
    struct kg_exec x[5];
    bool same[5] = {true, true, true, true, true}; /* run r's outputs equal those of run r % 2 */
    int n = 0, rc = 0, arg = 0;
    int64_t idx = -1;
    const bool judge_reads = !kg_session_nondeterministic(s);
    for (; n < 5; n++) {
        struct kg_exec_opts o = {
            .fill = KG_FILL_SENTINEL_A, .guard_byte = pats[n], .flags = KG_RUN_CANARY | (digest ? KG_RUN_DIGEST : 0)};
        kg_exec(s, k, &in, &o, &x[n]);
        if (x[n].status == KG_WS_REFUSED) { /* a shape the kernel declines: nothing to check */
            n++;
            rc = 2;
            goto out;
        }
        if (x[n].status != KG_WS_OK) {
            kg_verdict_from_exec(v, k, &x[n]);
            if (v->status == KG_REFUSED) { /* a candidate that raised at a shape it does not support */
                kg_verdict_init(v, v->gate);
                n++;
                rc = 2;
                goto out;
            }
            if (x[n].status == KG_WS_CRASH || x[n].status == KG_WS_CUDA)
                kg_verdict_detail(v, "A crash or illegal address here is most often an access far outside a buffer.");
            kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
            n++;
            rc = -1;
            goto out;
        }
        /* the later runs of each fill are compared with its first and let go (their flags and
         * message stay): five runs held at once were five times a real-size case's tensors */
        if (n >= 2) {
            if (judge_reads) same[n] = same_bits(k, &x[n % 2], &x[n], &arg, &idx);
            kg_exec_free(&x[n]);
        }
    }
    v->ncases++;
    char id[KG_CASE_ID_MAX];
    kg_case_id(k, id, sizeof id);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < k->c->nargs; i++) {
            if (!x[r].guard_bad[i]) continue;
            const struct kg_arg *a = &k->c->args[i];
            size_t es = kg_dtype_size(k->adtype[i]);
            int64_t bytes = k->numel[i] * (int64_t)es, f = x[r].guard_first[i], l = x[r].guard_last[i];
            if (f < 0 && l >= bytes)
                kg_verdict_set(v, KG_FAIL,
                               "%s: %lld bytes written outside the buffer, both before (from %lld) and after it (to "
                               "+%lld past the end)",
                               a->name, (long long)x[r].guard_bad[i], (long long)f, (long long)(l - bytes));
            else if (f < 0)
                kg_verdict_set(v, KG_FAIL, "%s: %lld bytes written before the start of the buffer (offsets %lld..%lld)",
                               a->name, (long long)x[r].guard_bad[i], (long long)f, (long long)l);
            else
                kg_verdict_set(
                    v, KG_FAIL,
                    "%s: %lld bytes written past the end (element %lld onwards; the buffer has %lld elements)", a->name,
                    (long long)x[r].guard_bad[i], (long long)((f - bytes) / (int64_t)es + k->numel[i]),
                    (long long)k->numel[i]);
            kg_verdict_detail(v,
                              "Every buffer is surrounded by guard bytes; these changed. Out-of-bounds writes corrupt "
                              "neighbouring allocations: results elsewhere go wrong long after this kernel returns. "
                              "Usual causes: a missing `if (i < n)` tail check, a grid rounded up, a vectorised "
                              "store past the last row.");
            v->ev.valid = true;
            kg_strlcpy(v->ev.output, a->name, sizeof v->ev.output);
            snprintf(v->ev.index, sizeof v->ev.index, "byte %+lld", (long long)(f < 0 ? f : f - bytes));
            kg_strlcpy(v->ev.case_id, id, sizeof v->ev.case_id);
            kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
            /* the changed bytes themselves: offset from the buffer's start (negative: before it) */
            json_t *changed = json_array();
            char shown[KG_SUMMARY_MAX] = "";
            size_t sl = 0;
            int64_t nshow = x[r].guard_bad[i] < KG_GUARD_SHOWN ? x[r].guard_bad[i] : KG_GUARD_SHOWN;
            for (int64_t q = 0; q < nshow; q++) {
                int64_t off = x[r].guard_off[i][q];
                json_array_append_new(changed, json_pack("{s:I,s:i,s:i}", "offset", (json_int_t)off, "value",
                                                         x[r].guard_val[i][q], "guard", x[r].guard_byte));
                kg_appendf(shown, sizeof shown, &sl, "%s%s+%lld = 0x%02x", q ? ", " : "", a->name, (long long)off,
                           x[r].guard_val[i][q]);
            }
            json_object_set_new(v->extra, "changed", changed);
            kg_verdict_cause(v, KG_CAUSE_OOB_WRITE, "%lld guard bytes of %s changed: %s%s (guard 0x%02x)",
                             (long long)x[r].guard_bad[i], a->name, shown, x[r].guard_bad[i] > nshow ? ", ..." : "",
                             x[r].guard_byte);
            json_array_append_new(list, json_pack("{s:s,s:s,s:I,s:I,s:I}", "case", id, "buffer", a->name,
                                                  "bytes_changed", (json_int_t)x[r].guard_bad[i], "first_offset",
                                                  (json_int_t)f, "last_offset", (json_int_t)l));
            rc = 1;
            goto out;
        }
    /* a pair's outputs are allocated by the candidate: the worker watched the free memory around them */
    for (int r = 0; r < 5; r++)
        if (x[r].found & KG_RUN_OUT_OOB_WRITE) {
            kg_verdict_set(v, KG_FAIL, "%s", x[r].msg);
            kg_verdict_detail(v, "Every free block of PyTorch's caching allocator was filled with a canary before the "
                                 "call and checked after it, leaving out whatever was allocated during the call: "
                                 "these bytes belonged to no tensor. Under KernelBench they land in free space or "
                                 "in an earlier output no longer compared, so its test passes; in a model they "
                                 "corrupt the next tensor allocated there.");
            v->ev.valid = true;
            kg_strlcpy(v->ev.case_id, id, sizeof v->ev.case_id);
            kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
            kg_verdict_cause(v, KG_CAUSE_OOB_WRITE, "bytes outside every tensor changed during the call");
            json_array_append_new(list, json_pack("{s:s,s:s}", "case", id, "outside_tensors", x[r].msg));
            rc = 1;
            goto out;
        }
    if (digest && judge_reads && !kg_session_nondeterministic(s) &&
        !(same[2] && same[3] && same[4] && same_bits(k, &x[0], &x[1], &arg, &idx))) {
        rc = 3; /* the outputs differ somewhere: the runs again, with them */
        v->ncases--;
        goto out;
    }
    if (!digest && judge_reads && !kg_session_nondeterministic(s) && same[2] && same[3] && same[4] &&
        !outputs_equal(k, &x[0], &x[1], &arg, &idx)) {
        char ix[96];
        kg_tensor_index_str(&x[0].after[arg], idx, ix, sizeof ix);
        kg_verdict_set(v, KG_FAIL,
                       "%s%s changes with the bytes around the buffers (%.9g with 0xA5 guards, %.9g with 0xFF): a read "
                       "outside a buffer",
                       k->c->args[arg].name, ix, kg_load(k->adtype[arg], x[0].after[arg].data, idx),
                       kg_load(k->adtype[arg], x[1].after[arg].data, idx));
        kg_verdict_detail(v, "Only the guard bytes differed between the two runs, so the kernel read memory outside "
                             "the buffers it was given (past the end of an input, usually).");
        kg_verdict_cause(v, KG_CAUSE_OOB_READ, "%s%s = %.9g with 0xA5 guards, %.9g with 0xFF guards",
                         k->c->args[arg].name, ix, kg_load(k->adtype[arg], x[0].after[arg].data, idx),
                         kg_load(k->adtype[arg], x[1].after[arg].data, idx));
        v->ev.valid = true;
        kg_strlcpy(v->ev.output, k->c->args[arg].name, sizeof v->ev.output);
        kg_strlcpy(v->ev.index, ix, sizeof v->ev.index);
        v->ev.flat = idx;
        v->ev.got = kg_load(k->adtype[arg], x[1].after[arg].data, idx);
        v->ev.expected = kg_load(k->adtype[arg], x[0].after[arg].data, idx);
        kg_strlcpy(v->ev.case_id, id, sizeof v->ev.case_id);
        kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
        rc = 1;
    }
    json_array_append_new(list, json_pack("{s:s,s:b}", "case", id, "clean", rc == 0));
out:
    for (int r = 0; r < n; r++) kg_exec_free(&x[r]);
    kg_inputs_free(&in);
    return rc;
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    const struct kg_contract *c = kg_session_contract(s);
    const struct kg_session_opts *opt = kg_session_opts(s);
    json_t *list = json_array();
    v->extra = json_pack("{s:o}", "cases", list);
    enum kg_dtype dt = kg_contract_default_dtype(c);
    struct kg_case k;
    struct kg_err e;
    if (kg_nominal_case(s, dt, 0, KG_DIST_NORMAL, &k, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return;
    }
    const bool digest = kg_session_can(s, KG_CAP_DIGEST);
    int rc = check(s, &k, v, list, digest);
    if (rc == 3) rc = check(s, &k, v, list, false);
    if (rc == 1 || rc == -1) return;
    int ncases = rc == 0;
    if (!opt->pin_shape && c->nsyms) {
        int64_t sym[KG_MAX_SYMS];
        memcpy(sym, c->nominal, sizeof sym);
        for (int i = 0; i < c->nsyms; i++) sym[i] += !c->fixed[i];
        if (kg_case_init(&k, c, sym, dt, opt->seed, KG_DIST_NORMAL, &e) == 0 && kg_case_affordable(s, &k)) {
            rc = check(s, &k, v, list, digest);
            if (rc == 3) rc = check(s, &k, v, list, false);
            if (rc == 1 || rc == -1) return;
            ncases += rc == 0;
        }
    }
    if (!ncases) {
        kg_verdict_set(v, KG_REFUSED, "the kernel refused every shape this gate tried");
        return;
    }
    if (kg_session_nondeterministic(s))
        kg_verdict_set(v, KG_PASS,
                       "no byte written outside any buffer (%d shape%s, 5 guard fills); reads outside not judged: the "
                       "kernel is not bit-reproducible, so outputs that differ between guard fills prove nothing",
                       ncases, ncases == 1 ? "" : "s");
    else
        kg_verdict_set(v, KG_PASS,
                       "no byte written outside any buffer, no output depends on bytes outside (%d shape%s, 5 guard "
                       "fills)",
                       ncases, ncases == 1 ? "" : "s");
}

const struct kg_gate kg_gate_bounds = {
    .id = "bounds",
    .title = "no reads or writes outside the buffers",
    .tolerance_free = true,
    .explain = "Surrounds every buffer with guard bytes (4 KiB on the host, 64 KiB on the GPU; on the host an\n"
               "inaccessible page beyond that) and runs the nominal shape and a ragged one (every symbol + 1)\n"
               "five times with guards of 0xA5, 0xFF, 0xA5, 0xFF, 0xA5. A changed guard byte is an out-of-bounds\n"
               "write; an output that follows the fill (the 0xA5 runs agree, the 0xFF runs agree, the two\n"
               "differ) is an out-of-bounds read, judged only for a kernel the determinism gate found bit-\n"
               "reproducible. Catches missing tail checks, rounded-up grids, vectorised loads past the end.\n"
               "Tolerance-free: bytes changed or they did not.",
    .explain_python =
        "KernelBench format: inputs are views inside larger guarded allocations; writes outside the view\n"
        "show in the guard region. Outputs are allocated by the candidate, so on the GPU every free block\n"
        "of PyTorch's caching allocator is set to the guard byte before the call and checked after it\n"
        "(minus whatever the call allocated, from the allocator's history): a changed byte there is a\n"
        "write past the end of an output (torch.empty + a grid rounded up). The guard fills' outputs are\n"
        "compared by the worker's digests of them; they come to the judge only when two differ.",
    .run = run,
};
