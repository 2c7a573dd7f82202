/* torch.h: what the faces need of the KernelBench-pair backend (backend_torch.c) beyond a
 * session: the torch runner's file and a PyTorch fork server, which `kgate audit` starts once
 * for all its checks. */
#ifndef KG_TORCH_H
#define KG_TORCH_H

#include <stddef.h>

#include "base/util.h"
#include "worker/worker.h"

/* The torch runner's path: $KGATE_TORCH_RUNNER, or the embedded copy written into the cache. */
int kg_torch_runner_path(const char *cache, char *out, size_t n, struct kg_err *e);

/* Starts a PyTorch fork server (torch_runner.py --zygote) under a fresh socket name, written
 * into name; stop it with kg_worker_stop(z). */
int kg_torch_zygote(struct kg_worker *z, const char *python, const char *runner_py, char *name, size_t n,
                    struct kg_err *e);

struct kg_session;
/* A pair's cost before its check: the bytes of the problem's inputs and outputs at its nominal
 * constants, from a description on PyTorch's meta device (no tensor allocated, nothing run), by
 * an oracle worker of s (a session made for this: kg_session_estimate_pair). KG_EXIT_UNAVAILABLE
 * with e saying why where the meta device cannot stand in (a shape read from a value). */
int kg_torch_estimate(struct kg_session *s, const char *problem, double *in_bytes, double *out_bytes, struct kg_err *e);

#endif
