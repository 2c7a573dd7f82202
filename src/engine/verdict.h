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
    bool unwritten; /* got is kgate's own prefill: the element was never written (print `unwritten`) */
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
    bool not_kernel;                 /* an error that is kgate's or the host's (a comparison that could not be made, the
                        host's OOM killer, a stopped gate): it says nothing of the kernel, so no cause */
};

void kg_verdict_init(struct kg_verdict *v, const struct kg_gate *g);
/* Whether v is a fail, or an error that is the kernel's (not_kernel unset): what has a cause. */
bool kg_verdict_failed(const struct kg_verdict *v);
void kg_verdict_clear(struct kg_verdict *v);
void kg_verdict_set(struct kg_verdict *v, enum kg_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void kg_verdict_detail(struct kg_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets v's cause and the diagnosis's one-line evidence. */
void kg_verdict_cause(struct kg_verdict *v, enum kg_cause c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The overall verdict of n gates: fail if any gate failed, else error if any errored, else pass;
 * KG_SKIP when no gate decided anything (every one skipped or refused, or n == 0). */
enum kg_status kg_overall(const struct kg_verdict *v, int n);
/* The overall verdict's name: pass, fail, error, or not-checked (kg_overall's KG_SKIP). */
const char *kg_overall_name(enum kg_status overall);

/* The id a failing verdict's cause goes by: the cause's, or the gate's own when undiagnosed. */
const char *kg_verdict_cause_id(const struct kg_verdict *v);
/* What a failing verdict's cause says in one line: its diagnosis evidence, else the title. */
const char *kg_verdict_cause_line(const struct kg_verdict *v);

/* One defect, one report: fills same[i] for n verdicts (-1: verdict i owns its cause, or did
 * not fail). A diagnosed cause belongs to the first verdict that shows it. An undiagnosed
 * failure (KG_CAUSE_GATE) is a symptom of a diagnosed one when there is one: the nearest
 * diagnosed failure before it, else the first after it; with no diagnosed failure at all, the
 * first failing verdict owns every undiagnosed failure. Only fail and error verdicts take part. */
void kg_cause_groups(const struct kg_verdict *v, int n, int *same);
/* The same, into each verdict's same_as. */
void kg_group_causes(struct kg_verdict *v, int n);

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
