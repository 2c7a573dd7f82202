/* run.c: running a gate, the field's standard test and the decoy check for a session. */
#include <stdio.h>
#include <string.h>

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

void kg_session_run_gate(struct kg_session *s, const struct kg_gate *g, struct kg_verdict *v)
{
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

int kg_session_baseline(struct kg_session *s, double tol, char *why, size_t n)
{
    return s->be->baseline(s, tol, why, n);
}

int kg_session_decoy(struct kg_session *s, struct kg_decoy *d, struct kg_err *e)
{
    memset(d, 0, sizeof *d);
    if (!s->be->decoy) return kg_errf(e, "the decoy check is for KernelBench pairs");
    return s->be->decoy(s, d, e);
}
