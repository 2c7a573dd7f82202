/* placement.c: correct on a non-default stream while the default stream is busy, and when two
 * launches run at once on two streams (kernels with global scratch state collide). */
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

/* Whether element i of t holds every byte of the runs' prefill (KG_FILL_SENTINEL_A: 0xFF). */
static bool holds_prefill(const struct kg_tensor *t, int64_t i)
{
    size_t es = kg_dtype_size(t->dtype);
    const uint8_t *p = (const uint8_t *)t->data + (size_t)i * es;
    for (size_t q = 0; q < es; q++)
        if (p[q] != 0xFF) return false;
    return true;
}

/* The largest element difference between two runs' output arg (compare.h's measure, with
 * b, the default-stream run, as the reference); infinite where their NaN/Inf patterns differ.
 * Elements b left unwritten are not compared: what they hold in a is whatever the memory held
 * (structure's finding), not a question of streams. */
static double run_diff(const struct kg_case *k, const struct kg_expect *ex, const struct kg_tensor *a,
                       const struct kg_tensor *b)
{
    (void)k;
    double d = 0;
    for (int o = 0; o < ex->nout; o++) {
        const struct kg_tensor *ta = &a[ex->arg[o]], *tb = &b[ex->arg[o]];
        /* the same bits are no difference (every element's error 0): the usual case, at memory speed */
        if (!ta->numel || !memcmp(ta->data, tb->data, (size_t)kg_tensor_bytes(ta))) continue;
        for (int64_t i = 0; i < ta->numel; i++) {
            if (holds_prefill(tb, i)) continue;
            double e = kg_elem_err(kg_load(ta->dtype, ta->data, i), kg_load(tb->dtype, tb->data, i), ex->scale[o]);
            if (!(e <= d)) d = e;
        }
    }
    return d;
}

/* The default-stream run of case w: the result a placed run must reproduce. */
static int default_run(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_exec *x,
                       struct kg_verdict *v)
{
    struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5};
    kg_exec(s, k, in, &o, x);
    if (x->status == KG_WS_OK) return 0;
    kg_verdict_from_exec(v, k, x);
    kg_exec_free(x);
    return -1;
}

/* A placed result (side stream, or one of a concurrent pair) against the default-stream one:
 * bitwise when the kernel is deterministic, else within its own run-to-run spread. Only when
 * it matches is it the other gates' business whether the default-stream result is right. */
static bool placed_ok(const struct kg_case *k, const struct kg_expect *ex, const struct kg_tensor *placed,
                      const struct kg_exec *def, double spread, double *diff)
{
    *diff = run_diff(k, ex, placed, def->after);
    return spread == 0 ? *diff == 0 : *diff <= 2 * spread;
}

static void wrong(struct kg_session *s, const struct kg_case *k, const struct kg_expect *ex,
                  const struct kg_tensor *placed, double diff, double spread, const char *what, struct kg_verdict *v)
{
    struct kg_exec fake = {0};
    memcpy(fake.after, placed, sizeof fake.after);
    struct kg_judgement j;
    kg_judge(k, &fake, false, ex, &j);
    char d[KG_DESCRIBE_MAX];
    kg_describe_worst(k, ex, &j, d, sizeof d);
    kg_verdict_set(v, KG_FAIL, "%s differs from its default-stream result (by %.2g%s): %s", what, diff,
                   spread > 0 ? ", past twice the run-to-run spread" : ", which is deterministic", d);
    kg_judgement_evidence(s, k, ex, &j, v);
    kg_verdict_cause(v, KG_CAUSE_WRONG_STREAM,
                     "%s: element difference %.2g from the same kernel's default-stream "
                     "result on the same inputs (run-to-run spread %.2g)",
                     what, diff, spread);
}

/* Concurrent pairs. A kernel whose launches share __device__ state shows it only when two
 * launches really run at once, which a loaded machine can prevent even behind the runner's
 * start gate (the placement control passed falsely under `make -j16 check` on the H200). So
 * the pair is tried up to PAIR_TRIES times within PAIR_BUDGET_S seconds, the runner measuring
 * each attempt's overlap, until PAIR_WANT attempts ran at once for at least PAIR_FRACTION of
 * the shorter launch. No such attempt is a skip, never a pass. */
#define PAIR_TRIES    8
#define PAIR_BUDGET_S 2.0
#define PAIR_WANT     2
#define PAIR_FRACTION 0.5

struct concurrency {
    int ntried, nover, clock;  /* attempts, those that overlapped, the last attempt's enum kg_pair_clock */
    double best, best_shorter; /* the longest overlap seen, and its attempt's shorter launch (seconds) */
    json_t *log;               /* one object per attempt, for the JSON report */
};

static const char *clock_name(int clock)
{
    switch (clock) {
    case KG_PAIR_KERNELS: return "CUPTI's kernel records";
    case KG_PAIR_EVENTS: return "events around the launches (an upper bound)";
    default: return "nothing: the runner did not measure it";
    }
}

static bool overlapped(const struct kg_exec *x)
{
    return x->pair_clock != KG_PAIR_UNMEASURED && x->pair_shorter > 0 &&
           x->pair_overlap >= PAIR_FRACTION * x->pair_shorter;
}

/* Returns 1 when an attempt overlapped and every attempt matched the default-stream results,
 * 0 when none overlapped (v untouched), -1 when v is set: a launch differed (wrong-stream,
 * whether or not that attempt overlapped: a mismatch is a mismatch) or a run failed. */
static int concurrent(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                      const struct kg_expect *ex, const struct kg_exec *def, double spread, struct concurrency *cc,
                      struct kg_verdict *v)
{
    struct kg_exec_opts pair = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .flags = KG_RUN_PAIR, .in2 = &in[1]};
    double t0 = kg_now();
    v->ncases++;
    while (cc->ntried < PAIR_TRIES && cc->nover < PAIR_WANT && !(cc->ntried && kg_now() - t0 > PAIR_BUDGET_S)) {
        struct kg_exec x;
        kg_exec(s, &k[0], &in[0], &pair, &x);
        if (x.status != KG_WS_OK) {
            kg_verdict_from_exec(v, &k[0], &x);
            kg_exec_free(&x);
            return -1;
        }
        cc->ntried++;
        cc->clock = x.pair_clock;
        bool at_once = overlapped(&x);
        cc->nover += at_once;
        if (!(x.pair_overlap <= cc->best)) {
            cc->best = x.pair_overlap;
            cc->best_shorter = x.pair_shorter;
        }
        json_array_append_new(cc->log,
                              json_pack("{s:f,s:f,s:s,s:b}", "overlap_s", x.pair_overlap, "shorter_s", x.pair_shorter,
                                        "measured_by", clock_name(x.pair_clock), "concurrent", at_once));
        for (int w = 0; w < 2; w++) {
            const struct kg_tensor *placed = w ? x.after2 : x.after;
            double diff;
            if (placed_ok(&k[w], &ex[w], placed, &def[w], spread, &diff)) continue;
            char what[200];
            snprintf(what, sizeof what,
                     "launch %d of two on two streams (attempt %d: at once for %.0f us of the shorter's %.0f us%s)",
                     w + 1, cc->ntried, x.pair_overlap * 1e6, x.pair_shorter * 1e6,
                     at_once ? "" : ", not counted as concurrent");
            wrong(s, &k[w], &ex[w], placed, diff, spread, what, v);
            kg_verdict_detail(v, "Two concurrent launches with different inputs interfered: the kernel keeps state "
                                 "in __device__ globals (scratch buffers, counters) shared by every launch.");
            kg_exec_free(&x);
            return -1;
        }
        kg_exec_free(&x);
    }
    return cc->nover > 0;
}

static void run(struct kg_session *s, struct kg_verdict *v)
{
    struct kg_case k[2];
    struct kg_inputs in[2];
    struct kg_expect ex[2];
    struct kg_exec def[2], again;
    int ndef = 0;
    struct kg_err e;
    int ready = kg_prepare_cases(s, 2, false, k, in, ex, &e);
    if (ready < 2) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        goto out;
    }
    /* the reference for every placed run: the kernel's own default-stream results, twice for
     * case 0 so that a nondeterministic kernel is held to its own spread */
    for (; ndef < 2; ndef++)
        if (default_run(s, &k[ndef], &in[ndef], &def[ndef], v)) goto out;
    if (default_run(s, &k[0], &in[0], &again, v)) goto out;
    double spread = run_diff(&k[0], &ex[0], again.after, def[0].after);
    kg_exec_free(&again);
    struct kg_exec x;
    double diff;
    struct kg_exec_opts side = {
        .fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .flags = KG_RUN_SIDE_STREAM | KG_RUN_BUSY_DEFAULT};
    kg_exec(s, &k[0], &in[0], &side, &x);
    if (x.status != KG_WS_OK) {
        kg_verdict_from_exec(v, &k[0], &x);
        kg_exec_free(&x);
        goto out;
    }
    v->ncases++;
    if (!placed_ok(&k[0], &ex[0], x.after, &def[0], spread, &diff)) {
        wrong(s, &k[0], &ex[0], x.after, diff, spread, "on a non-default stream while the default stream is busy", v);
        kg_exec_free(&x);
        goto out;
    }
    kg_exec_free(&x);
    if (kg_session_late_writes(s)) {
        /* seen directly, whatever the results: an output changed after the caller's stream was done */
        kg_verdict_set(v, KG_FAIL,
                       "%d run%s read an output that changed after the caller's stream had finished the call, "
                       "though the side-stream result matched",
                       kg_session_late_writes(s), kg_session_late_writes(s) > 1 ? "s" : "");
        kg_verdict_cause(v, KG_CAUSE_WRONG_STREAM,
                         "outputs read on the caller's stream changed once the whole device was done (%d run%s): "
                         "work left on a stream of the kernel's own",
                         kg_session_late_writes(s), kg_session_late_writes(s) > 1 ? "s" : "");
        goto out;
    }
    if (!kg_session_can(s, KG_CAP_CONCURRENT)) { /* e.g. one Python call at a time: no concurrent pair */
        kg_verdict_set(v, KG_PASS,
                       "same result on a non-default current stream while the default stream is busy "
                       "as on the default stream");
        goto out;
    }
    struct concurrency cc = {.log = json_array()};
    int r = concurrent(s, k, in, ex, def, spread, &cc, v);
    v->extra = json_pack("{s:o}", "pair_attempts", cc.log);
    if (r < 0) goto out;
    char how[160];
    snprintf(how, sizeof how, "%d of %d attempts, by %s", cc.nover, cc.ntried, clock_name(cc.clock));
    if (r == 0) {
        kg_verdict_set(v, KG_SKIP,
                       "same result on a side stream with the default stream busy as on the default stream; "
                       "concurrent launches not checked: no attempt of %d was measured running both launches at once "
                       "(longest overlap %.0f us of the shorter's %.0f us, by %s)",
                       cc.ntried, cc.best * 1e6, cc.best_shorter * 1e6, clock_name(cc.clock));
        kg_verdict_detail(v, "A pair counts as concurrent when both launches ran at the same time for at least "
                             "half of the shorter one. Here the second only started as the first ended (a grid "
                             "that fills the device, a loaded machine, or a runner that cannot measure it), so a "
                             "kernel whose launches share __device__ state would have passed too: not a pass.");
        goto out;
    }
    const struct kg_dev_info *dev = kg_session_device(s);
    int ndev = dev ? dev->device_count : 1;
    kg_verdict_set(v, KG_PASS,
                   "same result on a side stream with the default stream busy, and as two concurrent launches "
                   "(running at once in %s), as on the default stream%s",
                   how, ndev > 1 ? "" : "; one device, so no second-device run");
out:
    for (int i = 0; i < ndef; i++) kg_exec_free(&def[i]);
    for (int i = 0; i < ready; i++) {
        kg_expect_free(&ex[i]);
        kg_inputs_free(&in[i]);
    }
}

const struct kg_gate kg_gate_placement = {
    .id = "placement",
    .title = "right stream, concurrent launches, right device",
    .tolerance_free = true,
    .needs_gpu = true,
    .explain = "CUDA only. Launches the nominal case on a non-blocking stream while a spin kernel keeps the legacy\n"
               "default stream busy, then two launches with different inputs at once on two streams (both wait at a\n"
               "start gate that opens once both are queued, so a slow host cannot serialise them). The pair is tried\n"
               "up to 8 times (2 s at most) until two attempts ran at once for at least half of the shorter launch,\n"
               "measured by CUPTI's kernel records (else events around the launches); if none did, the gate skips:\n"
               "interference was not tested, so it is not a pass. Every output\n"
               "must equal the same kernel's default-stream result on its inputs (bitwise, or within the kernel's\n"
               "own run-to-run spread when it is not deterministic): how close that is to the oracle is the\n"
               "other gates' question, so a low-precision kernel does not fail here. Catches: kernels that keep "
               "scratch data or counters in\n"
               "__device__ globals (concurrent launches corrupt each other), and work that silently depends on\n"
               "default-stream ordering. Skips on the host runner. Tolerance-free in what it decides.",
    .explain_python =
        "KernelBench format: ModelNew runs under a non-default current stream while the default stream is\n"
        "busy, and its inputs are produced late on that current stream (~12 ms of GPU sleep, then the\n"
        "copy that writes them; until then they hold NaN bytes), as when a model's previous layer is still\n"
        "running. A candidate that launches on its own stream (or the legacy default stream) without\n"
        "waiting on the caller's reads the NaNs, and the caller reads its outputs before they are written.\n"
        "KernelBench synchronises the device around every call, which hides both races. Outputs must be\n"
        "on the inputs' device.",
    .run = run,
};
