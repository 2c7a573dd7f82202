/* placement.c: correct on a non-default stream while the default stream is busy, and when two
 * launches run at once on two streams (kernels with global scratch state collide). */
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

static void run(struct kg_session *s, struct kg_verdict *v)
{
    struct kg_case k[2];
    struct kg_inputs in[2];
    struct kg_expect ex[2];
    struct kg_err e;
    int ready = kg_prepare_cases(s, 2, k, in, ex, &e);
    if (ready < 2) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        goto out;
    }
    struct kg_exec x;
    struct kg_judgement j;
    struct kg_exec_opts side = {
        .fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5, .flags = KG_RUN_SIDE_STREAM | KG_RUN_BUSY_DEFAULT};
    kg_exec(s, &k[0], &in[0], &side, &x);
    if (x.status != KG_WS_OK) {
        kg_verdict_from_exec(v, &k[0], &x);
        kg_exec_free(&x);
        goto out;
    }
    kg_judge(&k[0], &x, false, &ex[0], &j);
    kg_exec_free(&x);
    v->ncases++;
    if (!j.pass) {
        char d[KG_DESCRIBE_MAX];
        kg_describe_worst(&k[0], &ex[0], &j, d, sizeof d);
        kg_verdict_set(v, KG_FAIL, "wrong on a non-default stream while the default stream is busy: %s", d);
        kg_judgement_evidence(s, &k[0], &ex[0], &j, v);
        goto out;
    }
    if (!kg_session_can(s, KG_CAP_CONCURRENT)) { /* e.g. one Python call at a time: no concurrent pair */
        kg_verdict_set(v, KG_PASS, "correct under a non-default current stream while the default stream is busy");
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
        kg_judge(&k[w], &x, w == 1, &ex[w], &j);
        if (!j.pass) {
            char d[KG_DESCRIBE_MAX];
            kg_describe_worst(&k[w], &ex[w], &j, d, sizeof d);
            kg_verdict_set(v, KG_FAIL, "wrong when two launches run at once on two streams (launch %d): %s", w + 1, d);
            kg_verdict_detail(v, "Two concurrent launches with different inputs interfered: the kernel keeps state "
                                 "in __device__ globals (scratch buffers, counters) shared by every launch.");
            kg_judgement_evidence(s, &k[w], &ex[w], &j, v);
            kg_exec_free(&x);
            goto out;
        }
    }
    kg_exec_free(&x);
    const struct kg_dev_info *dev = kg_session_device(s);
    int ndev = dev ? dev->device_count : 1;
    kg_verdict_set(v, KG_PASS,
                   "correct on a side stream with the default stream busy, and as two concurrent launches%s",
                   ndev > 1 ? "" : "; one device, so no second-device run");
out:
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
               "must match the oracle for its own inputs. Catches: kernels that keep scratch data or counters in\n"
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
