/* placement.c: correct on a non-default stream while the default stream is busy, and when two
 * launches run at once on two streams (kernels with global scratch state collide). */
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

/* The largest element difference between two runs' output arg (compare.h's measure, with
 * b as the reference); infinite where their NaN/Inf patterns differ. */
static double run_diff(const struct kg_case *k, const struct kg_expect *ex, const struct kg_tensor *a,
                       const struct kg_tensor *b)
{
    (void)k;
    double d = 0;
    for (int o = 0; o < ex->nout; o++) {
        const struct kg_tensor *ta = &a[ex->arg[o]], *tb = &b[ex->arg[o]];
        for (int64_t i = 0; i < ta->numel; i++) {
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

static void run(struct kg_session *s, struct kg_verdict *v)
{
    struct kg_case k[2];
    struct kg_inputs in[2];
    struct kg_expect ex[2];
    struct kg_exec def[2], again;
    int ndef = 0;
    struct kg_err e;
    int ready = kg_prepare_cases(s, 2, k, in, ex, &e);
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
    if (!kg_session_can(s, KG_CAP_CONCURRENT)) { /* e.g. one Python call at a time: no concurrent pair */
        kg_verdict_set(v, KG_PASS,
                       "same result on a non-default current stream while the default stream is busy "
                       "as on the default stream");
        goto out;
    }
    struct kg_exec_opts pair = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .flags = KG_RUN_PAIR, .in2 = &in[1]};
    kg_exec(s, &k[0], &in[0], &pair, &x);
    if (x.status != KG_WS_OK) {
        kg_verdict_from_exec(v, &k[0], &x);
        kg_exec_free(&x);
        goto out;
    }
    v->ncases++;
    for (int w = 0; w < 2; w++) {
        if (!placed_ok(&k[w], &ex[w], w ? x.after2 : x.after, &def[w], spread, &diff)) {
            char what[96];
            snprintf(what, sizeof what, "launch %d of two running at once on two streams", w + 1);
            wrong(s, &k[w], &ex[w], w ? x.after2 : x.after, diff, spread, what, v);
            kg_verdict_detail(v, "Two concurrent launches with different inputs interfered: the kernel keeps state "
                                 "in __device__ globals (scratch buffers, counters) shared by every launch.");
            kg_exec_free(&x);
            goto out;
        }
    }
    kg_exec_free(&x);
    const struct kg_dev_info *dev = kg_session_device(s);
    int ndev = dev ? dev->device_count : 1;
    kg_verdict_set(v, KG_PASS,
                   "same result on a side stream with the default stream busy, and as two concurrent launches, as on "
                   "the default stream%s",
                   ndev > 1 ? "" : "; one device, so no second-device run");
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
               "start gate that opens once both are queued, so a slow host cannot serialise them); every output\n"
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
