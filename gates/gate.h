/* gate.h: what a gate is, what it answers, and the engine calls a gate may use. A gate asks
 * the session for cases, runs and oracle values; it never knows which runner executes
 * them. Each gates/<id>.c exports one `const struct kg_gate kg_gate_<id>`; gates.c lists
 * them in the order of ARCHITECTURE.md. */
#ifndef KG_GATE_H
#define KG_GATE_H

#include <jansson.h>
#include <stdbool.h>

#include "engine/compare.h"
#include "contract/inputs.h"

struct kg_session;

enum kg_status { KG_PASS, KG_FAIL, KG_ERROR, KG_SKIP, KG_REFUSED };

const char *kg_status_name(enum kg_status s);

/* The worst element a gate found, in plain fields the UI can print without parsing JSON. */
struct kg_evidence {
    bool valid;
    char output[KG_NAME_MAX];
    char index[96];
    int64_t flat;
    double got, expected, err, ref_err, threshold;
    char case_id[384];
};

struct kg_verdict {
    const struct kg_gate *gate;
    enum kg_status status;
    char summary[512];  /* one line */
    char detail[4096];  /* more lines: what happened, why it matters */
    struct kg_evidence ev;
    json_t *extra;      /* gate-specific evidence (a JSON object), owned; may be NULL */
    char replay[1024];  /* the kgate command that replays the deciding case */
    double seconds;
    double ratio;       /* calibrated gates: measured error / reference error (0 if n/a) */
    int ncases;
    int wstatus;        /* the worker status behind an error verdict (enum kg_wstatus) */
};

void kg_verdict_init(struct kg_verdict *v, const struct kg_gate *g);
void kg_verdict_clear(struct kg_verdict *v);
void kg_verdict_set(struct kg_verdict *v, enum kg_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void kg_verdict_detail(struct kg_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct kg_gate {
    const char *id;
    const char *title;
    bool tolerance_free;
    bool needs_gpu; /* skips on the host runner, saying why */
    const char *explain;
    const char *explain_python; /* what it does for KernelBench-format candidates */
    void (*run)(struct kg_session *s, struct kg_verdict *v);
};

extern const struct kg_gate *const kg_gates[]; /* in order, NULL-terminated */
const struct kg_gate *kg_gate_find(const char *id);

/* ---- runs -------------------------------------------------------------------------------- */

/* How outputs are prefilled before a run. */
enum kg_fill {
    KG_FILL_SENTINEL_A, /* 0xFF bytes: NaN in every float dtype, -1 in integers */
    KG_FILL_SENTINEL_B, /* 0x7F bytes: 3.4e38 in f32/bf16, NaN in f16, a large integer */
    KG_FILL_ZERO,
    KG_FILL_GARBAGE,    /* finite seeded values */
};

struct kg_exec_opts {
    enum kg_fill fill;
    uint8_t guard_byte;
    uint32_t flags;               /* KG_RUN_* */
    const struct kg_inputs *in2;  /* KG_RUN_PAIR: inputs of the second launch */
    bool fresh_worker;            /* kill the worker first: the run happens in a new process */
};

struct kg_exec {
    int status; /* enum kg_wstatus */
    int code;
    char msg[4096];
    double seconds;
    struct kg_tensor before[KG_MAX_ARGS]; /* every tensor as sent (inputs and prefill) */
    struct kg_tensor after[KG_MAX_ARGS];  /* every tensor after the call */
    struct kg_tensor after2[KG_MAX_ARGS]; /* KG_RUN_PAIR: the second launch's */
    int64_t guard_bad[KG_MAX_ARGS];       /* guard bytes changed (0: intact) */
    int64_t guard_first[KG_MAX_ARGS];     /* byte offset from the data start of the first one */
    int64_t guard_last[KG_MAX_ARGS];
};

/* Runs the kernel once on case k with inputs in; fills x (free with kg_exec_free). Returns
 * x->status (KG_WS_OK when the kernel ran). Worker crashes and hangs come back as
 * KG_WS_CRASH / KG_WS_TIMEOUT; the next run gets a fresh worker. */
int kg_exec(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, const struct kg_exec_opts *o,
            struct kg_exec *x);
void kg_exec_free(struct kg_exec *x);

/* ---- the oracle ---------------------------------------------------------------------------- */

struct kg_expect {
    int nout;
    int arg[KG_OP_MAX_IO];                /* contract arg index of each oracle output */
    struct kg_tensor exact[KG_OP_MAX_IO]; /* fp64 oracle */
    struct kg_tensor alt[KG_OP_MAX_IO];   /* a second legitimate fp64 algorithm, when the op has one
                                             (data NULL otherwise): the nonfinite gate accepts
                                             either's NaN/Inf pattern */
    struct kg_tensor ref[KG_OP_MAX_IO];   /* working-precision reference, rounded to the dtype */
    double scale[KG_OP_MAX_IO];
    double ref_err[KG_OP_MAX_IO];         /* error of ref vs exact (compare.h's measure) */
    double threshold[KG_OP_MAX_IO];       /* k * ref_err + floor(dtype) */
    double floor[KG_OP_MAX_IO];           /* floor(dtype), 0 for exact-match outputs */
    bool int_out;
};

int kg_expect_compute(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                      struct kg_expect *x, struct kg_err *e);
void kg_expect_free(struct kg_expect *x);

/* ---- judging ------------------------------------------------------------------------------- */

struct kg_judgement {
    bool pass;
    int worst;              /* index into expect's outputs of the worst one */
    double margin;          /* max over outputs of err / threshold (> 1: fail) */
    double ratio;           /* err / ref_err of the worst output (inf when ref_err is 0 and err > 0) */
    struct kg_cmp cmp[KG_OP_MAX_IO];
};

/* Compares the run's outputs (x->after, or x->after2 when second) with the oracle. */
void kg_judge(const struct kg_case *k, const struct kg_exec *x, bool second, const struct kg_expect *ex,
              struct kg_judgement *j);

/* Fills v->ev (and v->replay for gate id) from the worst output of a judgement. */
void kg_judgement_evidence(struct kg_session *s, const struct kg_case *k, const struct kg_expect *ex,
                           const struct kg_judgement *j, struct kg_verdict *v);

/* One-shot helper used by most calibrated gates: generate inputs, run, oracle, judge.
 * Returns 0 when it ran (j filled), -1 when the run errored (v set to error or refused). */
int kg_check_case(struct kg_session *s, const struct kg_case *k, const struct kg_exec_opts *o,
                  struct kg_judgement *j, struct kg_expect *ex_out, struct kg_exec *x_out, struct kg_verdict *v);

/* The case a gate starts from: the pinned or nominal shape, dtype, seed offset, dist. */
int kg_nominal_case(struct kg_session *s, enum kg_dtype dtype, uint64_t seed_offset, enum kg_dist dist,
                    struct kg_case *k, struct kg_err *e);

/* The nominal case (default dtype, seed offset 0, normal inputs) and its inputs, for gates that
 * run it several ways; -1 with v set to error when either cannot be made. */
int kg_nominal_inputs(struct kg_session *s, struct kg_case *k, struct kg_inputs *in, struct kg_verdict *v);

/* The nominal case at seed offsets 0..n-1 (default dtype, normal inputs) with its inputs and
 * oracle values: for gates that compare calls on different inputs. Returns how many are ready
 * (n, or fewer with e filled); the caller frees the ready ones. */
int kg_prepare_cases(struct kg_session *s, int n, struct kg_case *k, struct kg_inputs *in, struct kg_expect *ex,
                     struct kg_err *e);

/* The dtype instances a calibrated gate iterates over (all of `dtypes:`, or the pinned one). */
int kg_instance_dtypes(struct kg_session *s, enum kg_dtype *out);

/* The replay command for gate g at case k. */
void kg_replay(struct kg_session *s, const struct kg_gate *g, const struct kg_case *k, char *buf, size_t n);

/* Sets v to error/refused from a failed run and returns. */
void kg_verdict_from_exec(struct kg_verdict *v, const struct kg_case *k, const struct kg_exec *x);

/* Whether the session runs on the host runner (gates needing a GPU skip). */
bool kg_session_is_host(const struct kg_session *s);


/* ---- wording shared by gates ------------------------------------------------------------- */

/* "y[3,17] = 0.51, expected 0.49: error 4.1e-02, 5000x the f32 reference's 8.2e-06
 *  (threshold 1.6e-05)" */
void kg_describe_worst(const struct kg_case *k, const struct kg_expect *ex, const struct kg_judgement *j, char *buf,
                       size_t n);

/* The floor of output o (threshold = k * ref_err + floor). */
static inline double kg_floor_of(const struct kg_expect *ex, int o)
{
    return ex->floor[o];
}

/* A calibrated case as JSON: its worst error, and per output (error, ref_error, floor), from
 * which a report re-judges the case at any calibration factor k. Non-finite numbers are
 * strings ("nan", "inf"). */
json_t *kg_case_json(const char *id, const struct kg_expect *ex, const struct kg_judgement *j);

/* A gate's cost budget for one case: total tensor elements, and oracle work. */
bool kg_case_affordable(struct kg_session *s, const struct kg_case *k);

#endif
