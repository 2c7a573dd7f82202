/* session.c: opening a kernel file for judgement: the contract, the cache, the worker
 * clients (spawned and loaded on demand, respawned after a crash), the shared memory, and
 * the standard test kept for comparison. Gates run through kg_session_run_gate. */
#include "engine/session.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cache.h"
#include "base/rng.h"
#include "engine/torch.h"

#ifndef KG_SYSTEM_CC
#define KG_SYSTEM_CC "cc"
#endif

void kg_session_opts_default(struct kg_session_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->runner = -1;
    o->timeout = 10;
    o->dtype = -1;
    o->dist = -1;
}

static void fill_load(struct kg_session *s, struct kg_client *cl, enum kg_dtype dtype, bool oracle)
{
    struct kg_req_load *l = &cl->load.u.load;
    memset(&cl->load, 0, sizeof cl->load);
    cl->load.magic = KG_PROTO_MAGIC;
    cl->load.cmd = KG_CMD_LOAD;
    l->runner = oracle ? KG_RUNNER_HOST : s->runner;
    l->dtype = dtype;
    l->oracle = oracle;
    l->returns_int = oracle ? 0 : s->c->entry_returns_int;
    l->nargs = s->c->nargs;
    for (int i = 0; i < s->c->nargs; i++) l->argkind[i] = s->c->args[i].kind;
    kg_strlcpy(l->path, oracle ? s->c->oracle_file : s->c->path, sizeof l->path);
    kg_strlcpy(l->entry, oracle ? s->c->oracle_func : s->c->entry, sizeof l->entry);
    kg_strlcpy(l->cache_dir, s->cache, sizeof l->cache_dir);
    const char *cc = s->o.cc ? s->o.cc : getenv("KGATE_CC");
    kg_strlcpy(l->cc, cc && *cc ? cc : KG_SYSTEM_CC, sizeof l->cc);
    const char *ch = getenv("KGATE_CUDA_HOME");
#ifdef KG_CUDA_HOME
    if (!ch || !*ch) ch = KG_CUDA_HOME;
#endif
    kg_strlcpy(l->cuda_home, ch ? ch : "/usr/local/cuda", sizeof l->cuda_home);
}

void kg_session_restart(struct kg_session *s, struct kg_client *cl)
{
    (void)s;
    kg_worker_stop(&cl->w);
}

/* Spawns and loads a worker for cl if it has none (session.h). */
int kg_client_start(struct kg_session *s, struct kg_client *cl, struct kg_reply *rp)
{
    if (kg_worker_alive(&cl->w)) return 0;
    struct kg_err e;
    char *def[] = {s->exe, "__worker", "3", NULL};
    int forked = -1;
    if (cl->argv[0] && s->zygote[0]) {
        forked = kg_worker_spawn_zygote(&cl->w, s->zygote, &e);
        if (forked) {
            fprintf(stderr, "kgate: note: %s; starting python directly\n", e.msg);
            s->zygote[0] = 0;
        }
    }
    if (forked && kg_worker_spawn(&cl->w, cl->argv[0] ? cl->argv : def, &e)) {
        memset(rp, 0, sizeof *rp);
        rp->status = KG_WS_UNAVAILABLE;
        snprintf(rp->msg, sizeof rp->msg, "%s", e.msg);
        return -1;
    }
    if (cl->loaded) cl->restarts++;
    double t0 = kg_now();
    int rc = kg_worker_call(&cl->w, &cl->load, -1, rp, 600);
    s->t_compile += kg_now() - t0;
    if (rc || rp->status != KG_WS_OK) {
        if (kg_worker_alive(&cl->w)) kg_worker_stop(&cl->w);
        return -1;
    }
    cl->load_reply = *rp;
    s->last_load = *rp;
    cl->loaded = true;
    return 0;
}

struct kg_client *kg_session_client(struct kg_session *s, enum kg_dtype dtype, struct kg_reply *rp)
{
    int i;
    for (i = 0; i < s->ncand; i++)
        if (s->cand_dtype[i] == dtype) break;
    if (i == s->ncand) {
        if (s->ncand == KG_MAX_DTYPES + 1) return NULL;
        s->cand_dtype[i] = dtype;
        memset(&s->cand[i], 0, sizeof s->cand[i]);
        s->cand[i].w.pid = -1;
        fill_load(s, &s->cand[i], dtype, false);
        s->ncand++;
    }
    if (kg_client_start(s, &s->cand[i], rp)) return NULL;
    return &s->cand[i];
}

int kg_session_call(struct kg_session *s, struct kg_client *cl, struct kg_req *rq, struct kg_reply *rp)
{
    if (kg_client_start(s, cl, rp)) return -1;
    /* --timeout limits the kernel under test; the oracle worker runs only trusted code (the
     * reference, the inputs), which on a loaded GPU host can take longer than a short limit */
    double timeout = rq->cmd == KG_CMD_ORACLE || cl == &s->oracle ? 600 : s->o.timeout;
    return kg_worker_call(&cl->w, rq, cl == &s->oracle ? s->oshm_fd : s->shm_fd, rp, timeout);
}

/* Grows one shared region to at least size bytes (a new memfd: a worker that maps the old one
 * keeps a valid mapping of memory no longer used). */
static int shm_ensure(int *fd, uint8_t **mem, uint64_t *have, uint64_t size, struct kg_err *e)
{
    if (size <= *have && *mem) return 0;
    /* at least double: the shapes gate grows its cases one after another, and every new memfd
     * costs a page fault per page on both sides */
    uint64_t want = size < 2 * *have ? 2 * *have : size;
    if (want < (1u << 20)) want = 1u << 20;
    if (*mem) munmap(*mem, *have);
    if (*fd >= 0) close(*fd);
    *mem = NULL;
    *have = 0;
    *fd = memfd_create("kgate-shm", MFD_CLOEXEC);
    if (*fd < 0) return kg_errf(e, "memfd_create: %s", strerror(errno));
    if (ftruncate(*fd, (off_t)want))
        return kg_errf(e, "cannot size shared memory to %llu bytes: %s", (unsigned long long)want, strerror(errno));
    void *p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (p == MAP_FAILED)
        return kg_errf(e, "mmap of %llu bytes of shared memory: %s", (unsigned long long)want, strerror(errno));
    *mem = p;
    *have = want;
    return 0;
}

int kg_session_shm(struct kg_session *s, uint64_t size, struct kg_err *e)
{
    return shm_ensure(&s->shm_fd, &s->shm, &s->shm_size, size, e);
}

int kg_session_oshm(struct kg_session *s, uint64_t size, struct kg_err *e)
{
    return shm_ensure(&s->oshm_fd, &s->oshm, &s->oshm_size, size, e);
}

static int load_error(struct kg_session *s, const struct kg_reply *rp, struct kg_err *e)
{
    const struct kg_contract *c = s->c;
    switch (rp->status) {
    case KG_WS_ENTRY:
        kg_errf(e, "%s:%d: %s", c->path, c->line_entry, rp->msg);
        return KG_EXIT_USAGE;
    case KG_WS_COMPILE:
        kg_errf(e, "%s", rp->msg);
        return KG_EXIT_USAGE;
    case KG_WS_UNAVAILABLE:
        kg_errf(e, "%s: nothing was checked: the %s runner cannot run here: %s", c->path,
                s->runner == KG_RUNNER_CUDA ? "CUDA" : "host", rp->msg);
        return KG_EXIT_UNAVAILABLE;
    default:
        kg_errf(e, "%s: the worker failed while loading the kernel (%s): %s", c->path,
                kg_wstatus_name((enum kg_wstatus)rp->status), rp->msg);
        return KG_EXIT_USAGE;
    }
}

int kg_session_open(struct kg_session **out, const char *path, const struct kg_session_opts *o, struct kg_err *e)
{
    *out = NULL;
    struct kg_session *s = calloc(1, sizeof *s);
    if (!s) {
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    s->shm_fd = s->oshm_fd = -1;
    s->oracle.w.pid = -1;
    s->zyg.pid = -1;
    s->o = *o;
    double t0 = kg_now();
    if (kg_contract_load(path, &s->c, e)) {
        free(s);
        return KG_EXIT_USAGE;
    }
    struct kg_contract *c = s->c;
    if (o->tol_k > 0) c->tol_k = o->tol_k;
    s->runner = c->lang == KG_LANG_CUDA ? KG_RUNNER_CUDA : KG_RUNNER_HOST;
    if (o->runner >= 0 && o->runner != s->runner) {
        kg_errf(e, "%s: a %s file runs on the %s runner, not %s", path, c->lang == KG_LANG_CUDA ? ".cu" : ".c",
                s->runner == KG_RUNNER_CUDA ? "cuda" : "host", o->runner == KG_RUNNER_CUDA ? "cuda" : "host");
        kg_session_close(s);
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
            kg_session_close(s);
            return KG_EXIT_USAGE;
        }
    }
    ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
    if (n <= 0) {
        kg_errf(e, "cannot find the kgate executable (/proc/self/exe): %s", strerror(errno));
        kg_session_close(s);
        return KG_EXIT_INTERNAL;
    }
    s->exe[n] = 0;
    const char *wexe = getenv("KGATE_WORKER");
    if (wexe && *wexe) kg_strlcpy(s->exe, wexe, sizeof s->exe);
    if (kg_cache_dir(s->cache, sizeof s->cache, e)) {
        kg_session_close(s);
        return KG_EXIT_INTERNAL;
    }
    struct kg_reply rp;
    enum kg_dtype d0 = o->dtype >= 0 ? (enum kg_dtype)o->dtype : kg_contract_default_dtype(c);
    if (!kg_session_client(s, d0, &rp)) {
        int rc = load_error(s, &rp, e);
        kg_session_close(s);
        return rc;
    }
    if (c->oracle_func[0]) {
        fill_load(s, &s->oracle, d0, true);
        if (kg_client_start(s, &s->oracle, &rp)) {
            if (rp.status == KG_WS_ENTRY)
                kg_errf(e, "%s:%d: oracle '%s' not found in %s after compile", c->path, c->line_op, c->oracle_func,
                        c->oracle_file);
            else
                kg_errf(e, "%s:%d: the oracle %s could not be loaded: %s", c->path, c->line_op, c->oracle_func, rp.msg);
            kg_session_close(s);
            return KG_EXIT_USAGE;
        }
    }
    s->t_total = kg_now() - t0;
    *out = s;
    return KG_EXIT_OK;
}

void kg_session_close(struct kg_session *s)
{
    if (!s) return;
    for (int i = 0; i < s->ncand; i++) kg_worker_stop(&s->cand[i].w);
    kg_worker_stop(&s->oracle.w);
    kg_worker_stop(&s->zyg);
    for (int r = 0; r < s->nrec; r++)
        for (int j = 0; j < KG_OP_MAX_IO; j++) kg_tensor_free(&s->rec[r].out[j]);
    for (int i = 0; i < KG_CASE_CACHE; i++) {
        if (s->memo[i].has_in) kg_inputs_free(&s->memo[i].in);
        if (s->memo[i].has_ex) kg_expect_free(&s->memo[i].ex);
    }
    if (s->shm) munmap(s->shm, s->shm_size);
    if (s->shm_fd >= 0) close(s->shm_fd);
    if (s->oshm) munmap(s->oshm, s->oshm_size);
    if (s->oshm_fd >= 0) close(s->oshm_fd);
    kg_contract_free(s->c);
    free(s);
}

bool kg_session_is_host(const struct kg_session *s)
{
    return s->runner == KG_RUNNER_HOST || (s->runner == KG_RUNNER_TORCH && !s->torch_cuda);
}

const char *kg_runner_name(int runner)
{
    return runner == KG_RUNNER_CUDA ? "cuda" : runner == KG_RUNNER_TORCH ? "torch" : "host";
}

void kg_session_run_gate(struct kg_session *s, const struct kg_gate *g, struct kg_verdict *v)
{
    kg_verdict_init(v, g);
    double t0 = kg_now();
    s->current_gate = g;
    if (s->o.progress) s->o.progress(s->o.progress_ud, g->id, "running");
    if (g->needs_gpu && kg_session_is_host(s)) {
        kg_verdict_set(v, KG_SKIP, s->runner == KG_RUNNER_TORCH
                                       ? "needs a GPU: PyTorch runs on the CPU here (no streams or device limits)"
                                       : "needs a GPU: the host runner has no streams or device limits to test");
    } else {
        g->run(s, v);
    }
    v->seconds = kg_now() - t0;
    s->t_total += v->seconds;
    s->current_gate = NULL;
    if (s->o.progress) s->o.progress(s->o.progress_ud, g->id, kg_status_name(v->status));
}

int kg_session_baseline(struct kg_session *s, double tol, char *why, size_t n)
{
    if (s->runner == KG_RUNNER_TORCH) return kg_torch_standard(s, tol, why, n);
    /* KernelBench draws one seed per trial from a generator seeded 42: for a contract kernel
     * kgate's generator stands in for torch.randint. */
    for (int trial = 0; trial < 5; trial++) {
        uint64_t seed = kg_rng_below(42, 0, (uint64_t)trial, 0xffffffffull);
        struct kg_case k;
        struct kg_err e;
        if (kg_nominal_case(s, kg_contract_default_dtype(s->c), 0, KG_DIST_UNIT, &k, &e)) {
            snprintf(why, n, "%s", e.msg);
            return -1;
        }
        k.seed = seed;
        struct kg_inputs in;
        if (kg_session_inputs(s, &k, &in, &e)) {
            snprintf(why, n, "%s", e.msg);
            return -1;
        }
        struct kg_exec x;
        struct kg_exec_opts o = {.fill = KG_FILL_ZERO, .guard_byte = 0, .flags = KG_RUN_LENIENT};
        kg_exec(s, &k, &in, &o, &x);
        if (x.status != KG_WS_OK) {
            snprintf(why, n, "trial %d: %s: %s", trial + 1, kg_wstatus_name((enum kg_wstatus)x.status), x.msg);
            kg_exec_free(&x);
            kg_inputs_free(&in);
            return 0;
        }
        struct kg_expect ex;
        if (kg_session_expect(s, &k, &ex, &e)) {
            snprintf(why, n, "%s", e.msg);
            kg_exec_free(&x);
            kg_inputs_free(&in);
            return -1;
        }
        int ok = 1;
        for (int j = 0; j < ex.nout && ok; j++) {
            int64_t bad = -1;
            /* the standard test compares with the reference run at working precision */
            if (!kg_allclose(&x.after[ex.arg[j]], &ex.ref[j], tol, tol, &bad)) {
                char idx[96];
                kg_tensor_index_str(&x.after[ex.arg[j]], bad, idx, sizeof idx);
                snprintf(why, n, "trial %d: %s%s = %.6g, reference %.6g: not allclose(atol=rtol=%g)", trial + 1,
                         s->c->args[ex.arg[j]].name, idx, kg_load(x.after[ex.arg[j]].dtype, x.after[ex.arg[j]].data, bad),
                         ((double *)ex.ref[j].data)[bad], tol);
                ok = 0;
            }
        }
        kg_expect_free(&ex);
        kg_exec_free(&x);
        kg_inputs_free(&in);
        if (!ok) return 0;
    }
    snprintf(why, n, "5 trials allclose(atol=rtol=%g)", tol);
    return 1;
}
