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
    int result;  /* 1 pass, 0 fail, -1 error */
    bool beside; /* it ran beside the gates (else after them: KGATE_STANDARD_BESIDE=0) */
    char why[1024];
};

/* The most verdicts one report groups by cause (more than every gate). */
#define KG_REPORT_MAX 64

/* The text report: one line per gate; a failure that owns its cause gets a `cause:` line and
 * its evidence, one whose cause an earlier gate showed says `(same cause as GATE)` (its
 * evidence only with verbose). */
void kg_report_text(FILE *f, const struct kg_session *s, const struct kg_verdict *v, int n, const struct kg_baseline *b,
                    bool color, bool verbose);

/* A new reference to the report document: "verdict" (pass, fail, error, not-checked),
 * "causes" (each distinct cause once, in gate order: id, gate, text) and per gate its status,
 * evidence, and for a failure its "cause" and "same_cause_as". */
json_t *kg_report_json(const struct kg_session *s, const struct kg_verdict *v, int n, const struct kg_baseline *b);

/* Evidence of one verdict as a JSON object (plain fields + the gate's extra). */
json_t *kg_verdict_json(const struct kg_verdict *v);

#endif
