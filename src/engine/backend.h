/* backend.h: the judge's side of a runner, as one table of functions and facts (nvtop's vendor
 * table; the worker's side is runners/runner.h). A session gets its backend when it opens and
 * every runner-specific decision goes through it: where inputs and oracle values come from,
 * how large a case may be, what the standard test is, what a run can tell beyond its outputs.
 * Gates never see it: they ask kg_session_can() and call the engine.
 *
 *   kg_backend_host, kg_backend_cuda  contract kernels (.c, .cu): kgate draws the inputs and
 *                                     evaluates the built-in fp64 oracle or the contract's
 *                                     `oracle:` function (backend_contract.c)
 *   kg_backend_torch                  KernelBench pairs: the problem's get_inputs() and Model,
 *                                     run by an oracle worker (backend_torch.c) */
#ifndef KG_BACKEND_H
#define KG_BACKEND_H

#include "engine/engine.h"

struct kg_session;
struct kg_client;

struct kg_backend {
    const char *name;  /* "host", "cuda", "torch" (reports, JSON) */
    const char *title; /* how messages name the runner: "host", "CUDA", "PyTorch" */
    int kind;          /* enum kg_runner_kind of the candidate's LOAD */
    uint64_t guard;    /* guard bytes before and after every buffer of a run */
    int64_t budget;    /* elements of all tensors of a case a gate may build (kg_case_affordable) */
    unsigned caps;     /* enum kg_cap */
    uint32_t found;    /* the KG_RUN_OUT_* bits a RUN reply's code carries (0: the code is not flags) */
    /* The worker allocates a run's outputs itself and prefills that memory with the run's fill
     * (the torch runner: the caching allocator's free blocks), then writes every byte of each
     * output into the segment: the judge lays out only guards and inputs there. */
    bool worker_fills_outputs;
    /* Fills the LOAD request of a new candidate client for an instance dtype. */
    void (*load_req)(struct kg_session *s, struct kg_client *cl, enum kg_dtype dtype);
    /* Why GPU-only gates skip, or NULL when the candidate runs on a GPU. */
    const char *(*no_gpu)(const struct kg_session *s);
    /* The inputs of case k (dtype storage, one tensor per input arg). */
    int (*inputs)(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_err *e);
    /* The oracle on inputs in: x->exact and x->ref (the working-precision reference, not yet
     * rounded to the dtype) of every output, already allocated as float64 by the caller, and
     * x->alt / x->int_out where the op has them. With oracle_lends, the caller allocates
     * nothing (the tensors have their shapes, no data): the oracle makes them views of a
     * segment of its own, x->seg. */
    int (*oracle)(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                  struct kg_err *e);
    bool oracle_lends;
    /* The field's standard test (kg_session_baseline). */
    int (*baseline)(struct kg_session *s, double tol, char *why, size_t n);
    /* Starts it, to run beside the gates, baseline taking its answer (kg_session_baseline_start);
     * NULL: baseline runs it then. */
    int (*baseline_start)(struct kg_session *s, double tol);
    /* KG_CAP_SAMPLE_HUGE (kg_session_sample); NULL without it. */
    int (*sample)(struct kg_session *s, bool candidate, const struct kg_case *k, const int64_t *idx, int n, int nout,
                  double *vals, struct kg_reply *rp, struct kg_err *e);
    /* The decoy check; NULL: not available for this kind of kernel. */
    int (*decoy)(struct kg_session *s, struct kg_decoy *d, struct kg_err *e);
    /* Stops what the backend started and frees s->be_state; may be NULL. */
    void (*close)(struct kg_session *s);
};

extern const struct kg_backend kg_backend_host, kg_backend_cuda, kg_backend_torch;

/* The torch backend's opening: describes the problem, synthesises the contract, starts and
 * loads the oracle and candidate workers (kg_session_open_pair). */
int kg_torch_open(struct kg_session *s, const char *problem, const char *candidate, struct kg_err *e);

/* The contract backends' LOAD of the contract's `oracle:` function into the oracle worker. */
int kg_contract_open_oracle(struct kg_session *s, enum kg_dtype dtype, struct kg_reply *rp);

#endif
