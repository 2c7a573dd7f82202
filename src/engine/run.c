/* run.c: running a gate, the field's standard test and the decoy check for a session. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ledger.h"
#include "base/memwatch.h"
#include "engine/backend.h"
#include "engine/session.h"

void kg_session_stall_words(const struct kg_session *s, int n, char *buf, size_t len)
{
    snprintf(buf, len,
             "%d run%s gave no answer within the time limit (%.3g s), then finished in a fresh worker (the last at "
             "%s, in %.2f s): taken as a wait for a shared GPU, not a hang",
             n, n > 1 ? "s" : "", s->o.timeout, s->stall_case, s->stall_seconds);
}

/* Whether a gate's failure of cause c can be outputs read while still being written: any finding
 * about output values, but not a crash, a hang, memory, a launch the device refuses, bytes written
 * outside the buffers or a decoy, which are defects of their own. */
static bool late_write_explains(enum kg_cause c)
{
    switch (c) {
    case KG_CAUSE_WRONG_STREAM:
    case KG_CAUSE_CRASH:
    case KG_CAUSE_HANG:
    case KG_CAUSE_OUT_OF_MEMORY:
    case KG_CAUSE_LAUNCH_LIMIT:
    case KG_CAUSE_OOB_WRITE:
    case KG_CAUSE_DECOY: return false;
    default: return true;
    }
}

/* What the ledger learns (kg_session_host_done): per tensor byte, the most memory that checks of
 * the audit that passed every gate (so ran all of their cases) held past what they held before
 * their first gate drew anything (host_base: the judge, its workers, the models built, the
 * CUDA contexts; measured, so no constant's error enters the ratio), from those with at least
 * HOST_LEARN_MIN bytes of tensors (below, a sample's noise would). Later checks reserve their own
 * base plus KG_LEDGER_MARGIN times it per byte (a peak between two samples, a problem unlike those
 * seen), more than KG_LEDGER_PER_BYTE where that is what was measured: on the CPU, where the oracle's
 * float64 values stay in the torch worker's host memory, KernelBench's ReLU at 336 MB of tensors
 * held 7.35 GB past a base of 0.38 (20.8 per byte). */
#define HOST_LEARN_MIN ((double)(256u << 20))
#define HOST_SAMPLE_S  0.1

/* The ledger's kind s learns by (kg_ledger_class). */
static void host_class(const struct kg_session *s, char *kind, size_t n)
{
    kg_ledger_class(s->be->name, s->host_bytes, s->host_out_bytes, kind, n);
}

/* The reservation for s's host_bytes (kg_ledger_need). */
static uint64_t host_estimate(const struct kg_session *s, const char *ledger)
{
    return kg_ledger_need(ledger, s->be->name, s->host_bytes, s->host_out_bytes, s->host_base);
}

/* Before each gate: the check's memory measured from its first gate on (base/memwatch.h); under
 * kgate audit (it names its ledger in KGATE_HOST_LEDGER), the most host memory this check will
 * hold, reserved before anything is drawn, so that checks of huge problems wait for each other
 * instead of filling the host together and being killed by its OOM killer. Later gates set the
 * reservation again: lower where the audit has since learned that checks of its kind need less,
 * higher where this check was measured holding more than it reserved. */
static void reserve_host(struct kg_session *s)
{
    const char *path = getenv("KGATE_HOST_LEDGER");
    struct kg_err e;
    if (!s->host_reserved) {
        s->host_reserved = true;
        struct kg_case k;
        if (kg_nominal_case(s, kg_contract_default_dtype(s->c), 0, KG_DIST_NORMAL, &k, &e)) return;
        for (int i = 0; i < s->c->nargs; i++)
            if (k.numel[i] > 0) {
                const double b = (double)k.numel[i] * (double)kg_dtype_size(k.adtype[i]);
                s->host_bytes += b;
                if (kg_arg_is_output(&s->c->args[i])) s->host_out_bytes += b;
            }
        if (kg_memwatch_start(HOST_SAMPLE_S)) s->host_base = kg_memwatch_peak();
        if (!path || !*path) return;
        double waited = 0;
        const uint64_t want = host_estimate(s, path);
        if (kg_ledger_reserve(path, want, s->o.interrupted, s->o.interrupted_ud, &waited, &e))
            fprintf(stderr, "kgate: %s (the check goes on without a reservation)\n", e.msg);
        else
            s->host_reserve = want;
        s->t_memwait += waited;
        return;
    }
    if (!s->host_reserve) return;
    const double held = (double)kg_memwatch_peak() * 1.1;
    uint64_t want = host_estimate(s, path);
    if (held > (double)want) want = (uint64_t)held;
    if ((double)want < 0.95 * (double)s->host_reserve || want > s->host_reserve) {
        if (kg_ledger_resize(path, want, &e))
            fprintf(stderr, "kgate: %s\n", e.msg);
        else
            s->host_reserve = want;
    }
}

void kg_session_host_done(struct kg_session *s, bool passed)
{
    s->host_peak = kg_memwatch_peak();
    const char *path = getenv("KGATE_HOST_LEDGER");
    struct kg_err e;
    if (!(passed && s->host_reserve && s->host_base && s->host_bytes >= HOST_LEARN_MIN && s->host_peak > s->host_base))
        return;
    const double ratio = (double)(s->host_peak - s->host_base) / s->host_bytes;
    char kind[16];
    host_class(s, kind, sizeof kind);
    if (kg_ledger_learn(path, kind, ratio, &e) || kg_ledger_learn(path, s->be->name, ratio, &e))
        fprintf(stderr, "kgate: %s\n", e.msg);
}

void kg_session_run_gate(struct kg_session *s, const struct kg_gate *g, struct kg_verdict *v)
{
    if (!s->cannot_run[0]) reserve_host(s);
    kg_verdict_init(v, g);
    double t0 = kg_now(), in0 = s->t_inputs, or0 = s->t_oracle, ru0 = s->t_run;
    int n0 = s->nruns, stalls0 = s->nstalls, late0 = s->late_writes;
    s->current_gate = g;
    s->judge_broken[0] = 0;
    if (s->o.progress) s->o.progress(s->o.progress_ud, g->id, "running");
    const char *no_gpu = g->needs_gpu ? kg_session_no_gpu(s) : NULL;
    struct kg_case k;
    struct kg_err e;
    if (s->cannot_run[0])
        kg_verdict_set(v, KG_SKIP, "%s", s->cannot_run);
    else if (no_gpu)
        kg_verdict_set(v, KG_SKIP, "%s", no_gpu);
    else if (!kg_nominal_case(s, kg_contract_default_dtype(s->c), 0, KG_DIST_NORMAL, &k, &e) &&
             kg_case_outputs_empty(&k)) /* a shape pinned at N=0: every gate would judge nothing */
        kg_verdict_empty(v, &k);
    else
        g->run(s, v);
    if (s->judge_broken[0] && !kg_session_interrupted(s)) { /* kgate's failure, not the kernel's */
        kg_verdict_clear(v);
        kg_verdict_init(v, g);
        kg_verdict_set(v, KG_ERROR, "%s", s->judge_broken);
        v->not_kernel = true;
    }
    s->judge_broken[0] = 0;
    if (kg_session_interrupted(s)) {
        kg_verdict_clear(v);
        kg_verdict_init(v, g);
        kg_verdict_set(v, KG_ERROR, "interrupted: no verdict (the gate was stopped; run %s again)", g->id);
        v->wstatus = KG_WS_INTERRUPTED;
        v->not_kernel = true;
    }
    if (s->nstalls > stalls0) {
        char words[400];
        kg_session_stall_words(s, s->nstalls - stalls0, words, sizeof words);
        kg_verdict_detail(v, "%s", words);
    }
    if (v->status == KG_FAIL && s->late_writes > late0 && late_write_explains(v->cause)) {
        /* whatever the gate made of them, its runs read outputs that were still being written:
         * that race is the finding, in the words of the gate whose question it is */
        kg_verdict_cause(v, KG_CAUSE_WRONG_STREAM,
                         "%d run%s of this gate read an output that changed after the caller's stream had finished "
                         "the call: work left on a stream of the kernel's own wrote it",
                         s->late_writes - late0, s->late_writes - late0 > 1 ? "s" : "");
        v->cause_of = NULL;
    }
    if ((v->status == KG_FAIL || v->status == KG_ERROR) && v->cause > KG_CAUSE_GATE && v->cause < KG_NCAUSES)
        s->causes_seen |= 1u << v->cause;
    v->seconds = kg_now() - t0;
    s->t_total += v->seconds;
    if (s->debug_memo)
        fprintf(stderr, "kgate memo: %s: %.2f s, %d cases: inputs %.2f s, oracle %.2f s, runs %.2f s (%d)\n", g->id,
                v->seconds, v->ncases, s->t_inputs - in0, s->t_oracle - or0, s->t_run - ru0, s->nruns - n0);
    s->current_gate = NULL;
    if (s->o.progress) s->o.progress(s->o.progress_ud, g->id, kg_status_name(v->status));
}

/* A step after the gates (the standard test, the decoy check): its wall time goes into t_total,
 * and into *own what of it no other part counted (a worker's start is compile, a profiled run is
 * runs): at real sizes the standard test's five trials draw KernelBench's inputs on the host. */
struct step_clock {
    double t0, parts;
};

static double counted(const struct kg_session *s)
{
    return s->t_compile + s->t_inputs + s->t_oracle + s->t_run;
}

static struct step_clock step_start(const struct kg_session *s)
{
    return (struct step_clock){kg_now(), counted(s)};
}

static void step_end(struct kg_session *s, struct step_clock c, double *own)
{
    double wall = kg_now() - c.t0, other = counted(s) - c.parts;
    s->t_total += wall;
    *own += wall > other ? wall - other : 0;
}

void kg_session_baseline_start(struct kg_session *s, double tol)
{
    if (s->cannot_run[0] || !s->be->baseline_start || kg_session_interrupted(s)) return;
    reserve_host(s);
    s->be->baseline_start(s, tol);
}

void kg_session_workers_done(struct kg_session *s)
{
    if (!s->be->baseline_start) return;
    for (int i = 0; i < s->ncand; i++) kg_client_stop(&s->cand[i]);
    kg_client_stop(&s->oracle);
}

int kg_session_baseline(struct kg_session *s, double tol, char *why, size_t n)
{
    if (!s->cannot_run[0]) reserve_host(s);
    struct step_clock c = step_start(s);
    int rc = s->be->baseline(s, tol, why, n);
    step_end(s, c, &s->t_standard);
    return rc;
}

int kg_session_decoy(struct kg_session *s, struct kg_decoy *d, struct kg_err *e)
{
    memset(d, 0, sizeof *d);
    if (!s->be->decoy) return kg_errf(e, "the decoy check is for KernelBench pairs");
    struct step_clock c = step_start(s);
    int rc = s->be->decoy(s, d, e);
    step_end(s, c, &s->t_decoy);
    return rc;
}
