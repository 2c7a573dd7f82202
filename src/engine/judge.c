/* judge.c: comparing a run with the oracle, and the words and evidence every gate uses for it:
 * the worst element, its error against the reference's, the case, the replay command; and a run
 * judged by the digests of its outputs where an equal run was judged before (kg_exec_judged). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/cache.h"
#include "engine/oracle_worker.h"

#include "engine/session.h"

/* The comparisons of a resident case, made in the oracle worker (only numbers cross); where the
 * run's outputs are not in its segment, or the worker fails, with the values fetched, here; -1
 * when neither could be done (s->judge_broken says why). */
static int compare_resident(const struct kg_exec *x, bool second, const struct kg_expect *ex, struct kg_judgement *j)
{
    struct kg_session *s = ex->resident.s;
    const struct kg_tensor *got[KG_OP_MAX_IO];
    for (int o = 0; o < ex->nout; o++) got[o] = second ? &x->after2[ex->arg[o]] : &x->after[ex->arg[o]];
    struct kg_err e = {0}, fe;
    double t0 = kg_now();
    int rc = x->seg ? kg_oracle_resident_judge(s, ex->resident.id, got, x->seg, ex->nout, j->cmp, &e)
                    : kg_errf(&e, "the run's outputs are not in shared memory");
    s->t_compare += kg_now() - t0;
    if (rc == 0) return 0;
    if (kg_expect_values(s, ex, &fe)) {
        snprintf(s->judge_broken, sizeof s->judge_broken,
                 "the oracle worker could not compare a run (%.1800s), nor send its values (%.1800s)", e.msg, fe.msg);
        return -1;
    }
    for (int o = 0; o < ex->nout; o++)
        kg_compare_calibrated(got[o], &ex->exact[o], &ex->ref[o], ex->scale[o], &j->cmp[o]);
    return 0;
}

static void classes_here(const struct kg_tensor *got, const struct kg_expect *ex, int o, struct kg_classes *c)
{
    const double *exp = ex->exact[o].data, *alt = ex->alt[o].data;
    const bool exact = ex->int_out || !kg_dtype_is_float(got->dtype);
    *c = (struct kg_classes){.first = -1};
    for (int64_t i = 0; i < got->numel; i++) {
        double g = kg_load(got->dtype, got->data, i);
        bool bad = exact ? !(g == exp[i]) && !(isnan(g) && isnan(exp[i])) : kg_value_class(g) != kg_value_class(exp[i]);
        if (bad && alt && kg_value_class(g) == kg_value_class(alt[i])) bad = false; /* either algorithm's pattern */
        if (kg_value_class(exp[i])) c->oracle_nonfinite++;
        if (bad) {
            if (c->first < 0) c->first = i;
            c->mismatches++;
        }
    }
}

int kg_compare_classes(struct kg_session *s, const struct kg_exec *x, const struct kg_expect *ex, struct kg_classes *c,
                       struct kg_err *e)
{
    const struct kg_tensor *got[KG_OP_MAX_IO];
    for (int o = 0; o < ex->nout; o++) got[o] = &x->after[ex->arg[o]];
    if (ex->resident.id && !ex->exact[0].data && ex->nout && x->seg) {
        struct kg_err re;
        double t0 = kg_now();
        int rc = kg_oracle_resident_classes(s, ex->resident.id, got, x->seg, ex->nout, ex->int_out, c, &re);
        s->t_compare += kg_now() - t0;
        if (rc == 0) return 0;
        /* the worker could not: with the values here, as for any other case */
    }
    if (kg_expect_values(s, ex, e)) return -1;
    for (int o = 0; o < ex->nout; o++) classes_here(got[o], ex, o, &c[o]);
    return 0;
}

bool kg_reference_lost(const struct kg_expect *ex, int o)
{
    return ex->floor[o] > 0 && isfinite(ex->ref_err[o]) && ex->ref_err[o] >= KG_GROSS_ERR;
}

void kg_judge(const struct kg_case *k, const struct kg_exec *x, bool second, const struct kg_expect *ex,
              struct kg_judgement *j)
{
    memset(j, 0, sizeof *j);
    j->pass = true;
    j->worst = 0;
    double worst = -1, lost_worst = -1;
    int lost_at = -1;
    if (ex->not_run) { /* no oracle values (kg_case_fault): nothing to pass against */
        j->pass = false;
        return;
    }
    bool remote = ex->resident.id && !ex->exact[0].data && ex->nout;
    if (remote && compare_resident(x, second, ex, j)) {
        j->pass = false; /* no verdict on the kernel: run.c makes the gate's an error */
        return;
    }
    for (int o = 0; o < ex->nout; o++) {
        const struct kg_tensor *got = second ? &x->after2[ex->arg[o]] : &x->after[ex->arg[o]];
        /* non-finite where the working-precision reference is too is the precision's, not a failure */
        if (!remote) kg_compare_calibrated(got, &ex->exact[o], &ex->ref[o], ex->scale[o], &j->cmp[o]);
        double err = j->cmp[o].max_err, thr = ex->threshold[o];
        double m = err == 0 ? 0 : thr > 0 ? err / thr : INFINITY;
        if (isnan(m)) m = INFINITY;
        /* a lost output still fails where the kernel's values are non-finite and the oracle's are
         * not, or grossly beyond even the reference's error (kg_gross_failure's bar) */
        if (kg_reference_lost(ex, o) && j->cmp[o].nonfinite_mismatch == 0 && err < KG_GROSS_RATIO * ex->ref_err[o]) {
            j->lost[o] = true;
            j->nlost++;
            if (m > lost_worst) {
                lost_worst = m;
                lost_at = o;
            }
            continue;
        }
        if (!(m <= 1)) j->pass = false;
        if (m > worst) {
            worst = m;
            j->worst = o;
        }
    }
    if (worst < 0 && lost_at >= 0) j->worst = lost_at; /* every output lost: the evidence is still its */
    j->margin = worst < 0 ? 0 : worst;
    double err = j->cmp[j->worst].max_err, ref = ex->ref_err[j->worst];
    j->ratio = err == 0 ? 0 : ref > 0 ? err / ref : INFINITY;
    /* elements still holding the sentinel prefill were never written (or only computed from it) */
    if (second || (x->fill != KG_FILL_SENTINEL_A && x->fill != KG_FILL_SENTINEL_B)) return;
    uint8_t b = x->fill == KG_FILL_SENTINEL_A ? 0xFF : 0x7F;
    for (int o = 0; o < ex->nout; o++) {
        int arg = ex->arg[o];
        if (k->c->args[arg].io != KG_OUT || k->c->alias_of[arg] >= 0 || !x->after[arg].data) continue;
        size_t es = kg_dtype_size(x->after[arg].dtype);
        const uint8_t *p = x->after[arg].data;
        for (int64_t q = 0; q < x->after[arg].numel; q++) {
            size_t e = 0;
            while (e < es && p[q * es + e] == b) e++;
            if (e < es) continue;
            j->unwritten[o]++;
            if (o == j->worst && q == j->cmp[o].worst) j->worst_unwritten = true;
        }
    }
}

bool kg_gross_failure(const struct kg_expect *ex, const struct kg_judgement *j, char *why, size_t n)
{
    for (int o = 0; o < ex->nout; o++) {
        const struct kg_cmp *c = &j->cmp[o];
        if (j->unwritten[o] > 0) {
            snprintf(why, n, "%lld element%s unwritten", (long long)j->unwritten[o], j->unwritten[o] == 1 ? "" : "s");
            return true;
        }
        if (c->nonfinite_mismatch > 0) {
            snprintf(why, n, "%lld non-finite mismatch%s", (long long)c->nonfinite_mismatch,
                     c->nonfinite_mismatch == 1 ? "" : "es");
            return true;
        }
        if (c->max_err >= KG_GROSS_ERR && !(c->max_err < KG_GROSS_RATIO * ex->ref_err[o])) {
            snprintf(why, n, "error %.2g of the output's scale", c->max_err);
            return true;
        }
    }
    snprintf(why, n,
             "error %.2g, %.3gx the reference's: below the gross bar (%g of the output's scale and %gx the "
             "reference's, or unwritten or non-finite elements)",
             j->cmp[j->worst].max_err, j->ratio, KG_GROSS_ERR, KG_GROSS_RATIO);
    return false;
}

void kg_judgement_evidence(struct kg_session *s, const struct kg_case *k, const struct kg_expect *ex,
                           const struct kg_judgement *j, struct kg_verdict *v)
{
    const struct kg_cmp *c = &j->cmp[j->worst];
    int arg = ex->arg[j->worst];
    struct kg_evidence *ev = &v->ev;
    memset(ev, 0, sizeof *ev);
    ev->valid = c->worst >= 0;
    kg_strlcpy(ev->output, k->c->args[arg].name, sizeof ev->output);
    struct kg_tensor shape = kg_case_tensor(k, arg, k->adtype[arg], NULL);
    if (c->worst >= 0) kg_tensor_index_str(&shape, c->worst, ev->index, sizeof ev->index);
    ev->flat = c->worst;
    ev->got = c->got;
    ev->expected = c->exp;
    ev->err = c->max_err;
    ev->ref_err = ex->ref_err[j->worst];
    ev->threshold = ex->threshold[j->worst];
    ev->unwritten = j->worst_unwritten;
    kg_case_id(k, ev->case_id, sizeof ev->case_id);
    v->ratio = j->ratio;
    kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
}

void kg_verdict_empty(struct kg_verdict *v, const struct kg_case *k)
{
    char sh[KG_SHAPE_STR_MAX];
    kg_case_shape_str(k, sh, sizeof sh);
    kg_verdict_set(v, KG_REFUSED, "the case %s has no output elements: nothing to compare", sh);
    kg_verdict_detail(v,
                      "Every out and inout tensor is empty at %s, so no value could be wrong: a verdict there "
                      "would say nothing. Choose a shape with at least one output element.",
                      sh);
}

/* Whether case k is at the shape every gate starts from (a refusal there is a failure). */
static bool nominal_shape(const struct kg_case *k)
{
    return k->nominal || !memcmp(k->sym, k->c->nominal, sizeof *k->sym * (size_t)k->c->nsyms);
}

/* "kgate-crash: signal 11 addr 0x... pc 0x... so /path/x.so+0x1139" as the host worker writes it
 * when the kernel faults, into words, with the source line where addr2line finds one. */
static void crash_words(const char *msg, const char *src, char *buf, size_t n)
{
    const char *m = strstr(msg, "kgate-crash: ");
    buf[0] = 0;
    if (!m) return;
    int sig = 0;
    unsigned long long addr = 0, pc = 0, off = 0;
    char so[512] = "";
    if (sscanf(m, "kgate-crash: signal %d addr %llx pc %llx so %511[^+\n]+%llx", &sig, &addr, &pc, so, &off) < 3)
        return;
    size_t len = 0;
    kg_appendf(buf, n, &len, "signal %d (%s) at address 0x%llx, pc 0x%llx", sig, strsignal(sig), addr, pc);
    if (!so[0] || so[0] == '-') return;
    char hex[32], out[1024];
    snprintf(hex, sizeof hex, "0x%llx", off);
    char *argv[] = {"addr2line", "-e", so, hex, NULL};
    if (kg_run_cmd(argv, out, sizeof out, 10) == 0 && out[0] && out[0] != '?') {
        out[strcspn(out, "\n")] = 0;
        char *disc = strstr(out, " (discriminator");
        if (disc) *disc = 0;
        /* the cache is shared: the .so may have been built from a copy of this file elsewhere */
        const char *colon = strrchr(out, ':'), *base = strrchr(src, '/');
        base = base ? base + 1 : src;
        size_t bl = strlen(base);
        if (colon && (size_t)(colon - out) >= bl && !strncmp(colon - bl, base, bl) &&
            (colon - out == (long)bl || colon[-(long)bl - 1] == '/'))
            kg_appendf(buf, n, &len, " in %s%s", src, colon);
        else
            kg_appendf(buf, n, &len, " in %s", out);
    } else {
        kg_appendf(buf, n, &len, " (%s+0x%llx; no line: addr2line missing or no debug info)", so, off);
    }
}

void kg_verdict_from_exec(struct kg_verdict *v, const struct kg_case *k, const struct kg_exec *x)
{
    char id[KG_CASE_ID_MAX];
    kg_case_id(k, id, sizeof id);
    v->wstatus = x->status;
    bool refusal = x->status == KG_WS_REFUSED || x->status == KG_WS_EXCEPTION;
    if (refusal && !nominal_shape(k)) {
        /* a shape the kernel does not support, said so: not a failure in any gate */
        if (x->status == KG_WS_REFUSED)
            kg_verdict_set(v, KG_REFUSED, "the kernel refused %s (returned %d)", id, x->code);
        else
            kg_verdict_set(v, KG_REFUSED, "the candidate raised at %s: refused", id);
        if (x->msg[0]) kg_verdict_detail(v, "%s", x->msg);
    } else if (refusal) {
        kg_verdict_set(v, KG_FAIL, "the kernel refused its nominal case %s (%s)", id,
                       x->status == KG_WS_REFUSED ? "returned non-zero" : "raised an exception");
        kg_verdict_detail(v,
                          "%s%sA kernel must compute the shape its contract (or problem) is written for; "
                          "refusing is only for other shapes.",
                          x->msg, x->msg[0] ? "\n" : "");
        kg_verdict_cause(v, KG_CAUSE_GATE, NULL);
    } else if (x->status == KG_WS_MISMATCH) {
        kg_verdict_set(v, KG_FAIL, "outputs differ from the reference's in shape, dtype or device at %s", id);
        kg_verdict_detail(v, "%s", x->msg);
    } else if (x->status == KG_WS_LAUNCH) {
        /* the contract claims this case; a launch that cannot happen is the kernel's failure */
        kg_verdict_set(v, KG_FAIL, "the kernel cannot launch at %s", id);
        kg_verdict_detail(v, "%s", x->msg);
        kg_verdict_cause(v, KG_CAUSE_LAUNCH_LIMIT, "the launch at %s failed", id);
    } else if (x->not_rerun) {
        kg_verdict_set(v, KG_ERROR, "%s", x->msg);
        kg_verdict_cause(v,
                         x->status == KG_WS_TIMEOUT ? KG_CAUSE_HANG
                         : x->status == KG_WS_OOM   ? KG_CAUSE_OUT_OF_MEMORY
                                                    : KG_CAUSE_CRASH,
                         NULL);
    } else {
        kg_verdict_set(v, KG_ERROR, "%s at %s", kg_wstatus_name((enum kg_wstatus)x->status), id);
        kg_verdict_detail(v, "%s", x->msg);
        char words[1200];
        switch (x->status) {
        case KG_WS_TIMEOUT: kg_verdict_cause(v, KG_CAUSE_HANG, "no answer within the time limit at %s", id); break;
        case KG_WS_OOM:
            kg_verdict_cause(v, KG_CAUSE_OUT_OF_MEMORY, "the worker died at its memory limit at %s", id);
            break;
        case KG_WS_CUDA: kg_verdict_cause(v, KG_CAUSE_CRASH, "a CUDA error at %s", id); break;
        case KG_WS_CRASH:
            crash_words(x->msg, k->c->path, words, sizeof words);
            if (words[0]) {
                kg_verdict_cause(v, KG_CAUSE_CRASH, "%s", words);
                kg_verdict_set(v, KG_ERROR, "crash at %s: signal %d (%s)", id, x->code, strsignal(x->code));
            } else if (x->code > 0) {
                kg_verdict_cause(v, KG_CAUSE_CRASH, "signal %d (%s) at %s", x->code, strsignal(x->code), id);
            } else {
                kg_verdict_cause(v, KG_CAUSE_CRASH, "the worker exited (status %d) at %s", x->code, id);
            }
            break;
        default: break;
        }
    }
}

static const char *ratio_text(double err, double ref, char *buf, size_t n)
{
    if (err == 0)
        snprintf(buf, n, "exact");
    else if (ref > 0 && err / ref < 1e5)
        snprintf(buf, n, err / ref < 10 ? "%.2gx the reference's %.2g" : "%.0fx the reference's %.2g", err / ref, ref);
    else if (ref > 0)
        snprintf(buf, n, "%.1ex the reference's %.2g", err / ref, ref);
    else
        snprintf(buf, n, "the reference is exact here");
    return buf;
}

void kg_describe_worst(const struct kg_case *k, const struct kg_expect *ex, const struct kg_judgement *j, char *buf,
                       size_t n)
{
    const struct kg_cmp *c = &j->cmp[j->worst];
    int arg = ex->arg[j->worst];
    struct kg_tensor shape = kg_case_tensor(k, arg, k->adtype[arg], NULL);
    char idx[KG_INDEX_MAX] = "", r[96];
    if (c->worst < 0) {
        snprintf(buf, n, "%s is empty", k->c->args[arg].name);
        return;
    }
    kg_tensor_index_str(&shape, c->worst, idx, sizeof idx);
    if (j->worst_unwritten)
        snprintf(buf, n, "%s%s unwritten (still kgate's prefill), expected %.9g (%lld element%s unwritten)",
                 k->c->args[arg].name, idx, c->exp, (long long)j->unwritten[j->worst],
                 j->unwritten[j->worst] == 1 ? "" : "s");
    else if (c->nonfinite_mismatch)
        snprintf(buf, n, "%s%s = %.9g, expected %.9g (%lld non-finite mismatch%s)", k->c->args[arg].name, idx, c->got,
                 c->exp, (long long)c->nonfinite_mismatch, c->nonfinite_mismatch == 1 ? "" : "es");
    else if (ex->sens_err[j->worst] > 0)
        snprintf(buf, n,
                 "%s%s = %.9g, expected %.9g: error %.2e, %s (threshold %.2e; the oracle itself moves by %.2e there "
                 "when the inputs move by an ulp or two)",
                 k->c->args[arg].name, idx, c->got, c->exp, c->max_err,
                 ratio_text(c->max_err, ex->ref_err[j->worst], r, sizeof r), ex->threshold[j->worst],
                 ex->sens_err[j->worst]);
    else
        snprintf(buf, n, "%s%s = %.9g, expected %.9g: error %.2e, %s (threshold %.2e)", k->c->args[arg].name, idx,
                 c->got, c->exp, c->max_err, ratio_text(c->max_err, ex->ref_err[j->worst], r, sizeof r),
                 ex->threshold[j->worst]);
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

json_t *kg_case_json(const char *id, const struct kg_expect *ex, const struct kg_judgement *j)
{
    json_t *outs = json_array();
    for (int o = 0; o < ex->nout; o++) {
        /* with error and ref_error, the floor lets a report re-judge the case at any k */
        json_t *oj = json_pack("{s:o,s:o,s:o}", "error", num(j->cmp[o].max_err), "ref_error", num(ex->ref_err[o]),
                               "floor", num(ex->floor[o]));
        /* not judged: the working-precision reference lost it (kg_judge) */
        if (j->lost[o]) json_object_set_new(oj, "reference_lost", json_true());
        /* the inputs' conditioning where it errs most, when measured */
        if (ex->sens_err[o] > 0) json_object_set_new(oj, "sens_error", num(ex->sens_err[o]));
        json_array_append_new(outs, oj);
    }
    json_t *c = json_pack("{s:s,s:o,s:o,s:o,s:b,s:o}", "case", id, "error", num(j->cmp[j->worst].max_err), "ref_error",
                          num(ex->ref_err[j->worst]), "threshold", num(ex->threshold[j->worst]), "pass", j->pass,
                          "outputs", outs);
    /* passed on the inputs' conditioning (kg_check_case): a report cannot re-judge it from the
     * numbers above, and counts it as passing at any k */
    if (j->conditioned) json_object_set_new(c, "conditioned", json_true());
    return c;
}

/* ---- judgements by digest ----------------------------------------------------------------- */

/* Whether runs of case k may be judged by digest: a backend that digests (KG_CAP_DIGEST), a
 * kernel not seen nondeterministic (its bytes would differ anyway), no paired launch. */
static bool by_digest(const struct kg_session *s, const struct kg_exec_opts *o)
{
    return kg_session_can(s, KG_CAP_DIGEST) && !s->nondeterministic && !s->o.keep_runs &&
           !(o->flags & (KG_RUN_PAIR | KG_RUN_DIGEST | KG_RUN_DIGEST_ALSO));
}

static struct kg_judged *judged_of(struct kg_session *s, const char *id, const struct kg_case *k,
                                   const struct kg_exec *x)
{
    for (int i = 0; i < s->njudged; i++) {
        struct kg_judged *d = &s->judged[i];
        if (strcmp(d->case_id, id)) continue;
        if (!x) return d;
        bool same = true;
        for (int a = 0; a < k->c->nargs && same; a++)
            if (kg_arg_is_output(&k->c->args[a])) same = d->digest[a] == x->digest[a];
        if (same) return d;
    }
    return NULL;
}

void kg_judged_keep(struct kg_session *s, const struct kg_case *k, const struct kg_exec *x,
                    const struct kg_judgement *j)
{
    if (!x->has_digest || !j->pass || j->conditioned) return;
    char id[KG_CASE_ID_MAX];
    kg_case_id(k, id, sizeof id);
    if (judged_of(s, id, k, x)) return;
    struct kg_judged *d = &s->judged[s->njudged < KG_JUDGED_MAX ? s->njudged++ : s->judged_next++ % KG_JUDGED_MAX];
    kg_strlcpy(d->case_id, id, sizeof d->case_id);
    memcpy(d->digest, x->digest, sizeof d->digest);
    d->j = *j;
}

uint32_t kg_judged_flag(const struct kg_session *s, const struct kg_case *k, const struct kg_exec_opts *o)
{
    return by_digest(s, o) && k->nominal && k->dist == KG_DIST_NORMAL ? KG_RUN_DIGEST_ALSO : 0;
}

int kg_exec_judged(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                   const struct kg_exec_opts *o, const struct kg_expect *ex, struct kg_exec *x, struct kg_judgement *j)
{
    /* The outputs still come to the judge: a run whose digests miss is judged from its own
     * outputs, never run again (a second call of a kernel that keeps state between calls is
     * not the call that missed). What a hit saves is the comparison, which for a resident
     * oracle is the outputs' copy into the oracle worker and its pass over them. */
    struct kg_exec_opts d = *o;
    bool digests = by_digest(s, o);
    if (digests) d.flags |= KG_RUN_DIGEST_ALSO;
    if (kg_exec(s, k, in, &d, x) != KG_WS_OK) return x->status;
    if (digests) {
        char id[KG_CASE_ID_MAX];
        kg_case_id(k, id, sizeof id);
        const struct kg_judged *known = judged_of(s, id, k, x);
        if (known) {
            *j = known->j;
            x->judged_by_digest = true;
            return x->status;
        }
    }
    kg_judge(k, x, false, ex, j);
    kg_judged_keep(s, k, x, j);
    return x->status;
}
