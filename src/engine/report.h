/* report.h: verdicts as a terminal table and as the JSON document of `kgate check --json`
 * (written with jansson). Both read only the session and its verdicts. */
#ifndef KG_REPORT_H
#define KG_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine/engine.h"

/* Result of the standard test when asked (--baseline). */
struct kg_baseline {
    bool asked;
    const char *name; /* "kernelbench" */
    double tol;
    int result; /* 1 pass, 0 fail, -1 error */
    char why[1024];
};

void kg_report_text(FILE *f, const struct kg_session *s, const struct kg_verdict *v, int n, const struct kg_baseline *b,
                    bool color, bool verbose);

/* A new reference to the report document. */
json_t *kg_report_json(const struct kg_session *s, const struct kg_verdict *v, int n, const struct kg_baseline *b);

/* Evidence of one verdict as a JSON object (plain fields + the gate's extra). */
json_t *kg_verdict_json(const struct kg_verdict *v);

#endif
