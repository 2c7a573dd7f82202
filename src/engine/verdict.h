/* verdict.h: what a gate is and what it answers. A gate (gates/<id>.c) is a constant struct
 * kg_gate whose run() fills a struct kg_verdict; the engine runs it (kg_session_run_gate) and
 * the faces (report, inspector, audit) print verdicts. Nothing here knows a runner. */
#ifndef KG_VERDICT_H
#define KG_VERDICT_H

#include <jansson.h>
#include <stdbool.h>

#include "contract/case.h"
#include "engine/cause.h"

struct kg_session;

enum kg_status { KG_PASS, KG_FAIL, KG_ERROR, KG_SKIP, KG_REFUSED };
#define KG_NSTATUS 5

const char *kg_status_name(enum kg_status s);

/* Lengths of a verdict's strings. */
#define KG_INDEX_MAX   96 /* "[3,17]", "byte +4096" */
#define KG_SUMMARY_MAX 512
#define KG_DETAIL_MAX  4096
#define KG_REPLAY_MAX  1024

/* The worst element a gate found, in plain fields the UI can print without parsing JSON. */
struct kg_evidence {
    bool valid;
    char output[KG_NAME_MAX];
    char index[KG_INDEX_MAX];
    int64_t flat;
    double got, expected, err, ref_err, threshold;
    char case_id[KG_CASE_ID_MAX];
};

struct kg_verdict {
    const struct kg_gate *gate;
    enum kg_status status;
    char summary[KG_SUMMARY_MAX]; /* one line */
    char detail[KG_DETAIL_MAX];   /* more lines: what happened, why it matters */
    struct kg_evidence ev;
    json_t *extra;              /* gate-specific evidence (a JSON object), owned; may be NULL */
    char replay[KG_REPLAY_MAX]; /* the kgate command that replays the deciding case */
    double seconds;
    double ratio; /* calibrated gates: measured error / reference error (0 if n/a) */
    int ncases;
    int wstatus;                     /* the worker status behind an error verdict (enum kg_wstatus) */
    enum kg_cause cause;             /* a fail/error: what was diagnosed (KG_CAUSE_GATE: not diagnosed) */
    char cause_text[KG_SUMMARY_MAX]; /* the diagnosis's evidence, one line ("error x4 per 4x K, as fp16's") */
    int same_as;                     /* the index of the verdict that showed this cause first, or -1 */
    const char *cause_of;            /* KG_CAUSE_GATE: the id of the gate whose undiagnosed finding this is (a static
                             string; NULL: this gate's), e.g. "accuracy" when the nominal case fails too */
};

void kg_verdict_init(struct kg_verdict *v, const struct kg_gate *g);
void kg_verdict_clear(struct kg_verdict *v);
void kg_verdict_set(struct kg_verdict *v, enum kg_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void kg_verdict_detail(struct kg_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets v's cause and the diagnosis's one-line evidence. */
void kg_verdict_cause(struct kg_verdict *v, enum kg_cause c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The overall verdict of n gates: fail if any gate failed, else error if any errored, else pass. */
enum kg_status kg_overall(const struct kg_verdict *v, int n);

struct kg_gate {
    const char *id;
    const char *title;
    bool tolerance_free;
    bool needs_gpu; /* skips where the session has no GPU, saying why */
    const char *explain;
    const char *explain_python; /* what it does for KernelBench-format candidates */
    void (*run)(struct kg_session *s, struct kg_verdict *v);
};

#endif
