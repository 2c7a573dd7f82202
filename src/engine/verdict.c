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
    bool err = false;
    for (int i = 0; i < n; i++) {
        if (v[i].status == KG_FAIL) return KG_FAIL;
        if (v[i].status == KG_ERROR) err = true;
    }
    return err ? KG_ERROR : KG_PASS;
}
