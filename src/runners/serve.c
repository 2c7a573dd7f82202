/* worker_main.c: the worker process. It serves LOAD, RUN and ORACLE requests for one kernel
 * with the runner the judge names. It holds input values and the prefill of outputs that
 * the judge chose, never an expected output, and it decides nothing: it reports what
 * happened (ok, refused, CUDA error...) and the bytes the kernel left behind. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runners/runner.h"
#include "worker/worker.h"

struct buf {
    uint64_t handle, size;
};

struct wstate {
    const struct kg_runner_ops *R;
    void *st;
    int loaded;
    struct buf set[2][KG_MAX_ARGS]; /* current allocations: one set per launch of a pair */
    uint64_t live, peak;            /* bytes of them, now and at most (the reply's dev_peak) */
};

static void free_set(struct wstate *w, struct buf *set)
{
    for (int i = 0; i < KG_MAX_ARGS; i++)
        if (set[i].size) {
            w->R->release(w->st, set[i].handle, set[i].size);
            w->live -= set[i].size;
            set[i] = (struct buf){0, 0};
        }
}

static int do_load(struct wstate *w, int fd, const struct kg_req_load *l, struct kg_reply *rp)
{
    if (w->R) {
        snprintf(rp->msg, sizeof rp->msg, "already loaded");
        return KG_WS_BAD_REQUEST;
    }
    if (l->runner == KG_RUNNER_HOST) w->R = &kg_runner_host;
#ifdef KG_HAVE_CUDA
    else if (l->runner == KG_RUNNER_CUDA)
        w->R = &kg_runner_cuda;
#endif
    else {
        snprintf(rp->msg, sizeof rp->msg, "this kgate was built without the CUDA runner (configure found no cuda.h)");
        return KG_WS_UNAVAILABLE;
    }
    int s = w->R->init(&w->st, rp);
    if (s == KG_WS_UNAVAILABLE && (l->flags & KG_LOAD_COMPILE_ONLY) && w->R->compile) {
        /* the runner cannot run here, but its compiler may be: compile, load nothing */
        char why[sizeof rp->msg];
        snprintf(why, sizeof why, "%s", rp->msg);
        rp->msg[0] = 0;
        s = w->R->compile(l, rp);
        if (s == KG_WS_OK) {
            rp->flags |= KG_REPLY_COMPILED_ONLY;
            snprintf(rp->msg, sizeof rp->msg, "%s", why);
        }
        w->R = NULL;
        return s;
    }
    if (s != KG_WS_OK) {
        w->R = NULL;
        return s;
    }
    s = w->R->load(w->st, l, rp);
    if (s == KG_WS_OK && w->R->open) {
        /* compiled: the judge now gives the candidate's own code the run's time limit */
        struct kg_reply p = {.magic = KG_PROTO_MAGIC, .status = KG_WS_PROGRESS, .nlaunch = -1};
        if (kg_proto_send_reply(fd, &p)) return KG_WS_BAD_REQUEST;
        s = w->R->open(w->st, l, rp);
    }
    if (s == KG_WS_OK) w->loaded = 1;
    return s;
}

/* Allocates a set of buffers for the request; with REUSE keeps matching ones. New buffers are
 * allocated before old ones are freed, so a fresh allocation never gets the old address. */
static int alloc_set(struct wstate *w, const struct kg_req_run *r, struct buf *set, int reuse, struct kg_reply *rp)
{
    struct buf fresh[KG_MAX_ARGS];
    memset(fresh, 0, sizeof fresh);
    for (int i = 0; i < r->nargs; i++) {
        const struct kg_req_arg *a = &r->args[i];
        if (a->kind != KG_ARG_TENSOR || a->alias >= 0) continue;
        uint64_t need = a->bytes + 2 * a->guard;
        if (reuse && set[i].size == need) {
            fresh[i] = set[i];
            set[i] = (struct buf){0, 0};
            continue;
        }
        int s = w->R->alloc(w->st, need, &fresh[i].handle, rp);
        if (s != KG_WS_OK) {
            free_set(w, fresh);
            return s;
        }
        fresh[i].size = need;
        w->live += need;
        if (w->live > w->peak) w->peak = w->live;
    }
    free_set(w, set);
    memcpy(set, fresh, sizeof fresh);
    return KG_WS_OK;
}

static void fill_launch(const struct kg_req_run *r, const struct buf *set, struct kg_launch *L, int32_t *kinds)
{
    memset(L, 0, sizeof *L);
    L->nargs = r->nargs;
    for (int i = 0; i < r->nargs; i++) {
        kinds[i] = r->args[i].kind;
        if (r->args[i].kind == KG_ARG_TENSOR) {
            int src = r->args[i].alias >= 0 ? r->args[i].alias : i;
            L->ptr[i] = set[src].handle + r->args[src].guard;
        }
    }
    L->kind = kinds;
    L->args = r->args;
    memcpy(L->grid, r->grid, sizeof L->grid);
    memcpy(L->block, r->block, sizeof L->block);
    L->smem = r->smem;
}

static int do_run(struct wstate *w, const struct kg_req_run *r, int shm_fd, struct kg_reply *rp)
{
    if (!w->loaded) {
        snprintf(rp->msg, sizeof rp->msg, "run before load");
        return KG_WS_BAD_REQUEST;
    }
    if (shm_fd < 0 || r->nargs < 0 || r->nargs > KG_MAX_ARGS) {
        snprintf(rp->msg, sizeof rp->msg, "run without shared memory");
        return KG_WS_BAD_REQUEST;
    }
    struct stat sb;
    if (fstat(shm_fd, &sb) || (uint64_t)sb.st_size < r->shm_size) {
        snprintf(rp->msg, sizeof rp->msg, "shared memory smaller than announced");
        return KG_WS_BAD_REQUEST;
    }
    uint8_t *shm = r->shm_size ? mmap(NULL, r->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0) : NULL;
    if (r->shm_size && shm == MAP_FAILED) {
        snprintf(rp->msg, sizeof rp->msg, "mmap of shared memory: %s", strerror(errno));
        return KG_WS_BAD_REQUEST;
    }
    int pair = (r->flags & KG_RUN_PAIR) != 0, s = KG_WS_OK;
    for (int i = 0; i < r->nargs; i++) {
        const struct kg_req_arg *a = &r->args[i];
        uint64_t end = a->off + a->bytes + 2 * a->guard, end2 = a->off2 + a->bytes + 2 * a->guard;
        if (a->kind == KG_ARG_TENSOR && (end > r->shm_size || (pair && end2 > r->shm_size))) {
            snprintf(rp->msg, sizeof rp->msg, "arg %d outside shared memory", i);
            s = KG_WS_BAD_REQUEST;
            goto out;
        }
    }
    for (int p = 0; p <= pair && s == KG_WS_OK; p++) s = alloc_set(w, r, w->set[p], (r->flags & KG_RUN_REUSE) != 0, rp);
    if (s != KG_WS_OK) goto out;
    for (int p = 0; p <= pair; p++)
        for (int i = 0; i < r->nargs && s == KG_WS_OK; i++) {
            const struct kg_req_arg *a = &r->args[i];
            if (a->kind != KG_ARG_TENSOR || a->alias >= 0) continue;
            s = w->R->upload(w->st, w->set[p][i].handle, shm + (p ? a->off2 : a->off), a->bytes + 2 * a->guard, rp);
        }
    if (s != KG_WS_OK) goto out;
    if (!(r->flags & KG_RUN_NO_LAUNCH)) {
        if ((r->flags & KG_RUN_BUSY_DEFAULT) && w->R->busy_default) {
            s = w->R->busy_default(w->st, 0.05, rp);
            if (s != KG_WS_OK) goto out;
        }
        /* a pair's two launches start together, however late the second is issued */
        int held = pair && w->R->hold;
        if (held) s = w->R->hold(w->st, 0, rp);
        for (int p = 0; p <= pair && s == KG_WS_OK; p++) {
            struct kg_launch L;
            int32_t kinds[KG_MAX_ARGS];
            fill_launch(r, w->set[p], &L, kinds);
            L.stream = pair ? 1 + p : (r->flags & KG_RUN_SIDE_STREAM) ? 1 : 0;
            s = w->R->launch(w->st, &L, rp);
        }
        if (held) { /* opened even after a failed launch: the other stream must not wait forever */
            int g = w->R->hold(w->st, 1, rp);
            if (s == KG_WS_OK) s = g;
        }
        int s2 = w->R->sync(w->st, rp);
        if (s == KG_WS_OK) s = s2;
        /* a refused case still downloads: the judge may look at what was left */
        if (s != KG_WS_OK && s != KG_WS_REFUSED) goto out;
    }
    for (int p = 0; p <= pair; p++)
        for (int i = 0; i < r->nargs; i++) {
            const struct kg_req_arg *a = &r->args[i];
            if (a->kind != KG_ARG_TENSOR || a->alias >= 0) continue;
            int d =
                w->R->download(w->st, shm + (p ? a->off2 : a->off), w->set[p][i].handle, a->bytes + 2 * a->guard, rp);
            if (d != KG_WS_OK) {
                s = d;
                goto out;
            }
        }
out:
    if (shm && shm != MAP_FAILED) munmap(shm, r->shm_size);
    return s;
}

static int do_oracle(struct wstate *w, const struct kg_req_oracle *o, int shm_fd, struct kg_reply *rp)
{
    if (!w->loaded || !w->R->oracle) {
        snprintf(rp->msg, sizeof rp->msg, "oracle before load");
        return KG_WS_BAD_REQUEST;
    }
    if (o->n_in < 0 || o->n_in > KG_OP_MAX_IO || o->n_out < 0 || o->n_out > KG_OP_MAX_IO || o->nsym < 0 ||
        o->nsym > KG_MAX_SYMS || shm_fd < 0) {
        snprintf(rp->msg, sizeof rp->msg, "malformed oracle request");
        return KG_WS_BAD_REQUEST;
    }
    uint8_t *shm = mmap(NULL, o->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
    if (shm == MAP_FAILED) {
        snprintf(rp->msg, sizeof rp->msg, "mmap of shared memory: %s", strerror(errno));
        return KG_WS_BAD_REQUEST;
    }
    const double *in[KG_OP_MAX_IO];
    double *out[KG_OP_MAX_IO];
    const int64_t *in_dims[KG_OP_MAX_IO], *out_dims[KG_OP_MAX_IO];
    int in_rank[KG_OP_MAX_IO], out_rank[KG_OP_MAX_IO];
    const char *names[KG_MAX_SYMS];
    for (int i = 0; i < o->n_in; i++) {
        if (o->in[i].kind == KG_ARG_TENSOR && o->in[i].data_dtype != KG_F64) {
            munmap(shm, o->shm_size);
            snprintf(rp->msg, sizeof rp->msg, "oracle input %d not sent as float64", i);
            return KG_WS_BAD_REQUEST;
        }
        in[i] = (const double *)(shm + o->in[i].off);
        in_dims[i] = o->in[i].dims;
        in_rank[i] = o->in[i].rank;
    }
    for (int i = 0; i < o->n_out; i++) {
        out[i] = (double *)(shm + o->out[i].off);
        out_dims[i] = o->out[i].dims;
        out_rank[i] = o->out[i].rank;
    }
    for (int i = 0; i < o->nsym; i++) names[i] = o->sym_names[i];
    struct kg_oracle_io io = {
        .n_in = o->n_in,
        .n_out = o->n_out,
        .in = in,
        .out = out,
        .in_dims = in_dims,
        .out_dims = out_dims,
        .in_rank = in_rank,
        .out_rank = out_rank,
        .nsym = o->nsym,
        .sym_names = names,
        .sym_values = o->sym_values,
        .working = o->working,
    };
    int s = w->R->oracle(w->st, &io, rp);
    munmap(shm, o->shm_size);
    return s;
}

/* This process's children, killed; true when there were any. Orphans of its descendants are
 * reparented here (the worker is their subreaper), so repeating finds every descendant. */
static bool kill_children(void)
{
    DIR *d = opendir("/proc");
    if (!d) return false;
    bool any = false;
    pid_t me = getpid();
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0 || pid == me) continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = 0;
        const char *rp = strrchr(buf, ')'); /* "pid (comm) state ppid ...": comm may hold anything */
        char state;
        long ppid;
        if (rp && sscanf(rp + 1, " %c %ld", &state, &ppid) == 2 && ppid == me) {
            kill((pid_t)pid, SIGKILL);
            any = true;
        }
    }
    closedir(d);
    return any;
}

/* Nothing the kernel started may outlive the request that started it. As its PID namespace's
 * init the worker kills every other process in it; without a namespace it kills its
 * descendants, as their subreaper. Then it reaps them. */
static void end_strays(void)
{
    if (getpid() == 1) {
        kill(-1, SIGKILL);
        while (waitpid(-1, NULL, 0) > 0) { /* the namespace's processes are all killed */
        }
        return;
    }
    for (int round = 0; round < 1000; round++) { /* a reparented orphan shows up in a later round */
        bool any = kill_children();
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }
        if (!any) break;
        usleep(1000);
    }
}

int kg_worker_main(int fd)
{
    kg_worker_drop_host_proc();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) return 1;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    signal(SIGPIPE, SIG_IGN);
    static struct wstate w;
    static struct kg_req rq;
    static struct kg_reply rp;
    for (;;) {
        int shm_fd = -1;
        if (kg_proto_recv(fd, &rq, &shm_fd)) return 0;
        memset(&rp, 0, sizeof rp);
        rp.magic = KG_PROTO_MAGIC;
        rp.nlaunch = -1;
        switch (rq.cmd) {
        case KG_CMD_LOAD: rp.status = do_load(&w, fd, &rq.u.load, &rp); break;
        case KG_CMD_RUN: rp.status = do_run(&w, &rq.u.run, shm_fd, &rp); break;
        case KG_CMD_ORACLE: rp.status = do_oracle(&w, &rq.u.oracle, shm_fd, &rp); break;
        case KG_CMD_QUIT:
            if (shm_fd >= 0) close(shm_fd);
            return 0;
        default: rp.status = KG_WS_BAD_REQUEST; snprintf(rp.msg, sizeof rp.msg, "unknown command %u", rq.cmd);
        }
        if (shm_fd >= 0) close(shm_fd);
        /* a device runner's: the judge's buffers it holds at most (what the kernel allocates
         * itself is not seen) */
        if (w.R && w.R->device) rp.dev_peak = w.peak, rp.dev_held = w.live;
        end_strays();
        fflush(stdout);
        fflush(stderr);
        if (kg_proto_send_reply(fd, &rp)) return 1;
        /* A CUDA context that saw a sticky error is useless: exit after replying. */
        if (rp.status == KG_WS_CUDA) return 0;
    }
}
