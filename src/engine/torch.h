/* torch.h: KernelBench-format pairs (see torch.c): inputs from the problem's get_inputs(), the
 * reference Model as the oracle, and the decoy check (did the candidate's own kernels run?). */
#ifndef KG_TORCH_H
#define KG_TORCH_H

#include "engine/session.h"

/* The inputs of case k: get_inputs() at the case's constants and seed, transformed by its
 * distribution (large mean, mixed magnitude, special values). */
int kg_torch_inputs(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_err *e);

/* The reference Model on float64 copies of the inputs: working 0 in float64, 1 in the
 * problem's dtype with TF32 off, 4 likewise with sequential fp32 sums and products. For 4,
 * *unchanged (when not NULL) says that no op was replaced: the result is also working 1's. */
int kg_torch_oracle(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                    struct kg_tensor *const *out, int nout, int working, int *unchanged, struct kg_err *e);

struct kg_torch_decoy {
    bool valid;  /* false: no kernel records (CPU, or the profiler failed) */
    bool decoy;  /* only kernels the reference also launches ran: the candidate's own never did */
    int launched, own;
    char own_names[4][128];
};

int kg_torch_decoy(struct kg_session *s, struct kg_torch_decoy *d, struct kg_err *e);

/* KernelBench's own test (kg_session_baseline for a pair), in a fresh worker that runs the
 * reference and then the candidate in one process, as that harness does. */
int kg_torch_standard(struct kg_session *s, double tol, char *why, size_t n);

/* Case k, too large to ship, run by the oracle worker (the reference in the problem's dtype)
 * or the candidate's, with the inputs drawn on the device: the nout outputs at the n flat
 * indices idx, into vals[j * n + i]. On failure rp says what the worker answered. */
int kg_torch_sample(struct kg_session *s, bool candidate, const struct kg_case *k, const int64_t *idx, int n, int nout,
                    double *vals, struct kg_reply *rp, struct kg_err *e);

/* The torch runner's path: $KGATE_TORCH_RUNNER, or the embedded copy written into the cache. */
int kg_torch_runner_path(const char *cache, char *out, size_t n, struct kg_err *e);

/* Starts a PyTorch fork server (torch_runner.py --zygote) under a fresh socket name, written
 * into name; stop it with kg_worker_stop(z). */
int kg_torch_zygote(struct kg_worker *z, const char *python, const char *runner_py, char *name, size_t n,
                    struct kg_err *e);

#endif
