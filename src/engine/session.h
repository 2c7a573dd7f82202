/* session.h: one kernel file under judgement. A session owns the contract, the worker
 * processes (one per dtype instance, plus a custom-oracle worker when the contract names
 * one), the shared memory they read and write, and what the inspector wants to look at
 * afterwards (recorded determinism runs, the last launch's resources). The same session
 * serves `kgate check`, the REPL and the full-screen inspector. */
#ifndef KG_SESSION_H
#define KG_SESSION_H

#include <stdbool.h>

#include "gates/gate.h"
#include "worker/proto.h"
#include "worker/worker.h"

enum kg_exit {
    KG_EXIT_OK = 0,          /* every gate passed or skipped */
    KG_EXIT_FAIL = 1,        /* a gate failed or errored */
    KG_EXIT_USAGE = 2,       /* bad usage, or the kernel file cannot be loaded */
    KG_EXIT_UNAVAILABLE = 3, /* nothing was checked: the runner cannot run here */
    KG_EXIT_INTERNAL = 4,    /* kgate itself failed (out of memory, I/O) */
};

struct kg_session_opts {
    uint64_t seed;          /* base seed (default 1) */
    bool seed_given;
    int runner;             /* -1: from the file type */
    double timeout;         /* per run, seconds (default 10) */
    bool pin_shape;         /* --shape: every gate uses these symbol values */
    int64_t sym[KG_MAX_SYMS];
    int dtype;              /* -1: the contract's instances */
    int dist;               /* -1: each gate's own */
    double tol_k;           /* 0: the contract's (default 2) */
    int64_t max_elems;      /* per-case budget for sweeps (0: runner default) */
    bool exhaustive;        /* calibrated gates measure every case even after a failure (audits) */
    const char *cc;         /* host compiler (default: $KGATE_CC, else configure's) */
    const char *python;     /* KernelBench pairs: the interpreter (default: $KGATE_PYTHON, else python3) */
    void (*progress)(void *ud, const char *gate, const char *what);
    void *progress_ud;
};

void kg_session_opts_default(struct kg_session_opts *o);

struct kg_client {
    struct kg_worker w;
    char *argv[6]; /* how to start it (NULL: `kgate __worker 3`) */
    bool loaded;
    struct kg_req load; /* replayed on every fresh worker */
    struct kg_reply load_reply;
    int restarts;
};

/* One recorded run of the determinism gate. */
struct kg_record {
    struct kg_tensor out[KG_OP_MAX_IO];
};

#define KG_MAX_RECORDS 8

/* Inputs and oracle values of recent cases: many gates start from the same nominal case, and
 * generating inputs and evaluating the oracle dominate a check's time on large tensors. */
#define KG_CASE_CACHE 4
struct kg_case_memo {
    char id[512];
    uint64_t used;
    bool has_in, has_ex;
    struct kg_inputs in;
    struct kg_expect ex;
};

struct kg_session {
    struct kg_contract *c;
    struct kg_session_opts o;
    int runner;
    char exe[4096];
    char cache[2048];
    struct kg_client cand[KG_MAX_DTYPES + 1]; /* per instance dtype */
    enum kg_dtype cand_dtype[KG_MAX_DTYPES + 1];
    int ncand;
    struct kg_client oracle;
    int shm_fd; /* the candidate's runs */
    uint64_t shm_size;
    uint8_t *shm;
    int oshm_fd; /* the oracle worker's own: a candidate never holds a descriptor of memory that an */
    uint64_t oshm_size; /* expected output has passed through */
    uint8_t *oshm;
    /* time spent, for the benchmark and --verbose */
    double t_compile, t_oracle, t_run, t_total;
    int nruns;
    /* the determinism gate's runs, for `replay N M` */
    struct kg_case rec_case;
    int nrec;
    struct kg_record rec[KG_MAX_RECORDS];
    /* the last reply of a load and of a run (resources, device, CUPTI records) */
    struct kg_reply last_load, last_run;
    bool has_last_run;
    const struct kg_gate *current_gate;
    struct kg_case_memo memo[KG_CASE_CACHE];
    uint64_t memo_clock;
    double t_inputs;
    /* KernelBench pairs */
    char runner_py[2200];         /* the torch runner, written into the cache */
    char *kernels_ref;            /* kernel names the reference launched (newline separated), or NULL */
    bool torch_cuda; /* the torch workers run on a CUDA device */
    char zygote[96];      /* the PyTorch fork server's socket name, or "" (workers start python) */
    struct kg_worker zyg; /* this session's own fork server, when it started one */
};

/* "host", "cuda", "torch" */
const char *kg_runner_name(int runner);

/* A KernelBench pair: PROBLEM.py (Model, get_inputs, get_init_inputs) is the oracle, run by one
 * torch worker; CANDIDATE.py (ModelNew) by another. The contract is synthesised from the
 * problem (src/torch.c). Same exit codes as kg_session_open. */
int kg_session_open_pair(struct kg_session **out, const char *problem, const char *candidate,
                         const struct kg_session_opts *o, struct kg_err *e);

/* Loads the contract, starts the worker and compiles the kernel. On failure returns the
 * exit code to use (KG_EXIT_USAGE for a bad file or compile error, KG_EXIT_UNAVAILABLE when
 * the runner cannot run here) with e saying why, naming file and line. */
int kg_session_open(struct kg_session **out, const char *path, const struct kg_session_opts *o, struct kg_err *e);
void kg_session_close(struct kg_session *s);

/* Runs one gate (timed, with skip for GPU-only gates on the host runner). */
void kg_session_run_gate(struct kg_session *s, const struct kg_gate *g, struct kg_verdict *v);

/* Internal to the engine (ctx.c, session.c): the client for a dtype instance, started and
 * loaded on demand; a request through it; a fresh worker next time. */
struct kg_client *kg_session_client(struct kg_session *s, enum kg_dtype dtype, struct kg_reply *rp);
int kg_session_call(struct kg_session *s, struct kg_client *cl, struct kg_req *rq, struct kg_reply *rp);
int kg_session_shm(struct kg_session *s, uint64_t size, struct kg_err *e);
int kg_session_oshm(struct kg_session *s, uint64_t size, struct kg_err *e);
void kg_session_restart(struct kg_session *s, struct kg_client *cl);
int kg_client_start(struct kg_session *s, struct kg_client *cl, struct kg_reply *rp);

/* The seeded inputs of case k, and the oracle's values for them, as caller-owned copies of
 * memoised values (free with kg_inputs_free / kg_expect_free). */
int kg_session_inputs(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_err *e);
int kg_session_expect(struct kg_session *s, const struct kg_case *k, struct kg_expect *x, struct kg_err *e);

/* Baseline: KernelBench's correctness test as that project runs it (5 trials, uniform [0,1)
 * inputs, allclose atol = rtol = tol after a shape check). Returns 1 pass, 0 fail, -1 error. */
int kg_session_baseline(struct kg_session *s, double tol, char *why, size_t n);

#endif
