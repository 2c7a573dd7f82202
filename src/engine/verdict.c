/* verdict.c: setting and naming verdicts. */
#include "engine/verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *kg_status_name(enum kg_status s)
{
    static const char *const names[KG_NSTATUS] = {"pass", "fail", "error", "skip", "refused"};
    return (unsigned)s < KG_NSTATUS ? names[s] : "?";
}

void kg_verdict_init(struct kg_verdict *v, const struct kg_gate *g)
{
    memset(v, 0, sizeof *v);
    v->gate = g;
    v->status = KG_ERROR;
    v->same_as = -1;
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

void kg_verdict_cause(struct kg_verdict *v, enum kg_cause c, const char *fmt, ...)
{
    v->cause = c;
    v->cause_text[0] = 0;
    if (!fmt) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->cause_text, sizeof v->cause_text, fmt, ap);
    va_end(ap);
}

enum kg_status kg_overall(const struct kg_verdict *v, int n)
{
    bool err = false, decided = false;
    for (int i = 0; i < n; i++) {
        if (v[i].status == KG_FAIL) return KG_FAIL;
        if (v[i].status == KG_ERROR) err = true;
        if (v[i].status == KG_PASS) decided = true;
    }
    return err ? KG_ERROR : decided ? KG_PASS : KG_SKIP;
}

const char *kg_overall_name(enum kg_status overall)
{
    return overall == KG_SKIP || overall == KG_REFUSED ? "not-checked" : kg_status_name(overall);
}

bool kg_verdict_failed(const struct kg_verdict *v)
{
    return v->status == KG_FAIL || (v->status == KG_ERROR && !v->not_kernel);
}

static bool diagnosed(const struct kg_verdict *v)
{
    return v->cause > KG_CAUSE_GATE && v->cause < KG_NCAUSES;
}

const char *kg_verdict_cause_id(const struct kg_verdict *v)
{
    return diagnosed(v) ? kg_cause_def(v->cause)->id : v->cause_of ? v->cause_of : v->gate->id;
}

const char *kg_verdict_cause_line(const struct kg_verdict *v)
{
    if (v->cause_text[0]) return v->cause_text;
    return diagnosed(v) ? kg_cause_def(v->cause)->title : "not diagnosed: the gate's own finding (see its evidence)";
}

/* The verdict of cause c's home gate, when that gate failed with c; else -1. */
static int home_of(const struct kg_verdict *v, int n, enum kg_cause c)
{
    const char *home = kg_cause_def(c)->home;
    for (int j = 0; j < n && home; j++)
        if (kg_verdict_failed(&v[j]) && v[j].cause == c && !strcmp(v[j].gate->id, home)) return j;
    return -1;
}

void kg_cause_groups(const struct kg_verdict *v, int n, int *same)
{
    int first_failed = -1;
    for (int i = 0; i < n; i++) {
        same[i] = -1;
        if (kg_verdict_failed(&v[i]) && first_failed < 0) first_failed = i;
    }
    /* diagnosed: the cause's home gate owns it when it shows it, else the first verdict with it */
    for (int i = 0; i < n; i++) {
        if (!kg_verdict_failed(&v[i]) || !diagnosed(&v[i])) continue;
        int home = home_of(v, n, v[i].cause);
        if (home >= 0) {
            same[i] = home == i ? -1 : home;
            continue;
        }
        for (int j = 0; j < i; j++)
            if (kg_verdict_failed(&v[j]) && diagnosed(&v[j]) && v[j].cause == v[i].cause && same[j] < 0) {
                same[i] = j;
                break;
            }
    }
    /* undiagnosed: a symptom of the nearest diagnosed failure, or of the first failure */
    for (int i = 0; i < n; i++) {
        if (!kg_verdict_failed(&v[i]) || diagnosed(&v[i])) continue;
        int owner = -1;
        for (int j = 0; j < n && owner < 0 && v[i].cause_of; j++) /* "the nominal case fails too" */
            if (j != i && kg_verdict_failed(&v[j]) && !strcmp(v[j].gate->id, v[i].cause_of)) owner = j;
        for (int j = i - 1; j >= 0 && owner < 0; j--)
            if (kg_verdict_failed(&v[j]) && diagnosed(&v[j])) owner = j;
        for (int j = i + 1; j < n && owner < 0; j++)
            if (kg_verdict_failed(&v[j]) && diagnosed(&v[j])) owner = j;
        if (owner < 0) owner = first_failed;
        if (owner >= 0 && same[owner] >= 0) owner = same[owner];
        same[i] = owner == i ? -1 : owner;
    }
}

void kg_group_causes(struct kg_verdict *v, int n)
{
    int same[n > 0 ? n : 1];
    kg_cause_groups(v, n, same);
    for (int i = 0; i < n; i++) v[i].same_as = same[i];
}
