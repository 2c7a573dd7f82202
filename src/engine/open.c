/* open.c: opening a kernel file or a KernelBench pair for judgement, and closing it: the
 * contract, the backend that fits it, the cache, the first worker (which compiles the kernel),
 * the oracle worker. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cache.h"
#include "contract/pair.h"
#include "engine/backend.h"
#include "engine/session.h"
#include "engine/torch.h"

static int load_error(struct kg_session *s, const struct kg_reply *rp, struct kg_err *e)
{
    const struct kg_contract *c = s->c;
    switch (rp->status) {
    case KG_WS_ENTRY: kg_errf(e, "%s:%d: %s", c->path, c->line_entry, rp->msg); return KG_EXIT_USAGE;
    case KG_WS_COMPILE: kg_errf(e, "%s", rp->msg); return KG_EXIT_USAGE;
    case KG_WS_TIMEOUT: /* the compile, or the kernel's own code while loading, never finished */
        kg_errf(e, "%s: %s", c->path, rp->msg);
        return KG_EXIT_USAGE;
    case KG_WS_UNAVAILABLE:
        kg_errf(e, "%s: nothing was checked: the %s runner cannot run here: %s", c->path, s->be->title, rp->msg);
        return KG_EXIT_UNAVAILABLE;
    default:
        kg_errf(e, "%s: the worker failed while loading the kernel (%s): %s", c->path,
                kg_wstatus_name((enum kg_wstatus)rp->status), rp->msg);
        return KG_EXIT_USAGE;
    }
}

/* The options that a contract has to agree with: --runner, --shape, --dtype. */
static int apply_opts(struct kg_session *s, const char *path, const struct kg_session_opts *o, struct kg_err *e)
{
    struct kg_contract *c = s->c;
    if (o->tol_k > 0) c->tol_k = o->tol_k;
    if (o->runner >= 0 && o->runner != s->be->kind) {
        kg_errf(e, "%s: a %s file runs on the %s runner, not %s", path, c->lang == KG_LANG_CUDA ? ".cu" : ".c",
                s->be->name, o->runner == KG_RUNNER_CUDA ? "cuda" : "host");
        return KG_EXIT_USAGE;
    }
    if (o->pin_shape)
        for (int i = 0; i < c->nsyms; i++)
            if (o->sym[i] < 0) s->o.sym[i] = c->nominal[i];
    if (o->dtype >= 0) {
        bool ok = !c->ndtypes;
        for (int i = 0; i < c->ndtypes; i++) ok |= c->dtypes[i] == (enum kg_dtype)o->dtype;
        if (!ok || (!c->ndtypes && (enum kg_dtype)o->dtype != kg_contract_default_dtype(c))) {
            kg_errf(e, "%s:%d: --dtype %s: the contract does not instantiate that dtype", path,
                    c->line_dtypes ? c->line_dtypes : c->line_args, kg_dtype_name((enum kg_dtype)o->dtype));
            return KG_EXIT_USAGE;
        }
    }
    return KG_EXIT_OK;
}

/* The kgate executable workers are started from ($KGATE_WORKER overrides it), and the cache. */
static int locate(struct kg_session *s, struct kg_err *e)
{
    ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
    if (n <= 0) return kg_errf(e, "cannot find the kgate executable (/proc/self/exe): %s", strerror(errno));
    s->exe[n] = 0;
    const char *wexe = getenv("KGATE_WORKER");
    if (wexe && *wexe) kg_strlcpy(s->exe, wexe, sizeof s->exe);
    return kg_cache_dir(s->cache, sizeof s->cache, e);
}

/* A runner that cannot run here, for a face that describes kernels (open_unrunnable): the
 * session stays open to show the contract and its cases; the kernel was compiled when the
 * reply is a compile-only one (its compiler is there), else it could not be. No worker is kept:
 * the next run asks again, and every gate skips first (kg_session_run_gate). */
static int keep_unrunnable(struct kg_session *s, const struct kg_reply *rp)
{
    bool compiled = rp->status == KG_WS_OK;
    snprintf(s->cannot_run, sizeof s->cannot_run, "cannot run here: the %s runner: %.400s%s", s->be->title, rp->msg,
             compiled ? "" : " (not compiled either)");
    if (compiled) s->last_load = *rp;
    for (int i = 0; i < s->ncand; i++) kg_client_stop(&s->cand[i]);
    s->ncand = 0;
    return KG_EXIT_OK;
}

/* The candidate's first worker (which compiles the kernel) and the `oracle:` worker. */
static int start_workers(struct kg_session *s, struct kg_err *e)
{
    const struct kg_contract *c = s->c;
    struct kg_reply rp;
    enum kg_dtype d0 = s->o.dtype >= 0 ? (enum kg_dtype)s->o.dtype : kg_contract_default_dtype(c);
    struct kg_client *cl = kg_session_client(s, d0, &rp);
    if (!cl && rp.status == KG_WS_UNAVAILABLE && s->o.open_unrunnable) return keep_unrunnable(s, &rp);
    if (!cl) return load_error(s, &rp, e);
    if (rp.flags & KG_REPLY_COMPILED_ONLY) {
        if (s->o.open_unrunnable) return keep_unrunnable(s, &rp);
        snprintf(s->cannot_run, sizeof s->cannot_run, "cannot run here: the %s runner: %.400s", s->be->title, rp.msg);
        return KG_EXIT_OK; /* --compile-only: compiled, and nothing else is asked */
    }
    if (!c->oracle_func[0]) return KG_EXIT_OK;
    if (kg_contract_open_oracle(s, d0, &rp)) {
        if (rp.status == KG_WS_ENTRY)
            kg_errf(e, "%s:%d: oracle '%s' not found in %s after compile", c->path, c->line_op, c->oracle_func,
                    c->oracle_file);
        else
            kg_errf(e, "%s:%d: the oracle %s could not be loaded: %s", c->path, c->line_op, c->oracle_func, rp.msg);
        return KG_EXIT_USAGE;
    }
    return KG_EXIT_OK;
}

int kg_session_open(struct kg_session **out, const char *path, const struct kg_session_opts *o, struct kg_err *e)
{
    *out = NULL;
    struct kg_session *s = kg_session_new(o);
    if (!s) {
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    double t0 = kg_now();
    if (kg_contract_load(path, &s->c, e)) {
        free(s);
        return KG_EXIT_USAGE;
    }
    s->be = s->c->lang == KG_LANG_CUDA ? &kg_backend_cuda : &kg_backend_host;
    int rc = apply_opts(s, path, o, e);
    if (!rc && locate(s, e)) rc = KG_EXIT_INTERNAL;
    if (!rc) rc = start_workers(s, e);
    if (rc) {
        kg_session_close(s);
        return rc;
    }
    s->t_total = kg_now() - t0;
    *out = s;
    return KG_EXIT_OK;
}

int kg_session_open_pair(struct kg_session **out, const char *problem, const char *candidate,
                         const struct kg_session_opts *o, struct kg_err *e)
{
    *out = NULL;
    struct kg_session *s = kg_session_new(o);
    if (!s) {
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    double t0 = kg_now();
    s->be = &kg_backend_torch;
    s->c = kg_pair_contract_new(problem, candidate, e);
    if (!s->c) {
        kg_session_close(s);
        return KG_EXIT_USAGE;
    }
    if (o->tol_k > 0) s->c->tol_k = o->tol_k;
    int rc = kg_cache_dir(s->cache, sizeof s->cache, e) ? KG_EXIT_INTERNAL : kg_torch_open(s, problem, candidate, e);
    if (rc) {
        kg_session_close(s);
        return rc;
    }
    s->t_total = kg_now() - t0;
    *out = s;
    return KG_EXIT_OK;
}

int kg_session_estimate_pair(const char *problem, const char *candidate, const struct kg_session_opts *o,
                             double *in_bytes, double *out_bytes, struct kg_err *e)
{
    struct kg_session *s = kg_session_new(o);
    if (!s) {
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    s->be = &kg_backend_torch;
    s->c = kg_pair_contract_new(problem, candidate, e);
    int rc = KG_EXIT_USAGE;
    if (s->c)
        rc = kg_cache_dir(s->cache, sizeof s->cache, e) ? KG_EXIT_INTERNAL
                                                        : kg_torch_estimate(s, problem, in_bytes, out_bytes, e);
    kg_session_close(s);
    return rc;
}

void kg_session_close(struct kg_session *s)
{
    if (!s) return;
    for (int i = 0; i < s->ncand; i++) kg_client_stop(&s->cand[i]);
    kg_worker_stop(&s->oracle.w);
    kg_worker_stop(&s->zyg);
    kg_record_reset(s, &s->rec_case);
    kg_memo_free(s);
    for (int i = 0; i < KG_MAX_ARGS; i++) kg_tensor_free(&s->garbage[i].t);
    if (s->be && s->be->close) s->be->close(s);
    if (s->shm.mem) munmap(s->shm.mem, s->shm.size);
    if (s->shm.fd >= 0) close(s->shm.fd);
    if (s->oshm.mem) munmap(s->oshm.mem, s->oshm.size);
    if (s->oshm.fd >= 0) close(s->oshm.fd);
    kg_contract_free(s->c);
    free(s);
}
