/* session.c: the session's core: worker clients (spawned and loaded on demand, respawned after
 * a crash), the shared memory they use, what the session tells gates and faces about itself,
 * and the recorded determinism runs. Opening and closing a session is open.c; everything that
 * differs between runners is the backend's (backend.h). */
#include "engine/session.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "engine/backend.h"

void kg_session_opts_default(struct kg_session_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->runner = -1;
    o->timeout = 10;
    o->dtype = -1;
    o->dist = -1;
}

struct kg_session *kg_session_new(const struct kg_session_opts *o)
{
    struct kg_session *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->o = *o;
    s->shm.fd = s->oshm.fd = -1;
    s->oracle.w.pid = -1;
    s->zyg.pid = -1;
    s->compare0 = kg_compare_seconds();
    const char *dbg = getenv("KGATE_DEBUG_MEMO");
    s->debug_memo = dbg && *dbg && strcmp(dbg, "0");
    const char *tr = getenv("KGATE_TRACE");
    s->trace = tr && *tr && strcmp(tr, "0");
    s->t_open = kg_now();
    const char *ce = getenv("KGATE_CASE_ELEMS"); /* the gates' per-case budget (engine.h's max_elems) */
    if (!s->o.max_elems && ce && *ce) s->o.max_elems = strtoll(ce, NULL, 10);
    /* the memo's bytes (with the oracle's values kept in its worker): a quarter of what this
     * process could still allocate, and of its share of the host when kgate audit runs several
     * checks at once (measured: six real-size checks, each taking a quarter of what was free
     * when it started, filled a 128 GiB host), or KGATE_MEMO_BYTES */
    const char *mb = getenv("KGATE_MEMO_BYTES");
    uint64_t avail = kg_mem_available(), share = kg_host_share();
    if (avail == UINT64_MAX) avail = 16ull << 30;
    s->memo_budget = mb && *mb ? strtoull(mb, NULL, 10) : (avail < share ? avail : share) / 4;
    return s;
}

/* ---- clients ------------------------------------------------------------------------------ */

void kg_session_restart(struct kg_session *s, struct kg_client *cl)
{
    (void)s;
    kg_worker_stop(&cl->w);
}

/* The candidate's latest load (device, attributes), whose compiler says "(cached)" only when no
 * load of this session compiled: a fresh worker's replay and another dtype's worker find what
 * the session's first compile stored. The oracle worker's load is not the candidate's. */
static void keep_load(struct kg_session *s, const struct kg_reply *rp)
{
    char compiler[sizeof s->last_load.compiler];
    bool compiled = s->last_load.compiler[0] && !strstr(s->last_load.compiler, "(cached)");
    memcpy(compiler, s->last_load.compiler, sizeof compiler);
    s->last_load = *rp;
    if (compiled) memcpy(s->last_load.compiler, compiler, sizeof compiler);
}

/* KGATE_TRACE=1: one line per worker call, for finding where a slow check spends its time:
 * when it started (seconds since the session opened), how long it took, which worker, the
 * command (a resident operation's number after it), the gate, the reply's status. The time
 * between one call's end and the next call's start is the judge's own. */
void kg_session_trace_call(const struct kg_session *s, const struct kg_client *cl, const struct kg_req *rq, double t0,
                           const struct kg_reply *rp)
{
    static const char *const name[] = {"?",        "load",   "run",      "oracle", "quit",
                                       "describe", "inputs", "standard", "sample", "resident"};
    const char *cmd = rq->cmd < sizeof name / sizeof *name ? name[rq->cmd] : "?";
    double now = kg_now();
    fprintf(stderr, "kgate: trace: %9.3f s %8.3f s  %-6s %s", t0 - s->t_open, now - t0,
            cl == &s->oracle ? "oracle" : "kernel", cmd);
    if (rq->cmd == KG_CMD_RESIDENT) fprintf(stderr, " %d", (int)rq->u.oracle.working);
    fprintf(stderr, "  %s  status %d\n", s->current_gate ? s->current_gate->id : "-", rp->status);
}

/* A new worker process for cl into w (forked by the zygote where one runs): 0, or -1 with rp
 * saying why. */
static int spawn_client(struct kg_session *s, struct kg_client *cl, struct kg_worker *w, struct kg_reply *rp)
{
    struct kg_err e;
    char *def[] = {s->exe, "__worker", "3", NULL};
    int forked = -1;
    if (cl->argv[0] && s->zygote[0]) {
        forked = kg_worker_spawn_zygote(w, s->zygote, &e);
        if (forked) {
            fprintf(stderr, "kgate: note: %s; starting python directly\n", e.msg);
            s->zygote[0] = 0;
        }
    }
    if (forked && kg_worker_spawn(w, cl->argv[0] ? cl->argv : def, &e)) {
        memset(rp, 0, sizeof *rp);
        rp->status = KG_WS_UNAVAILABLE;
        snprintf(rp->msg, sizeof rp->msg, "%s", e.msg);
        return -1;
    }
    w->mem_limit = cl->load.u.load.mem_limit;
    return 0;
}

void kg_client_spare(struct kg_session *s, struct kg_client *cl)
{
    if (cl->loaded) kg_client_ahead(s, cl);
}

void kg_client_ahead(struct kg_session *s, struct kg_client *cl)
{
    if (kg_worker_alive(&cl->spare) || kg_session_interrupted(s)) return;
    struct kg_reply rp;
    if (spawn_client(s, cl, &cl->spare, &rp)) {
        cl->spare.pid = -1;
        return;
    }
    cl->spare_at = kg_now();
    if (kg_worker_send(&cl->spare, &cl->load, -1, &rp, 600)) cl->spare.pid = -1; /* reaped: none */
}

void kg_client_stop(struct kg_client *cl)
{
    kg_worker_stop(&cl->w);
    if (kg_worker_alive(&cl->spare)) kg_worker_stop(&cl->spare);
}

int kg_client_start(struct kg_session *s, struct kg_client *cl, struct kg_reply *rp)
{
    if (kg_worker_alive(&cl->w)) return 0;
    /* the compile gets 600 s; the kernel's own code while loading (constructors, a module's
     * import) gets what a run gets, unless the client says otherwise */
    struct kg_call_opts co = {.then = cl->open_limit > 0 ? cl->open_limit : s->o.timeout,
                              .stop = s->o.interrupted,
                              .ud = s->o.interrupted_ud};
    double t0 = kg_now();
    int rc;
    if (kg_worker_alive(&cl->spare)) { /* started ahead (kg_client_spare): its LOAD is on its way */
        cl->w = cl->spare;
        cl->spare.pid = -1;
        rc = kg_worker_await(&cl->w, rp, 600, cl->spare_at + 600, &co);
    } else {
        if (spawn_client(s, cl, &cl->w, rp)) return -1;
        rc = kg_worker_request(&cl->w, &cl->load, -1, rp, 600, &co);
    }
    if (cl->loaded) cl->restarts++;
    s->t_compile += kg_now() - t0;
    if (s->trace) kg_session_trace_call(s, cl, &cl->load, t0, rp);
    kg_session_note_dev_peak(s, cl, rp);
    if (rc || rp->status != KG_WS_OK) {
        if (kg_worker_alive(&cl->w)) kg_worker_stop(&cl->w);
        return -1;
    }
    cl->load_reply = *rp;
    if (cl != &s->oracle) keep_load(s, rp);
    cl->loaded = true;
    return 0;
}

struct kg_client *kg_session_client(struct kg_session *s, enum kg_dtype dtype, struct kg_reply *rp)
{
    if (s->cannot_run[0]) { /* opened to describe or to compile only: nothing runs */
        memset(rp, 0, sizeof *rp);
        rp->status = KG_WS_UNAVAILABLE;
        kg_strlcpy(rp->msg, s->cannot_run, sizeof rp->msg);
        return NULL;
    }
    int i;
    for (i = 0; i < s->ncand; i++)
        if (s->cand_dtype[i] == dtype) break;
    if (i == s->ncand) {
        if (s->ncand == KG_MAX_DTYPES + 1) return NULL;
        s->cand_dtype[i] = dtype;
        memset(&s->cand[i], 0, sizeof s->cand[i]);
        s->cand[i].w.pid = s->cand[i].spare.pid = -1;
        s->be->load_req(s, &s->cand[i], dtype);
        s->ncand++;
    }
    if (kg_client_start(s, &s->cand[i], rp)) return NULL;
    return &s->cand[i];
}

bool kg_msg_device_full(const char *msg)
{
    return strstr(msg, "OutOfMemoryError") || strstr(msg, "CUDA out of memory");
}

bool kg_reply_device_full(const struct kg_reply *rp)
{
    return rp->status == KG_WS_EXCEPTION && kg_msg_device_full(rp->msg);
}

/* The size torch writes after what in msg ("16.03 GiB", "512.00 MiB", "1000 bytes"), in bytes (0:
 * not there). */
static double torch_size_after(const char *msg, const char *what)
{
    static const struct {
        const char *unit;
        double bytes;
    } units[] = {{"bytes", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
    const char *p = strstr(msg, what);
    if (!p) return 0;
    char *end;
    const double v = strtod(p + strlen(what), &end);
    while (*end == ' ') end++;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (!strncmp(end, units[i].unit, strlen(units[i].unit))) return v * units[i].bytes;
    return 0;
}

/* Whether the device is too small for rp's request with only this check's workers on it (session.h):
 * *need and *total in bytes. */
static bool full_alone(const struct kg_session *s, const struct kg_reply *rp, double *need, double *total)
{
    const double want = torch_size_after(rp->msg, "Tried to allocate ");
    *total = torch_size_after(rp->msg, "total capacity of ");
    if (want <= 0 || *total <= 0) return false;
    /* the failing worker's as torch counted it (with its CUDA context), else as it replied */
    double mine = torch_size_after(rp->msg, "this process has ");
    if (mine < (double)rp->dev_held) mine = (double)rp->dev_held;
    /* the others as their last replies said, where their worker is still there (a stopped
     * one's memory is the device's again; the standard test's worker ends with its cache given
     * back, what it last said is small) */
    bool alive[KG_DEV_ROLES] = {kg_worker_alive(&s->oracle.w), false, true};
    for (int i = 0; i < s->ncand; i++) alive[KG_DEV_KERNEL] |= kg_worker_alive(&s->cand[i].w);
    double others = -(double)rp->dev_held; /* noted in dev_now already */
    for (int r = 0; r < KG_DEV_ROLES; r++) others += alive[r] ? (double)s->dev_now[r] : 0;
    *need = want + mine + (others > 0 ? others : 0);
    return *need > *total;
}

bool kg_session_wait_full(struct kg_session *s, enum kg_cmd cmd, const struct kg_reply *rp, int tries)
{
    if (kg_checks_at_once() < 2) return false;
    const char *msg = rp->msg;
    double need, total;
    if (full_alone(s, rp, &need, &total)) { /* the kernel's (or reference's) own, as on a device alone */
        if (s->trace)
            fprintf(stderr,
                    "kgate: trace: the device was full, and this check's workers alone need %.1f GiB of its %.1f: "
                    "not waited (%.300s)\n",
                    need / 1073741824.0, total / 1073741824.0, msg);
        return false;
    }
    const char *env = getenv("KGATE_DEVICE_WAIT");
    const double most = env && *env ? strtod(env, NULL) : KG_DEVICE_WAIT_MAX;
    /* RESIDENT's calibration takes the evaluations it calibrates out of the worker as it starts,
     * and LOAD is the client's own business: only requests that can be sent again as they were */
    if (cmd == KG_CMD_RESIDENT || cmd == KG_CMD_LOAD || s->t_devwait >= most) {
        /* the device stayed full: the gate errs (run.c), and kgate audit runs the check again
         * later (met_full_memory), rather than a kernel refusing the case because of another
         * check's memory */
        snprintf(s->judge_broken, sizeof s->judge_broken,
                 "the device ran out of memory (shared by %u checks; %.1f s waited for room): %.200s; this "
                 "says nothing about the kernel",
                 kg_checks_at_once(), s->t_devwait, msg);
        return false;
    }
    /* 1, 2, 4, 8, 8... s, each up to a quarter longer at random, so that two checks that met
     * each other's peak do not try again in step */
    double d = tries < 3 ? (double)(1 << tries) : 8.0;
    const double now = kg_now();
    d *= 1.0 + 0.25 * (now * 1e3 - floor(now * 1e3));
    if (d > most - s->t_devwait) d = most - s->t_devwait;
    if (s->trace) fprintf(stderr, "kgate: trace: the device was full (%.300s); again in %.1f s\n", msg, d);
    struct timespec ts = {.tv_sec = (time_t)d, .tv_nsec = (long)((d - floor(d)) * 1e9)};
    while (nanosleep(&ts, &ts) && errno == EINTR && !(s->o.interrupted && s->o.interrupted(s->o.interrupted_ud))) {
    }
    s->t_devwait += d;
    s->dev_waits++;
    return true;
}

bool kg_session_wait_device(struct kg_session *s, const struct kg_req *rq, const struct kg_reply *rp, int tries)
{
    return !s->devwait_off && kg_reply_device_full(rp) && kg_session_wait_full(s, (enum kg_cmd)rq->cmd, rp, tries);
}

int kg_session_call_fd(struct kg_session *s, struct kg_client *cl, struct kg_req *rq, int fd, struct kg_reply *rp)
{
    if (kg_client_start(s, cl, rp)) return -1;
    /* --timeout limits the kernel under test; the oracle worker runs only trusted code (the
     * reference, the inputs), which on a loaded GPU host can take longer than a short limit */
    double timeout = rq->cmd == KG_CMD_ORACLE || cl == &s->oracle ? 600 : s->o.timeout;
    int rc;
    for (int tries = 0;; tries++) {
        double t0 = kg_now();
        rc = kg_worker_call_until(&cl->w, rq, fd, rp, timeout, s->o.interrupted, s->o.interrupted_ud);
        if (s->trace) kg_session_trace_call(s, cl, rq, t0, rp);
        kg_session_note_dev_peak(s, cl, rp);
        if (rc || !kg_session_wait_device(s, rq, rp, tries)) break;
    }
    if (rp->status == KG_WS_HOST_OOM) /* the host's trouble: the gate decides nothing (run.c) */
        kg_session_note_host_oom(s, cl == &s->oracle ? "oracle's" : "kernel's", NULL);
    return rc;
}

void kg_session_note_dev_peak(struct kg_session *s, const struct kg_client *cl, const struct kg_reply *rp)
{
    const int r = cl == &s->oracle ? KG_DEV_ORACLE : cl->standard ? KG_DEV_STANDARD : KG_DEV_KERNEL;
    if (rp->dev_peak > s->dev_peak[r]) s->dev_peak[r] = rp->dev_peak;
    if (rp->dev_held > s->dev_held[r]) s->dev_held[r] = rp->dev_held;
    s->dev_now[r] = rp->dev_held;
}

void kg_session_note_host_oom(struct kg_session *s, const char *who, const char *case_id)
{
    snprintf(s->judge_broken, sizeof s->judge_broken,
             "the host ran out of memory%s%s: its out-of-memory killer took the %s worker, which says nothing about "
             "the kernel (run it with fewer checks at once, or on a larger host)",
             case_id ? " at " : "", case_id ? case_id : "", who);
}

int kg_session_call(struct kg_session *s, struct kg_client *cl, struct kg_req *rq, struct kg_reply *rp)
{
    return kg_session_call_fd(s, cl, rq, cl == &s->oracle ? s->oshm.fd : s->shm.fd, rp);
}

/* ---- shared memory ------------------------------------------------------------------------- */

/* Grows one shared region to at least size bytes (a new memfd: a worker that maps the old one
 * keeps a valid mapping of memory no longer used). */
static int shm_ensure(struct kg_shm *m, uint64_t size, struct kg_err *e)
{
    if (size <= m->size && m->mem) return 0;
    /* at least double: the shapes gate grows its cases one after another, and every new memfd
     * costs a page fault per page on both sides */
    uint64_t want = size < 2 * m->size ? 2 * m->size : size;
    if (want < (1u << 20)) want = 1u << 20;
    if (m->mem) munmap(m->mem, m->size);
    if (m->fd >= 0) close(m->fd);
    m->mem = NULL;
    m->size = 0;
    m->fd = memfd_create("kgate-shm", MFD_CLOEXEC);
    if (m->fd < 0) return kg_errf(e, "memfd_create: %s", strerror(errno));
    if (ftruncate(m->fd, (off_t)want))
        return kg_errf(e, "cannot size shared memory to %llu bytes: %s", (unsigned long long)want, strerror(errno));
    void *p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
    if (p == MAP_FAILED)
        return kg_errf(e, "mmap of %llu bytes of shared memory: %s", (unsigned long long)want, strerror(errno));
    m->mem = p;
    m->size = want;
    return 0;
}

int kg_session_shm(struct kg_session *s, uint64_t size, struct kg_err *e)
{
    return shm_ensure(&s->shm, size, e);
}

int kg_session_oshm(struct kg_session *s, uint64_t size, struct kg_err *e)
{
    return shm_ensure(&s->oshm, size, e);
}

/* ---- what a session is ----------------------------------------------------------------------- */

bool kg_session_interrupted(const struct kg_session *s)
{
    return s->o.interrupted && s->o.interrupted(s->o.interrupted_ud);
}

const struct kg_contract *kg_session_contract(const struct kg_session *s)
{
    return s->c;
}

const struct kg_session_opts *kg_session_opts(const struct kg_session *s)
{
    return &s->o;
}

const char *kg_session_runner(const struct kg_session *s)
{
    return s->be->name;
}

const char *kg_session_no_gpu(const struct kg_session *s)
{
    return s->be->no_gpu(s);
}

const char *kg_session_cannot_run(const struct kg_session *s)
{
    return s->cannot_run[0] ? s->cannot_run : NULL;
}

bool kg_session_is_host(const struct kg_session *s)
{
    return kg_session_no_gpu(s) != NULL;
}

bool kg_session_can(const struct kg_session *s, enum kg_cap cap)
{
    if (cap == KG_CAP_SYNC_DEVICE && kg_session_is_host(s)) return false; /* no streams on the CPU */
    if (cap == KG_CAP_DIGEST) { /* KGATE_DIGEST=0: every run's outputs to the judge, for comparing */
        const char *d = getenv("KGATE_DIGEST");
        if (d && !strcmp(d, "0")) return false;
    }
    return (s->be->caps & cap) != 0;
}

void kg_session_note_nondeterministic(struct kg_session *s)
{
    s->nondeterministic = true;
}

bool kg_session_nondeterministic(const struct kg_session *s)
{
    return s->nondeterministic;
}

_Static_assert(KG_NCAUSES <= 32, "causes_seen holds one bit per cause");

int kg_session_late_writes(const struct kg_session *s)
{
    return s->late_writes;
}

double kg_session_projected_seconds(const struct kg_session *s, int64_t elems)
{
    return s->run_elems > 0 ? s->run_secs * ((double)elems / (double)s->run_elems) : 0;
}

bool kg_session_saw_cause(const struct kg_session *s, enum kg_cause c)
{
    return c > KG_CAUSE_GATE && c < KG_NCAUSES && (s->causes_seen >> c & 1u);
}

const struct kg_reply *kg_session_last_load(const struct kg_session *s)
{
    return &s->last_load;
}

const struct kg_dev_info *kg_session_device(const struct kg_session *s)
{
    return s->last_load.dev.valid ? &s->last_load.dev : NULL;
}

const struct kg_func_attrs *kg_session_attrs(const struct kg_session *s)
{
    return s->last_load.attrs.valid ? &s->last_load.attrs : NULL;
}

const struct kg_reply *kg_session_last_run(const struct kg_session *s)
{
    return s->has_last_run ? &s->last_run : NULL;
}

const char *kg_session_cache_dir(const struct kg_session *s)
{
    return s->cache;
}

/* ---- recorded runs --------------------------------------------------------------------------- */

void kg_record_reset(struct kg_session *s, const struct kg_case *k)
{
    for (int r = 0; r < s->nrec; r++)
        for (int j = 0; j < KG_OP_MAX_IO; j++) kg_tensor_free(&s->rec[r].out[j]);
    s->nrec = 0;
    s->rec_case = *k;
}

void kg_record_run(struct kg_session *s, int r, const struct kg_exec *x)
{
    const struct kg_case *k = &s->rec_case;
    if (r >= KG_MAX_RECORDS || !s->o.keep_runs) return;
    int j = 0;
    for (int i = 0; i < k->c->nargs && j < KG_OP_MAX_IO; i++) {
        if (!kg_arg_is_output(&k->c->args[i])) continue;
        struct kg_tensor *t = &s->rec[r].out[j++];
        kg_tensor_free(t);
        if (kg_tensor_copy(t, &x->after[i])) t->data = NULL;
    }
    if (r + 1 > s->nrec) s->nrec = r + 1;
}

int kg_records(const struct kg_session *s, const struct kg_case **k)
{
    if (k) *k = s->nrec ? &s->rec_case : NULL;
    return s->nrec;
}

const struct kg_tensor *kg_record_output(const struct kg_session *s, int r, int j)
{
    if (r < 1 || r > s->nrec || j < 0 || j >= KG_OP_MAX_IO || !s->rec[r - 1].out[j].data) return NULL;
    return &s->rec[r - 1].out[j];
}
