/* judge.c: comparing a run with the oracle, and the words and evidence every gate uses for it:
 * the worst element, its error against the reference's, the case, the replay command. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/session.h"

void kg_judge(const struct kg_case *k, const struct kg_exec *x, bool second, const struct kg_expect *ex,
              struct kg_judgement *j)
{
    memset(j, 0, sizeof *j);
    j->pass = true;
    j->worst = 0;
    double worst = -1;
    for (int o = 0; o < ex->nout; o++) {
        const struct kg_tensor *got = second ? &x->after2[ex->arg[o]] : &x->after[ex->arg[o]];
        /* non-finite where the working-precision reference is too is the precision's, not a failure */
        kg_compare_calibrated(got, &ex->exact[o], &ex->ref[o], ex->scale[o], &j->cmp[o]);
        double err = j->cmp[o].max_err, thr = ex->threshold[o];
        double m = err == 0 ? 0 : thr > 0 ? err / thr : INFINITY;
        if (isnan(m)) m = INFINITY;
        if (!(m <= 1)) j->pass = false;
        if (m > worst) {
            worst = m;
            j->worst = o;
        }
    }
    j->margin = worst < 0 ? 0 : worst;
    double err = j->cmp[j->worst].max_err, ref = ex->ref_err[j->worst];
    j->ratio = err == 0 ? 0 : ref > 0 ? err / ref : INFINITY;
    (void)k;
}

/* Output o's shape as a tensor header (no data), for index strings. */
static struct kg_tensor shape_of(const struct kg_case *k, int arg)
{
    struct kg_tensor shape = {.rank = k->shape[arg].rank, .numel = k->numel[arg]};
    memcpy(shape.dims, k->shape[arg].dims, sizeof shape.dims);
    return shape;
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
    struct kg_tensor shape = shape_of(k, arg);
    if (c->worst >= 0) kg_tensor_index_str(&shape, c->worst, ev->index, sizeof ev->index);
    ev->flat = c->worst;
    ev->got = c->got;
    ev->expected = c->exp;
    ev->err = c->max_err;
    ev->ref_err = ex->ref_err[j->worst];
    ev->threshold = ex->threshold[j->worst];
    kg_case_id(k, ev->case_id, sizeof ev->case_id);
    v->ratio = j->ratio;
    kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
}

void kg_verdict_from_exec(struct kg_verdict *v, const struct kg_case *k, const struct kg_exec *x)
{
    char id[KG_CASE_ID_MAX];
    kg_case_id(k, id, sizeof id);
    v->wstatus = x->status;
    if (x->status == KG_WS_REFUSED) {
        kg_verdict_set(v, KG_REFUSED, "the kernel refused %s (returned %d)", id, x->code);
    } else if (x->status == KG_WS_MISMATCH) {
        kg_verdict_set(v, KG_FAIL, "outputs differ from the reference's in shape, dtype or device at %s", id);
        kg_verdict_detail(v, "%s", x->msg);
    } else if (x->status == KG_WS_LAUNCH) {
        /* the contract claims this case; a launch that cannot happen is the kernel's failure */
        kg_verdict_set(v, KG_FAIL, "the kernel cannot launch at %s", id);
        kg_verdict_detail(v, "%s", x->msg);
    } else {
        kg_verdict_set(v, KG_ERROR, "%s at %s", kg_wstatus_name((enum kg_wstatus)x->status), id);
        kg_verdict_detail(v, "%s", x->msg);
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
    struct kg_tensor shape = shape_of(k, arg);
    char idx[KG_INDEX_MAX] = "", r[96];
    if (c->worst < 0) {
        snprintf(buf, n, "%s is empty", k->c->args[arg].name);
        return;
    }
    kg_tensor_index_str(&shape, c->worst, idx, sizeof idx);
    if (c->nonfinite_mismatch)
        snprintf(buf, n, "%s%s = %.9g, expected %.9g (%lld non-finite mismatch%s)", k->c->args[arg].name, idx, c->got,
                 c->exp, (long long)c->nonfinite_mismatch, c->nonfinite_mismatch == 1 ? "" : "es");
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
        json_array_append_new(outs, json_pack("{s:o,s:o,s:o}", "error", num(j->cmp[o].max_err), "ref_error",
                                              num(ex->ref_err[o]), "floor", num(ex->floor[o])));
    }
    return json_pack("{s:s,s:o,s:o,s:o,s:b,s:o}", "case", id, "error", num(j->cmp[j->worst].max_err), "ref_error",
                     num(ex->ref_err[j->worst]), "threshold", num(ex->threshold[j->worst]), "pass", j->pass, "outputs",
                     outs);
}
