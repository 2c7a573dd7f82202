/* engine.h: the judging engine as the gates and the faces (check, inspector, audit) see it. A
 * session is one kernel file (or KernelBench pair) under judgement; it is opaque here: gates
 * ask it for cases, runs and oracle values through these calls and read its contract, options
 * and device through accessors, never its fields, and never learn which runner executes the
 * kernel (the session's backend, engine/backend.h, decides that).
 *
 * Ownership, as everywhere in libkgate: a call that fills a caller's struct transfers what it
 * points to (free with the matching *_free); pointers returned into the session stay the
 * session's. Errors come back as -1 (or an exit code) with a struct kg_err message. */
#ifndef KG_ENGINE_H
#define KG_ENGINE_H

#include <math.h>
#include <stdbool.h>

#include "engine/values.h"
#include "engine/verdict.h"

enum kg_exit {
    KG_EXIT_OK = 0,          /* every gate passed or skipped */
    KG_EXIT_FAIL = 1,        /* a gate failed or errored */
    KG_EXIT_USAGE = 2,       /* bad usage, or the kernel file cannot be loaded */
    KG_EXIT_UNAVAILABLE = 3, /* nothing was checked: the runner cannot run here */
    KG_EXIT_INTERNAL = 4,    /* kgate itself failed (out of memory, I/O) */
};

struct kg_session_opts {
    uint64_t seed; /* base seed (default 1) */
    bool seed_given;
    int runner;      /* enum kg_runner_kind, or -1: from the file type */
    double timeout;  /* per run, seconds (default 10) */
    uint64_t memory; /* host kernels: a worker's address space limit in bytes (0: half the RAM) */
    bool pin_shape;  /* --shape: every gate uses these symbol values */
    int64_t sym[KG_MAX_SYMS];
    int dtype;          /* -1: the contract's instances */
    int dist;           /* -1: each gate's own */
    double tol_k;       /* 0: the contract's (default 2) */
    int64_t max_elems;  /* per-case budget for sweeps (0: the backend's default) */
    bool exhaustive;    /* calibrated gates measure every case even after a failure (audits) */
    bool allow_tf32;    /* --allow tf32: fp32 outputs are held to TF32's precision (also `allow: tf32`) */
    const char *cc;     /* host compiler (default: $KGATE_CC, else configure's) */
    const char *python; /* KernelBench pairs: the interpreter (default: $KGATE_PYTHON, else python3) */
    void (*progress)(void *ud, const char *gate, const char *what);
    void *progress_ud;
    /* A face's request to stop (the inspector's Ctrl-C; NULL in kgate check), asked between
     * cases and every 100 ms while a run waits. Once it says true the run in progress is killed
     * with its worker (KG_WS_INTERRUPTED; the next run starts a fresh one), later runs,
     * inputs and oracle values are not made, and the gate's verdict says it was interrupted.
     * The face clears its flag before its next command. */
    bool (*interrupted)(void *ud);
    void *interrupted_ud;
    /* --compile-only: where the runner cannot run (a .cu without libcuda or a GPU), compile the
     * kernel anyway when its compiler is there (NVRTC); the session then can run nothing. */
    bool compile_only;
    /* A face that describes kernels (the inspector): where the runner cannot run, open the
     * session anyway, the kernel compiled if its compiler is there; kg_session_cannot_run says
     * why and every gate skips with that reason. Off, such an open is KG_EXIT_UNAVAILABLE. */
    bool open_unrunnable;
    /* The inspector's `replay`: the determinism gate's outputs kept, run by run (kg_records).
     * Off in kgate check and audit, where nothing reads them: at KernelBench's real sizes they
     * were six copies of every output (12.8 GB for a 5.4e8-element max pool). */
    bool keep_runs;
    /* A pair whose standard test will be started beside the gates (kg_session_baseline_start):
     * its worker is started and loads while the session opens, beside the oracle's and the
     * candidate's, instead of after them. */
    bool baseline_ahead;
};

void kg_session_opts_default(struct kg_session_opts *o);

/* ---- opening and closing ------------------------------------------------------------------- */

/* Loads the contract, starts the worker and compiles the kernel. On failure returns the exit
 * code to use (KG_EXIT_USAGE for a bad file or compile error, KG_EXIT_UNAVAILABLE when the
 * runner cannot run here) with e saying why, naming file and line. */
int kg_session_open(struct kg_session **out, const char *path, const struct kg_session_opts *o, struct kg_err *e);

/* A KernelBench pair: PROBLEM.py (Model, get_inputs, get_init_inputs) is the oracle, run by one
 * torch worker; CANDIDATE.py (ModelNew) by another. The contract is synthesised from the
 * problem (contract/pair.h). Same exit codes as kg_session_open. */
int kg_session_open_pair(struct kg_session **out, const char *problem, const char *candidate,
                         const struct kg_session_opts *o, struct kg_err *e);
/* kgate audit's cost estimate of a pair, before its check (`kgate check --estimate`): the bytes
 * of the problem's inputs and outputs at its nominal constants, from PyTorch's meta device
 * (kg_torch_estimate); KG_EXIT_UNAVAILABLE where that cannot stand in. */
int kg_session_estimate_pair(const char *problem, const char *candidate, const struct kg_session_opts *o,
                             double *in_bytes, double *out_bytes, struct kg_err *e);
void kg_session_close(struct kg_session *s);

/* ---- what a session is ---------------------------------------------------------------------- */

const struct kg_contract *kg_session_contract(const struct kg_session *s);
const struct kg_session_opts *kg_session_opts(const struct kg_session *s);
/* "host", "cuda" or "torch": for reports and the inspector, never for decisions */
const char *kg_session_runner(const struct kg_session *s);
/* Why a gate that needs a GPU cannot run in this session, or NULL when it can. */
const char *kg_session_no_gpu(const struct kg_session *s);
bool kg_session_is_host(const struct kg_session *s);
/* Why this session's kernel cannot run here (opened with open_unrunnable or compile_only
 * where its runner cannot run), or NULL when it can. */
const char *kg_session_cannot_run(const struct kg_session *s);
/* Whether the face asked to stop (opts.interrupted). */
bool kg_session_interrupted(const struct kg_session *s);

/* What the session's backend can do beyond running a case. */
enum kg_cap {
    KG_CAP_CONCURRENT = 1u << 0,  /* two launches at once on two streams (KG_RUN_PAIR) */
    KG_CAP_LAUNCH = 1u << 1,      /* the contract's launch configuration is the kernel's (device limits apply) */
    KG_CAP_SAMPLE_HUGE = 1u << 2, /* kg_session_sample: a case too large to ship, compared at sampled indices */
    KG_CAP_TF32_SWITCH = 1u << 3, /* KG_RUN_NO_TF32 turns the candidate's TF32 off (PyTorch's switches) */
    /* The candidate allocates its outputs (a torch candidate's torch.empty): the runner fills the
     * memory they come from with the prefill, but the judge does not know what each element held
     * before the call, so an element that follows its prefill was never initialised: unwritten. */
    KG_CAP_FRESH_OUTPUTS = 1u << 4,
    /* KG_RUN_SYNC_DEVICE waits for all of the device's work, not only the caller's stream's, before
     * the outputs are read: a candidate can launch work on streams of its own (a torch candidate on
     * a GPU; not a .cu entry, whose one launch the runner makes, nor any run on the CPU). */
    KG_CAP_SYNC_DEVICE = 1u << 5,
    /* KG_RUN_DIGEST: the outputs stay in the worker, which answers with a digest of each and the
     * count of its elements that kept the prefill (a torch worker: computed on its device, where a
     * real-size output is gigabytes to copy to the host and compare there) */
    KG_CAP_DIGEST = 1u << 6,
};
bool kg_session_can(const struct kg_session *s, enum kg_cap cap);

/* What the determinism gate saw: the kernel gave different bits on the same inputs. Gates that
 * compare two runs bit for bit (aliasing's prefills, bounds' guard fills) then judge by threshold
 * or not at all, since two runs of a racy kernel that happen to agree prove nothing. */
void kg_session_note_nondeterministic(struct kg_session *s);
bool kg_session_nondeterministic(const struct kg_session *s);
/* The seconds the candidate would take at a case whose largest tensor has elems elements, from
 * its runs so far: the fastest run at the largest case it has run (the nominal one, mostly),
 * scaled by elements (a constant grown as the limits gate grows one: the work grows with it, or
 * faster); 0 when nothing was measured. */
double kg_session_projected_seconds(const struct kg_session *s, int64_t elems);
/* The seconds a worker has for one SAMPLE (the limits gate's case past 2^31 elements). */
#define KG_SAMPLE_LIMIT 120.0

/* Whether a gate of this session already failed with diagnosed cause c (e.g. limits asks whether
 * bounds saw writes past the outputs before it blames a crash at 2^31 elements on int32 indexing). */
bool kg_session_saw_cause(const struct kg_session *s, enum kg_cause c);
/* How many runs so far read an output that changed after the caller's stream had finished the
 * call (KG_RUN_OUT_LATE_WRITE): work the kernel left on a stream of its own. */
int kg_session_late_writes(const struct kg_session *s);

/* The last load's reply: compiler, device, the kernel's attributes; device and attrs are
 * NULL when the runner reported none. */
const struct kg_reply *kg_session_last_load(const struct kg_session *s);
const struct kg_dev_info *kg_session_device(const struct kg_session *s);
const struct kg_func_attrs *kg_session_attrs(const struct kg_session *s);
/* The last run's reply (CUPTI records, timings), or NULL before the first run. */
const struct kg_reply *kg_session_last_run(const struct kg_session *s);
/* The cache directory this session compiles into and keeps its lock files in. */
const char *kg_session_cache_dir(const struct kg_session *s);

/* ---- gates --------------------------------------------------------------------------------- */

/* Runs one gate (timed; a gate that needs a GPU skips, saying why, where there is none). When
 * the face asked to stop meanwhile, the verdict is an error that says so, with wstatus
 * KG_WS_INTERRUPTED: what the gate saw was cut short, so it decided nothing. */
void kg_session_run_gate(struct kg_session *s, const struct kg_gate *g, struct kg_verdict *v);
/* After a check's last gate: its measured peak of host memory noted for the report, and under
 * kgate audit, when every gate passed (so all of its cases ran), taught to the audit's ledger. */
void kg_session_host_done(struct kg_session *s, bool passed);
/* What n GPU runs that timed out once and then finished in a fresh worker were taken as (the
 * session's last such run named): a gate's detail, and a note under the verdict line. */
void kg_session_stall_words(const struct kg_session *s, int n, char *buf, size_t len);

/* ---- cases ---------------------------------------------------------------------------------- */

/* The case a gate starts from: the pinned or nominal shape, dtype, seed offset, dist. */
int kg_nominal_case(struct kg_session *s, enum kg_dtype dtype, uint64_t seed_offset, enum kg_dist dist,
                    struct kg_case *k, struct kg_err *e);

/* The nominal case (default dtype, seed offset 0, normal inputs) and its inputs, for gates that
 * run it several ways; -1 with v set to error when either cannot be made. */
int kg_nominal_inputs(struct kg_session *s, struct kg_case *k, struct kg_inputs *in, struct kg_verdict *v);

/* The nominal case at seed offsets 0..n-1 (default dtype, normal inputs), or with lean the lean
 * case (kg_lean_case), with its inputs and oracle values: for gates that compare calls on
 * different inputs. Returns how many are ready (n, or fewer with e filled); the caller frees the
 * ready ones. */
int kg_prepare_cases(struct kg_session *s, int n, bool lean, struct kg_case *k, struct kg_inputs *in,
                     struct kg_expect *ex, struct kg_err *e);

/* The dtype instances a calibrated gate iterates over (all of `dtypes:`, or the pinned one). */
int kg_instance_dtypes(struct kg_session *s, enum kg_dtype *out);

/* A gate's cost budget for one case: total tensor elements, and oracle work. */
bool kg_case_affordable(struct kg_session *s, const struct kg_case *k);
/* The case at symbols sym (dtype, seed, dist), or, when it costs more than 1/frac of the budget,
 * the same case with the free symbols other than keep (-1: none kept) halved, the largest first
 * and none below 32, until it does: a gate's extra case at the smallest size that still tests
 * its property (the boundary value of one symbol, a long reduction axis). 0 with k filled when
 * a case within the whole budget was found, else -1. */
int kg_case_shrink(struct kg_session *s, const int64_t *sym, int keep, int64_t frac, enum kg_dtype dtype, uint64_t seed,
                   enum kg_dist dist, struct kg_case *k);

/* The case of a gate whose property lies along each row, not in how many rows there are
 * (precision's large mean, reduction-order's mixed magnitudes): the nominal case, or, where that
 * is over the case budget, the same with its batch (the symbol that leads every output and every
 * tensor it is in, and is in no other dim) halved until it is within it, down to 1. The smaller
 * batch is taken only where the kernel is right there on N(0,1) inputs, checked once per dtype;
 * otherwise, and with --shape, the nominal case. k->nominal tells which. */
int kg_lean_case(struct kg_session *s, enum kg_dtype dtype, uint64_t seed_offset, enum kg_dist dist, struct kg_case *k,
                 struct kg_err *e);

/* " at batch=1 (nominal 32)" for a case whose symbols differ from the nominal ones, else "". */
void kg_lean_words(const struct kg_session *s, const struct kg_case *k, char *buf, size_t n);

/* The replay command for gate g (NULL: all gates) at case k. */
void kg_replay(struct kg_session *s, const struct kg_gate *g, const struct kg_case *k, char *buf, size_t n);

/* ---- inputs, runs and the oracle -------------------------------------------------------------- */

/* The seeded inputs of case k, and the oracle's values for them: the memo's own, lent (no copy:
 * at real sizes a copy per call was a good part of a check), read only, given back with
 * kg_inputs_free / kg_expect_free; a caller that changes inputs copies them first
 * (kg_inputs_copy). A lent case stays in the memo until given back. */
int kg_session_inputs(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_err *e);
int kg_session_expect(struct kg_session *s, const struct kg_case *k, struct kg_expect *x, struct kg_err *e);
/* The fault that stands for case k: an earlier run crashed or hung on its kind of case, so the
 * kernel is not run on it again (kg_exec says "not run again"), and kg_session_expect gives it
 * no oracle values either (x->not_run): a hung kernel's later gates cost nothing (seen: 398 s of
 * oracle for gates that then reported "not run again"). NULL when none. */
struct kg_fault;
const struct kg_fault *kg_case_fault(const struct kg_session *s, const struct kg_case *k);

/* The oracle's values for case k on inputs in (not memoised: for inputs a gate made itself), at
 * hand. kg_expect_for_judge: the same for a caller that only gives them to kg_judge; they stay
 * in the oracle worker where the backend keeps them there (a diagnosis that reads them fetches
 * them itself), which at real sizes saves a copy of GBs of fp64 values to the host. */
int kg_expect_compute(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                      struct kg_err *e);
int kg_expect_for_judge(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                        struct kg_err *e);

/* The values of ex at hand: where they stay in the oracle worker (ex->resident), fetched into
 * ex (a cache: it is otherwise unchanged), once. Code that reads ex->exact or ex->ref calls it
 * first; kg_judge does not need them. 0, or -1 (e). */
int kg_expect_values(struct kg_session *s, const struct kg_expect *ex, struct kg_err *e);

/* Runs the kernel once on case k with inputs in; fills x (free with kg_exec_free). Returns
 * x->status (KG_WS_OK when the kernel ran). Worker crashes and hangs come back as
 * KG_WS_CRASH / KG_WS_TIMEOUT; the next run gets a fresh worker. */
int kg_exec(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, const struct kg_exec_opts *o,
            struct kg_exec *x);
/* Runs case k and judges it against ex, by digest where it can (a backend that digests, a
 * kernel not seen nondeterministic, no paired launch): a run whose outputs have the digests of
 * a run of k that passed before takes that judgement (x->judged_by_digest) instead of being
 * compared again (at real sizes, gigabytes copied into the oracle worker and compared there);
 * any other is judged from its outputs, and a pass kept. Never runs the kernel twice. Returns
 * x->status; j is set only when it is KG_WS_OK. */
int kg_exec_judged(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                   const struct kg_exec_opts *o, const struct kg_expect *ex, struct kg_exec *x, struct kg_judgement *j);
/* The flag a run of case k adds so that its judgement can be kept (KG_RUN_DIGEST_ALSO: the
 * nominal N(0,1) cases, which the freshness gate runs again), or 0; and the keeping (a plain
 * pass of kg_judge only, before any conditioning). */
uint32_t kg_judged_flag(const struct kg_session *s, const struct kg_case *k, const struct kg_exec_opts *o);
void kg_judged_keep(struct kg_session *s, const struct kg_case *k, const struct kg_exec *x,
                    const struct kg_judgement *j);

/* KG_CAP_SAMPLE_HUGE: case k, too large to ship, run by the candidate's worker or by the
 * reference's (in the problem's dtype), inputs drawn on the device: the nout outputs at the n
 * flat indices idx, into vals[j * n + i]. On failure rp says what the worker answered. */
int kg_session_sample(struct kg_session *s, bool candidate, const struct kg_case *k, const int64_t *idx, int n,
                      int nout, double *vals, struct kg_reply *rp, struct kg_err *e);

/* kg_session_sample while holding turn_fd's lock (kg_gpu_lock_open's: the device's host-wide turn
 * at cases past 2^31 elements, gates/limits.c), which every other check's turn waits for: where
 * the device is full under an audit, the lock is given up while this check waits for room (as
 * kg_session_wait_device would wait, within the same budget), and taken again, waiting at most
 * lock_limit s, before the call is sent again. Held through the waits, one check meeting a full
 * device kept four others from their turn for 100 s (H100, 2026-12-06). Where the wait is spent,
 * or the turn does not come back, the check's judge is broken (the gate errs: no verdict on the
 * kernel) and -1 returns. turn_fd < 0: kg_session_sample. */
int kg_session_sample_turn(struct kg_session *s, bool candidate, const struct kg_case *k, const int64_t *idx, int n,
                           int nout, double *vals, int turn_fd, double lock_limit, struct kg_reply *rp,
                           struct kg_err *e);

/* ---- judging ---------------------------------------------------------------------------------- */

/* Compares the run's outputs (x->after, or x->after2 when second) with the oracle. An output the
 * working-precision reference itself has lost (kg_reference_lost) is compared but not judged
 * (j->lost), unless the kernel's values are non-finite where the oracle's are not or its error is
 * KG_GROSS_RATIO times the reference's. */
void kg_judge(const struct kg_case *k, const struct kg_exec *x, bool second, const struct kg_expect *ex,
              struct kg_judgement *j);

/* The nonfinite gate's test of a run (x->after): per oracle output, the positions whose class
 * (finite, NaN, +Inf, -Inf) differs from the fp64 oracle's (or from the op's second legitimate
 * algorithm's, where it has one), for integer outputs (an integer dtype, or ex->int_out) whose
 * value differs; the first of them (-1: none) and how many of the oracle's values are not
 * finite. Made in the oracle worker for a resident case (only the counts cross: a run that
 * passes never fetches the values), else here. 0, or -1 (e). */
struct kg_classes {
    int64_t mismatches, first, oracle_nonfinite;
};
/* A value's class as the nonfinite comparisons see it: 0 finite, 1 NaN, 2 +Inf, 3 -Inf. */
static inline int kg_value_class(double v)
{
    return isnan(v) ? 1 : v == INFINITY ? 2 : v == -INFINITY ? 3 : 0;
}
int kg_compare_classes(struct kg_session *s, const struct kg_exec *x, const struct kg_expect *ex, struct kg_classes *c,
                       struct kg_err *e);

/* Whether judgement j is a gross failure, one a wrong size or an unhandled tail gives and a
 * numerically fragile algorithm does not: an element unwritten, a non-finite value where the
 * oracle's is finite (or the reverse), or an error of at least KG_GROSS_ERR of the output's
 * scale (compare.h's measure) and KG_GROSS_RATIO times the working-precision reference's. why:
 * which, or (false) how far below the bar it is. */
#define KG_GROSS_ERR   0.1
#define KG_GROSS_RATIO 100.0
bool kg_gross_failure(const struct kg_expect *ex, const struct kg_judgement *j, char *why, size_t n);

/* Whether the working-precision reference has lost output o of the case: its own error is at least
 * KG_GROSS_ERR of the output's scale. The answer then cancels below the dtype's resolution on these
 * inputs (a KL divergence of probabilities shifted by 1e3: each term t log t - t log p is rounding
 * noise), any algorithm in that precision returns noise, and a threshold calibrated on the
 * reference's error compares one noise with another: which is nearer is luck (an FMA-contracted
 * CUDA kernel failed at 23x the reference's error there, the reference itself off by 100%). */
bool kg_reference_lost(const struct kg_expect *ex, int o);

/* Fills v->ev (and v->replay for v's gate) from the worst output of a judgement. */
void kg_judgement_evidence(struct kg_session *s, const struct kg_case *k, const struct kg_expect *ex,
                           const struct kg_judgement *j, struct kg_verdict *v);

/* One-shot helper used by most calibrated gates: generate inputs, run, oracle, judge.
 * Returns 0 when it ran (j filled), -1 when the run errored (v set to error or refused) or the
 * case has no output elements (v refused: nothing to compare). */
int kg_check_case(struct kg_session *s, const struct kg_case *k, const struct kg_exec_opts *o, struct kg_judgement *j,
                  struct kg_expect *ex_out, struct kg_exec *x_out, struct kg_verdict *v);

/* Sets v to refused: case k has no output elements (kg_case_outputs_empty), nothing to judge. */
void kg_verdict_empty(struct kg_verdict *v, const struct kg_case *k);

/* Sets v to error/refused/fail from a failed run. */
void kg_verdict_from_exec(struct kg_verdict *v, const struct kg_case *k, const struct kg_exec *x);

/* "y[3,17] = 0.51, expected 0.49: error 4.1e-02, 5000x the f32 reference's 8.2e-06
 *  (threshold 1.6e-05)", into a buffer of KG_DESCRIBE_MAX */
#define KG_DESCRIBE_MAX 768
void kg_describe_worst(const struct kg_case *k, const struct kg_expect *ex, const struct kg_judgement *j, char *buf,
                       size_t n);

/* A calibrated case as JSON: its worst error, and per output (error, ref_error, floor), from
 * which a report re-judges the case at any calibration factor k. Non-finite numbers are
 * strings ("nan", "inf"). */
json_t *kg_case_json(const char *id, const struct kg_expect *ex, const struct kg_judgement *j);

/* ---- diagnosis ---------------------------------------------------------------------------- */

/* Names the cause of a calibrated failure: run x of case k on inputs in, judged j against ex.
 * Sets v->cause and its one-line evidence (kg_verdict_cause), never v's status: tf32,
 * fp16-accumulation, bf16-accumulation, approximation, or, when cancellation names the kind
 * of inputs made to cancel ("mixed magnitudes") and the nominal N(0,1) case passes,
 * reduction-order. nominal: k is the accuracy gate's own kind of case (N(0,1) at the nominal
 * shape); when it is not and the nominal case fails too, the finding is the accuracy gate's
 * (KG_CAUSE_GATE, v->cause_of "accuracy"). Otherwise KG_CAUSE_GATE, saying what was ruled
 * out. May run the kernel
 * and the oracle again (on TF32-cut inputs, with TF32 off, at a reduction 8x shorter). */
void kg_diagnose(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, const struct kg_exec *x,
                 const struct kg_expect *ex, const struct kg_judgement *j, const char *cancellation, bool nominal,
                 struct kg_verdict *v);

/* The shape symbol of the op's reduction axis (of its first input), or -1. */
int kg_reduce_symbol(const struct kg_session *s);

/* ---- recorded runs (the determinism gate's, for `replay N M`) --------------------------------- */

#define KG_MAX_RECORDS 8

/* Forgets the recorded runs; the next ones are of case k. */
void kg_record_reset(struct kg_session *s, const struct kg_case *k);
/* Keeps the outputs of run r (0-based) of the recorded case (only with opts.keep_runs). */
void kg_record_run(struct kg_session *s, int r, const struct kg_exec *x);
/* How many runs are recorded, and of which case (*k may be NULL); output j of run r (1-based). */
int kg_records(const struct kg_session *s, const struct kg_case **k);
const struct kg_tensor *kg_record_output(const struct kg_session *s, int r, int j);

/* ---- the field's standard test and the decoy check ------------------------------------------ */

/* KernelBench's correctness test as that project runs it (5 trials, uniform [0,1) inputs,
 * allclose atol = rtol = tol after a shape check). Returns 1 pass, 0 fail, -1 error. */
int kg_session_baseline(struct kg_session *s, double tol, char *why, size_t n);
/* Starts that test to run beside the gates, where the runner can (KernelBench pairs: a worker
 * of its own); kg_session_baseline then takes its answer. Reserves the check's host memory
 * first, as the first gate would. */
void kg_session_baseline_start(struct kg_session *s, double tol);
/* A check's gates and decoy check are done and its standard test runs in a worker of its own
 * (where the runner has kg_session_baseline_start): the candidate's and the oracle's workers,
 * spares too, stop now, and what they held on the device and the host goes back while the
 * standard test finishes (alone, after the gates, for a pair too large to run it beside them).
 * Elsewhere nothing changes: the trials run in those workers. A later request starts them
 * afresh, without what they kept (resident oracle cases, kept inputs). */
void kg_session_workers_done(struct kg_session *s);

/* Did the candidate's own kernels run? (KernelBench pairs on a GPU.) */
struct kg_decoy {
    bool valid; /* false: no kernel records (CPU, or the profiler failed) */
    bool decoy; /* only kernels the reference also launches ran: the candidate's own never did */
    int launched, own;
    char own_names[4][128];
};
int kg_session_decoy(struct kg_session *s, struct kg_decoy *d, struct kg_err *e);

#endif
