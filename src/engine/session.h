/* session.h: the session's fields, for the engine's own files only (gates and faces use the
 * calls of engine.h). A session owns the contract, the worker processes (one per dtype
 * instance, plus an oracle worker where the oracle is code that must not run in the judge), the
 * shared memory they read and write, memoised inputs and oracle values, and what the inspector
 * looks at afterwards (recorded determinism runs, the last launch's resources). Its backend
 * (engine/backend.h), chosen when it opens, is everything that differs between runners. */
#ifndef KG_SESSION_H
#define KG_SESSION_H

#include <stdbool.h>

#include "base/util.h"
#include "engine/engine.h"
#include "worker/worker.h"

struct kg_backend;

/* One worker process the judge talks to, restarted after a crash with its LOAD replayed. */
struct kg_client {
    struct kg_worker w;
    char *argv[6]; /* how to start it (NULL: `kgate __worker 3`) */
    bool loaded;
    struct kg_req load; /* replayed on every fresh worker */
    struct kg_reply load_reply;
    int restarts;
    double open_limit; /* seconds for the candidate's own code while loading (0: the run's --timeout) */
    /* a fresh worker started and sent its LOAD ahead of need (kg_client_spare; pid <= 0: none),
     * and when */
    struct kg_worker spare;
    double spare_at;
    bool standard; /* the standard test's worker (its device memory is counted apart) */
};

/* Whose device memory a session counts apart: the oracle's worker, the candidate's (any of its
 * fresh workers), the standard test's (the record's memory.device_peak, in this order). */
enum kg_dev_role { KG_DEV_ORACLE, KG_DEV_KERNEL, KG_DEV_STANDARD, KG_DEV_ROLES };

/* One recorded run of the determinism gate. */
struct kg_record {
    struct kg_tensor out[KG_OP_MAX_IO];
};

/* Inputs and oracle values of the cases gates share: structure, accuracy, determinism,
 * freshness, aliasing, bounds and the diagnoses all start from the nominal N(0,1) cases, and on
 * large tensors generating inputs and evaluating the oracle cost more than the runs. Up to
 * KG_CASE_CACHE cases within memo_budget bytes; the one case that does not fit is still kept
 * while it is in use. The nominal N(0,1) cases are evicted last (rank, memo.c). */
#define KG_CASE_CACHE 8
struct kg_case_memo {
    char id[KG_CASE_ID_MAX];
    uint64_t used;
    int rank;       /* 2: nominal N(0,1) at the base seed, 1: at another seed, 0: other cases */
    uint64_t bytes; /* held by in and ex */
    bool has_in, has_ex;
    int holds; /* inputs and values lent out (kg_session_inputs, kg_session_expect) and not yet given back */
    struct kg_inputs in;
    struct kg_expect ex;
};

/* What the memo saved and what was paid again, for --json's "memo" and KGATE_DEBUG_MEMO=1
 * (each event on stderr): *_made counts evaluations through the memo, *_reused its hits,
 * *_again a case made a second time (evicted in between); oracle_direct counts the oracle
 * evaluations on inputs a gate changed itself (kg_expect_compute outside the memo). */
#define KG_MEMO_SEEN 256
struct kg_memo_stats {
    int inputs_made, inputs_reused, inputs_again;
    int inputs_kept;     /* runs whose worker staged an input from its own device copy (KG_RUN_INPUTS_KEPT) */
    int inputs_in_place; /* runs whose inputs the judge did not write: the segment still held them */
    int oracle_made, oracle_reused, oracle_again, oracle_direct;
    uint64_t seen_in[KG_MEMO_SEEN], seen_ex[KG_MEMO_SEEN]; /* hashes of the case ids made */
    int nseen_in, nseen_ex;
};

/* Where the workers' shared memory lives. The oracle worker has a region of its own: a
 * candidate never holds a descriptor of memory that an expected output has passed through. */
struct kg_shm {
    int fd;
    uint64_t size;
    uint8_t *mem;
};

/* A run of the kernel that crashed or hung: later runs of the same kind of case are not made
 * (kg_exec answers with the same status and x->not_rerun). A hang (or a death at the memory
 * limit) is of the kernel instance (its dtype), whatever the shape: another one would cost
 * --timeout again; a crash is of the instance at that shape (a crash at another shape is cheap
 * to see, and may be a different one). */
#define KG_MAX_FAULTS 16
struct kg_fault {
    int status; /* KG_WS_CRASH, KG_WS_TIMEOUT, KG_WS_OOM, KG_WS_CUDA */
    enum kg_dtype dtype;
    bool any_shape;
    int64_t sym[KG_MAX_SYMS];
    char gate[KG_NAME_MAX];
    char case_id[KG_CASE_ID_MAX];
};

/* A run's judgement kept by the digests of its outputs: a later run of the same case whose
 * outputs have the same digests has the same bytes, so the same judgement (kg_exec_judged). */
#define KG_JUDGED_MAX 8
struct kg_judged {
    char case_id[KG_CASE_ID_MAX];
    uint64_t digest[KG_MAX_ARGS];
    struct kg_judgement j;
};

struct kg_session {
    struct kg_contract *c;
    struct kg_session_opts o;
    const struct kg_backend *be;
    void *be_state; /* the backend's own, freed by its close() */
    char exe[KG_PATH_MAX];
    char cache[KG_DIR_MAX];
    struct kg_client cand[KG_MAX_DTYPES + 1]; /* per instance dtype */
    enum kg_dtype cand_dtype[KG_MAX_DTYPES + 1];
    int ncand;
    struct kg_client oracle;
    struct kg_shm shm;  /* the candidate's runs */
    struct kg_shm oshm; /* the oracle worker's */
    /* time spent, for the benchmark and --verbose */
    double t_compile, t_oracle, t_run, t_inputs, t_total;
    double t_compare; /* comparisons made in the oracle worker (kg_judge of a resident case) */
    double compare0;  /* kg_compare_seconds() when the session opened */
    double t_memwait; /* waiting for room in the host's memory under kgate audit (run.c) */
    double t_devwait; /* waiting for room in the device's (kg_session_wait_device) */
    bool devwait_off; /* kg_session_wait_device answers false: the caller waits (kg_session_sample_turn) */
    int dev_waits;    /* ... how many times */
    /* the standard test and the decoy check: their own seconds, less what they added to compile,
     * inputs, oracle and runs (so that the parts stay disjoint); both also in t_total */
    double t_standard, t_decoy;
    bool host_reserved;    /* ... asked for once per check, before its first gate */
    double host_bytes;     /* the nominal case's tensors, in bytes (run.c's reserve_host) */
    double host_out_bytes; /* ... of which outputs */
    uint64_t host_reserve; /* what the ledger holds for this check now (0: no ledger) */
    uint64_t host_base;    /* ... before its first gate drew anything (base/memwatch.h) */
    uint64_t host_peak;    /* the most host memory the check was measured to hold */
    /* the most device memory a worker of each role (enum kg_dev_role) held, as its replies said
     * (kg_reply.dev_peak; 0: not known), and the most each held between requests (dev_held); what
     * the last reply of each role said it held (dev_now: a full device's room, kg_session_wait_full) */
    uint64_t dev_peak[KG_DEV_ROLES], dev_held[KG_DEV_ROLES], dev_now[KG_DEV_ROLES];
    int nruns;
    /* the largest case the candidate ran (its largest tensor's elements) and its fastest run
     * there, in seconds (kg_session_projected_seconds) */
    int64_t run_elems;
    double run_secs;
    /* a GPU run that timed out and then finished in a fresh worker (kg_exec): where, and the
     * rerun's seconds; the gate's verdict says so (kg_session_run_gate) */
    int nstalls;
    char stall_case[160];
    double stall_seconds;
    /* the determinism gate's runs, for `replay N M` */
    struct kg_case rec_case;
    int nrec;
    struct kg_record rec[KG_MAX_RECORDS];
    /* the last reply of a load and of a run (resources, device, CUPTI records) */
    struct kg_reply last_load, last_run;
    char cannot_run[600]; /* kg_session_cannot_run: empty when the kernel can run */
    bool has_last_run;
    bool nondeterministic; /* two runs of one case on the same inputs gave different bits */
    int late_writes;       /* runs whose outputs changed after the caller's stream was done (KG_RUN_OUT_LATE_WRITE) */
    uint32_t causes_seen;  /* 1u << enum kg_cause of every failure a gate of this session diagnosed */
    const struct kg_gate *current_gate;
    /* kg_lean_case's batch per dtype: 0 not decided yet, 1 lean_value, -1 the nominal case */
    signed char lean_state[KG_DTYPE_COUNT];
    int64_t lean_value[KG_DTYPE_COUNT];
    struct kg_case_memo memo[KG_CASE_CACHE];
    uint64_t memo_clock;
    uint64_t resident_next; /* the last id of a resident oracle case (struct kg_resident) */
    /* a run kg_judge could not compare (the oracle worker failed it): the gate's verdict
     * becomes an error with this message (run.c), never a verdict on the kernel */
    char judge_broken[KG_MSG_MAX];
    uint64_t memo_budget; /* bytes the memo may hold (KGATE_MEMO_BYTES, else a quarter of the free memory) */
    struct kg_memo_stats memo_stats;
    bool debug_memo; /* KGATE_DEBUG_MEMO=1: each memo event on stderr */
    bool trace;      /* KGATE_TRACE=1: each worker call on stderr (kg_session_call_fd) */
    double t_open;   /* kg_now() when the session opened, for the trace's times */
    /* workers started as programs (python) are forked from this fork server when it is named */
    char zygote[96];
    struct kg_worker zyg; /* this session's own fork server, when it started one */
    struct kg_fault fault[KG_MAX_FAULTS];
    int nfault;
    /* passing judgements of runs that came with digests (kg_exec_judged), and the next slot to
     * reuse when full (freshness's JSON counts the runs that took one) */
    struct kg_judged judged[KG_JUDGED_MAX];
    int njudged, judged_next;
    /* each output's last garbage prefill (kg_exec), kept: the same bytes for the same case,
     * where drawing them again costs a normal draw per element per run */
    struct kg_garbage {
        uint64_t seed;
        struct kg_tensor t;
    } garbage[KG_MAX_ARGS];
};

/* A new session with no contract and no workers yet (NULL when out of memory). */
struct kg_session *kg_session_new(const struct kg_session_opts *o);

/* The client for a dtype instance, started and loaded on demand (NULL with rp filled when it
 * cannot start); a request through a client (its LOAD replayed first when the worker is new);
 * a fresh worker for it next time. */
struct kg_client *kg_session_client(struct kg_session *s, enum kg_dtype dtype, struct kg_reply *rp);
int kg_client_start(struct kg_session *s, struct kg_client *cl, struct kg_reply *rp);
int kg_session_call(struct kg_session *s, struct kg_client *cl, struct kg_req *rq, struct kg_reply *rp);
/* Keeps the most device memory that a worker of cl's role said it held (rp->dev_peak, dev_held),
 * and what it holds now (dev_now). */
void kg_session_note_dev_peak(struct kg_session *s, const struct kg_client *cl, const struct kg_reply *rp);
/* The same with the shared memory fd (a run's own segment; kg_session_call: the session's). */
int kg_session_call_fd(struct kg_session *s, struct kg_client *cl, struct kg_req *rq, int fd, struct kg_reply *rp);
/* Whether a worker's reply says the device had no room for the request (torch's CUDA out of
 * memory, which leaves the worker and its context usable). */
bool kg_reply_device_full(const struct kg_reply *rp);
/* Whether a worker's words say so (torch's out of memory, in an exception or a trial's reason). */
bool kg_msg_device_full(const char *msg);
/* Under kgate audit the checks share the device, and one that meets it full has met another
 * check's big case (a limits case past 2^31 elements held 50 GiB for a 0.13 GB gemm) more often
 * than its own: before, the whole check was run again at the audit's end, alone (on an H100, two
 * such re-runs were the last 90 s of a 357 s audit). So where kg_checks_at_once() > 1 and rp says
 * the device was full, this waits 1, 2, 4, 8, 8... s (KG_DEVICE_WAIT_MAX in all per check, in
 * t_devwait, the record's timing.device_wait) and says to send rq again as it was: a run's inputs
 * are still in its segment (the worker writes back only after the call returns), an oracle
 * evaluation or a sample is made anew. Not RESIDENT (calibration consumes what it calibrates) or
 * LOAD. Where it says not to (those, or the wait spent: a kernel that needs more than the device
 * has meets it full every time) it sets s->judge_broken, so that the gate errs instead of the
 * kernel failing it for raising (the audit then runs the check again later, as before); alone
 * on the device (kg_checks_at_once() == 1), a full device is the kernel's own doing and nothing
 * changes. Nor where the check's own workers leave no room: torch's message says what the call
 * tried to allocate, the device's capacity and what the failing worker had in use, the check's
 * other workers what they hold (dev_now); when these add up to more than the device has, no
 * other check's end makes room (seen on an H100: KernelBench's kl_div past 2^31 elements asked
 * 16 GiB with 13.8 free, waited 45 s and erred, where alone the limits gate skips it as too big). */
#define KG_DEVICE_WAIT_MAX 45.0
bool kg_session_wait_device(struct kg_session *s, const struct kg_req *rq, const struct kg_reply *rp, int tries);
/* Its core, for a reply rp to cmd that the caller found to mean a full device (the standard
 * test's trials answer a candidate's out of memory as KernelBench's failure); rp noted first
 * (kg_session_note_dev_peak). */
bool kg_session_wait_full(struct kg_session *s, enum kg_cmd cmd, const struct kg_reply *rp, int tries);
/* s->judge_broken for a worker the host's out-of-memory killer took (KG_WS_HOST_OOM): whose
 * worker ("kernel's", "oracle's"), and at which case when known (NULL: not). */
void kg_session_note_host_oom(struct kg_session *s, const char *who, const char *case_id);
void kg_session_restart(struct kg_session *s, struct kg_client *cl);
/* Starts a fresh worker for cl beside the current one and sends it the LOAD, without waiting:
 * the next start of cl (after kg_session_restart, or a worker's death) takes it and its reply,
 * so a fresh process's start and load overlap the runs before. Stopped with the session. */
void kg_client_spare(struct kg_session *s, struct kg_client *cl);
/* The same for a client not started yet (cl->load made, no spare): its first worker
 * loads while the judge does other work (a pair's three workers load at once as it opens), and
 * kg_client_start takes it. */
void kg_client_ahead(struct kg_session *s, struct kg_client *cl);
void kg_client_stop(struct kg_client *cl);
/* KGATE_TRACE's line for a worker call that started at t0 and got rp (kg_session_call_fd writes
 * its own; a backend's call made otherwise, the torch runner's samples, writes it here). */
void kg_session_trace_call(const struct kg_session *s, const struct kg_client *cl, const struct kg_req *rq, double t0,
                           const struct kg_reply *rp);

/* Grows the candidate's / the oracle worker's shared memory to at least size bytes. */
int kg_session_shm(struct kg_session *s, uint64_t size, struct kg_err *e);
int kg_session_oshm(struct kg_session *s, uint64_t size, struct kg_err *e);

/* The oracle's values of case k on inputs in: kg_expect_compute without counting it as a direct
 * evaluation (the memo's own). */
int kg_expect_eval(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                   struct kg_err *e);

/* Frees the memoised inputs and oracle values. */
void kg_memo_free(struct kg_session *s);

#endif
