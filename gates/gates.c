/* gates.c: the twelve gates in the order of ARCHITECTURE.md, and the verdict helpers. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gates/gate.h"

extern const struct kg_gate kg_gate_structure, kg_gate_accuracy, kg_gate_nonfinite, kg_gate_determinism,
    kg_gate_freshness, kg_gate_aliasing, kg_gate_placement, kg_gate_shapes, kg_gate_precision,
    kg_gate_reduction_order, kg_gate_bounds, kg_gate_limits;

const struct kg_gate *const kg_gates[] = {
    &kg_gate_structure, &kg_gate_accuracy, &kg_gate_nonfinite, &kg_gate_determinism,
    &kg_gate_freshness, &kg_gate_aliasing, &kg_gate_placement, &kg_gate_shapes,
    &kg_gate_precision, &kg_gate_reduction_order, &kg_gate_bounds, &kg_gate_limits,
    NULL,
};

const struct kg_gate *kg_gate_find(const char *id)
{
    for (int i = 0; kg_gates[i]; i++)
        if (!strcmp(kg_gates[i]->id, id)) return kg_gates[i];
    /* accept the underscore spelling of reduction-order */
    if (!strcmp(id, "reduction_order")) return &kg_gate_reduction_order;
    return NULL;
}

const char *kg_status_name(enum kg_status s)
{
    static const char *const names[] = {"pass", "fail", "error", "skip", "refused"};
    return (unsigned)s < 5 ? names[s] : "?";
}

void kg_verdict_init(struct kg_verdict *v, const struct kg_gate *g)
{
    memset(v, 0, sizeof *v);
    v->gate = g;
    v->status = KG_ERROR;
    snprintf(v->summary, sizeof v->summary, "not run");
}

void kg_verdict_clear(struct kg_verdict *v)
{
    if (v->extra) json_decref(v->extra);
    v->extra = NULL;
}

void kg_verdict_set(struct kg_verdict *v, enum kg_status st, const char *fmt, ...)
{
    v->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->summary, sizeof v->summary, fmt, ap);
    va_end(ap);
}

void kg_verdict_detail(struct kg_verdict *v, const char *fmt, ...)
{
    size_t len = strlen(v->detail);
    if (len && len + 1 < sizeof v->detail) v->detail[len++] = '\n', v->detail[len] = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->detail + len, sizeof v->detail - len, fmt, ap);
    va_end(ap);
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
    struct kg_tensor shape = {.rank = k->shape[arg].rank, .numel = k->numel[arg]};
    memcpy(shape.dims, k->shape[arg].dims, sizeof shape.dims);
    char idx[96] = "", r[96];
    if (c->worst >= 0) kg_tensor_index_str(&shape, c->worst, idx, sizeof idx);
    if (c->worst < 0) {
        snprintf(buf, n, "%s is empty", k->c->args[arg].name);
        return;
    }
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
        double floor = kg_floor_of(ex, o);
        json_array_append_new(outs, json_pack("{s:o,s:o,s:o}", "error", num(j->cmp[o].max_err), "ref_error",
                                              num(ex->ref_err[o]), "floor", num(floor)));
    }
    return json_pack("{s:s,s:o,s:o,s:o,s:b,s:o}", "case", id, "error", num(j->cmp[j->worst].max_err), "ref_error",
                     num(ex->ref_err[j->worst]), "threshold", num(ex->threshold[j->worst]), "pass", j->pass, "outputs",
                     outs);
}
