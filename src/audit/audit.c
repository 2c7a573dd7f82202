/* audit.c: `kgate audit` judges a corpus of KernelBench-format pairs (read by corpus.c). Each
 * pair is checked by a child `kgate check --ref` (its own workers, its own crash domain, a time
 * limit), a pool of children builds the candidates that need a build (load_inline) first, on the
 * CPU cores, while the checks take what is ready; every finished pair is appended to a JSONL
 * store with fsync, so `--resume` after a kill -9 loses only the pairs that were in flight.
 * `kgate audit-merge` joins the stores of shards. */
#include "audit/audit.h"
#include "audit/corpus.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/cache.h"
#include "engine/session.h"
#include "engine/torch.h"

/* ---- the store ------------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Ids already in the store (for --resume), as a sorted array. */
static char **done_ids(const char *store, int *n)
{
    *n = 0;
    FILE *f = fopen(store, "r");
    if (!f) return NULL;
    char **ids = NULL;
    int cap = 0;
    char *line = NULL;
    size_t lc = 0;
    while (getline(&line, &lc, f) > 0) {
        json_t *o = json_loads(line, 0, NULL); /* a torn last line (kill -9) does not parse: skipped */
        const char *id = json_string_value(json_object_get(o, "id"));
        if (id) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 64;
                char **nv = realloc(ids, (size_t)cap * sizeof *nv);
                if (!nv) break;
                ids = nv;
            }
            ids[(*n)++] = strdup(id);
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    qsort(ids, (size_t)*n, sizeof *ids, cmp_str);
    return ids;
}

static bool in_sorted(char **ids, int n, const char *id)
{
    return n && bsearch(&id, ids, (size_t)n, sizeof *ids, cmp_str) != NULL;
}

/* Appends one line and makes it durable before returning. */
static int append(int fd, json_t *rec)
{
    char *s = json_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!s) return -1;
    size_t n = strlen(s);
    s[n] = '\n';
    ssize_t w = write(fd, s, n + 1);
    free(s);
    if (w != (ssize_t)(n + 1)) return -1;
    return fsync(fd);
}

/* ---- the scheduler --------------------------------------------------------------------------- */

/* Whether the candidate compiles an extension when imported (load_inline, cpp_extension): the
 * build can run ahead on the CPU cores. Triton compiles at first launch, inside the check. */
static bool needs_build(const char *path)
{
    size_t n = 0;
    struct kg_err e;
    char *src = kg_read_file(path, &n, &e);
    bool b = src && (strstr(src, "load_inline") || strstr(src, "cpp_extension"));
    free(src);
    return b;
}

struct job {
    pid_t pid;
    int row;
    double start;
    bool compile_only;
    char out[KG_DIR_MAX + 2 * KG_PATH_SLACK]; /* TMPDIR/ROW.json */
    int slot;                                 /* GPU index, or -1 */
};

static pid_t spawn(const char *exe, const struct audit_opts *o, const struct audit_row *r, const char *out,
                   bool compile_only, int gpu)
{
    pid_t pid = fork();
    if (pid) return pid;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* an audit killed with -9 takes its checks with it */
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
    }
    if (out) { /* the check's own message (FILE:LINE: why) goes into the record if it has no report */
        char err[KG_DIR_MAX + 3 * KG_PATH_SLACK];
        snprintf(err, sizeof err, "%s.err", out);
        int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) dup2(fd, 2);
    }
    if (gpu >= 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", gpu);
        setenv("CUDA_VISIBLE_DEVICES", v, 1);
    }
    char seed[32], tol[32], timeout[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    snprintf(tol, sizeof tol, "%g", o->tol_k > 0 ? o->tol_k : 2.0);
    snprintf(timeout, sizeof timeout, "%g", o->run_timeout);
    char *argv[24];
    int a = 0;
    argv[a++] = (char *)exe;
    argv[a++] = "check";
    argv[a++] = "--ref";
    argv[a++] = r->problem;
    argv[a++] = r->candidate;
    if (compile_only) {
        argv[a++] = "--compile-only";
    } else {
        argv[a++] = "--json";
        argv[a++] = (char *)out;
        argv[a++] = "--baseline";
        argv[a++] = "kernelbench";
        argv[a++] = "--exhaustive";
        argv[a++] = "--seed";
        argv[a++] = seed;
        argv[a++] = "--tolerance";
        argv[a++] = tol;
        argv[a++] = "--timeout";
        argv[a++] = timeout;
    }
    if (o->python) {
        argv[a++] = "--python";
        argv[a++] = (char *)o->python;
    }
    argv[a] = NULL;
    execv(exe, argv);
    _exit(127);
}

static json_t *finish(const struct job *j, const struct audit_row *r, int status, bool timed_out, double limit)
{
    json_error_t je;
    json_t *rec = NULL;
    char errpath[KG_DIR_MAX + 3 * KG_PATH_SLACK]; /* the check's stderr (see spawn) */
    snprintf(errpath, sizeof errpath, "%s.err", j->out);
    if (!timed_out) rec = json_load_file(j->out, 0, &je);
    if (!rec) {
        rec = json_object();
        json_object_set_new(rec, "verdict", json_string("error"));
        char why[1400];
        if (timed_out)
            snprintf(why, sizeof why, "the check took longer than the per-kernel limit of %g s", limit);
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
            snprintf(why, sizeof why, "the pair could not be loaded (compile error or malformed problem)");
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
            snprintf(why, sizeof why, "nothing could be checked here (no PyTorch or no GPU)");
        else
            snprintf(why, sizeof why, "kgate check ended with status %d and no report", status);
        /* what the check said on stderr: its first line in the reason, the rest as the log */
        struct kg_err ee;
        size_t n = 0;
        char *log = timed_out ? NULL : kg_read_file(errpath, &n, &ee);
        if (log && n) {
            for (size_t i = 0; i < n; i++) /* valid UTF-8 for JSON, whatever a compiler printed */
                if ((unsigned char)log[i] >= 0x80 || (log[i] < 0x20 && log[i] != '\n' && log[i] != '\t')) log[i] = '?';
            size_t first = strcspn(log, "\n");
            size_t have = strlen(why);
            snprintf(why + have, sizeof why - have, ": %.*s", (int)(first < 1000 ? first : 1000), log);
            json_object_set_new(rec, "log", json_stringn(log + (n > 4000 ? n - 4000 : 0), n > 4000 ? 4000 : n));
        }
        free(log);
        json_object_set_new(rec, "error", json_string(why));
    }
    unlink(errpath);
    json_object_set_new(rec, "id", json_string(r->id));
    json_object_set_new(rec, "problem", json_string(r->problem));
    json_object_set_new(rec, "candidate", json_string(r->candidate));
    json_object_set_new(rec, "label", r->label ? json_string(r->label) : json_null());
    json_object_set_new(rec, "audit_seconds", json_real(kg_now() - j->start));
    json_object_set_new(rec, "exit", json_integer(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    unlink(j->out);
    return rec;
}

/* A violation is a checked pair (it has gate verdicts) whose verdict is not pass; a pair with
 * no report (build error, malformed problem, no GPU here, over the limit) was not checked. */
static bool violated(json_t *rec)
{
    const char *v = json_string_value(json_object_get(rec, "verdict"));
    return v && strcmp(v, "pass") && json_object_get(rec, "gates");
}

static bool unchecked(json_t *rec)
{
    return !json_object_get(rec, "gates");
}

static void progress(int done, int total, int viol, int running, int compiling, double t0)
{
    double el = kg_now() - t0, rate = el > 0 ? done / el * 3600 : 0;
    double eta = done ? el / done * (total - done) : 0;
    int w = 30, fill = total ? done * w / total : 0;
    fprintf(stderr, "\r\033[K[");
    for (int i = 0; i < w; i++) fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %d/%d  %.0f/h  ETA %d:%02d  violations %d  (checking %d, compiling %d)", done, total, rate,
            (int)(eta / 60), (int)eta % 60, viol, running, compiling);
    fflush(stderr);
}

/* ---- one audit run --------------------------------------------------------------------------- */

enum build { NO_BUILD, TO_BUILD, BUILDING, BUILT };

/* An audit in progress: the pairs it does, its slots (o->jobs check slots, then
 * o->compile_jobs compile slots), and the counts the progress line and the summary show. */
struct audit_run {
    const struct audit_opts *o;
    struct audit_rows r;
    int *todo, ntodo, skipped;               /* indexes into r.v: this shard's pairs not yet in the store */
    int fd;                                  /* the store */
    char exe[KG_PATH_MAX];                   /* this kgate: every check runs it */
    char tmpdir[KG_DIR_MAX + KG_PATH_SLACK]; /* the checks' reports, until they are in the store */
    struct kg_worker zyg;
    struct job *jobs;
    int nslots;
    enum build *bs; /* per todo entry */
    bool *started;  /* per todo entry: its check has started */
    int finished, viol, nochk, running, compiling;
    double t0;
    bool interactive;
};

static void run_free(struct audit_run *a)
{
    if (a->fd >= 0) close(a->fd);
    free(a->jobs);
    free(a->bs);
    free(a->started);
    free(a->todo);
    kg_audit_rows_free(&a->r);
}

/* This shard's pairs, less those the store holds with --resume; then the store, opened for
 * appending (a store that exists is only continued with --resume). */
static int open_store(struct audit_run *a, struct kg_err *e)
{
    const struct audit_opts *o = a->o;
    int ndone = 0;
    char **done = o->resume ? done_ids(o->store, &ndone) : NULL;
    a->todo = calloc((size_t)(a->r.n ? a->r.n : 1), sizeof *a->todo);
    if (!a->todo) {
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    for (int i = 0; i < a->r.n; i++) {
        if (o->shard_n > 1 && i % o->shard_n != o->shard_i) continue;
        if (in_sorted(done, ndone, a->r.v[i].id)) {
            a->skipped++;
            continue;
        }
        a->todo[a->ntodo++] = i;
    }
    for (int i = 0; i < ndone; i++) free(done[i]);
    free(done);
    if (!o->resume && access(o->store, F_OK) == 0 && a->ntodo) {
        kg_errf(e, "%s exists: --resume to continue it, or choose another store", o->store);
        return KG_EXIT_USAGE;
    }
    a->fd = open(o->store, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (a->fd < 0) {
        kg_errf(e, "%s: cannot open: %s", o->store, strerror(errno));
        return KG_EXIT_INTERNAL;
    }
    return 0;
}

/* One PyTorch fork server for every check: a worker is a fork of an interpreter that has
 * imported PyTorch, not a new interpreter (KGATE_ZYGOTE=0: each check starts python itself). */
static void start_zygote(struct audit_run *a, const char *cache)
{
    const char *zenv = getenv("KGATE_ZYGOTE");
    if (!a->ntodo || (zenv && *zenv)) return;
    char runner[KG_PATH_MAX], zname[96];
    const char *py = a->o->python ? a->o->python : getenv("KGATE_PYTHON");
    struct kg_err ze;
    if (kg_torch_runner_path(cache, runner, sizeof runner, &ze) == 0 &&
        kg_torch_zygote(&a->zyg, py && *py ? py : "python3", runner, zname, sizeof zname, &ze) == 0)
        setenv("KGATE_ZYGOTE", zname, 1);
    else
        fprintf(stderr, "kgate audit: note: %s; each check starts its own python\n", ze.msg);
}

/* Each check runs ~3 torch workers at a time; PyTorch would give each of them a thread per
 * core for its CPU-side copies and conversions, and spinning OpenMP threads of dozens of
 * processes take the cores the checks and builds need. */
static void share_threads(int jobs)
{
    if (getenv("KGATE_TORCH_THREADS")) return;
    long ncpu = kg_ncpu();
    long share = ncpu / (3L * jobs);
    char v[24];
    snprintf(v, sizeof v, "%ld", share > 1 ? share : 1);
    setenv("KGATE_TORCH_THREADS", v, 1);
}

/* Everything the checks need before the first starts: the executable, a directory for their
 * reports, the fork server, the slots and which pairs have a build step. */
static int prepare(struct audit_run *a, const char *cache, struct kg_err *e)
{
    const struct audit_opts *o = a->o;
    ssize_t el = readlink("/proc/self/exe", a->exe, sizeof a->exe - 1);
    a->exe[el > 0 ? el : 0] = 0;
    snprintf(a->tmpdir, sizeof a->tmpdir, "%s/audit-%d", cache, (int)getpid());
    kg_mkdirs(a->tmpdir);
    char on[32] = "";
    if (o->gpus) snprintf(on, sizeof on, " on %d GPU%s", o->gpus, o->gpus > 1 ? "s" : "");
    fprintf(stderr,
            "kgate audit: %d pairs (%d in the store already, shard %d/%d), %d checking at once%s, %d compiling ahead\n",
            a->ntodo, a->skipped, o->shard_i, o->shard_n > 1 ? o->shard_n : 1, o->jobs, on, o->compile_jobs);
    signal(SIGPIPE, SIG_IGN);
    start_zygote(a, cache);
    share_threads(o->jobs);
    a->nslots = o->jobs + o->compile_jobs;
    a->jobs = calloc((size_t)a->nslots, sizeof *a->jobs);
    a->bs = calloc((size_t)(a->ntodo ? a->ntodo : 1), sizeof *a->bs);
    a->started = calloc((size_t)(a->ntodo ? a->ntodo : 1), sizeof *a->started);
    if ((a->nslots && !a->jobs) || !a->bs || !a->started) {
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    for (int i = 0; i < a->ntodo && o->compile_jobs > 0; i++)
        a->bs[i] = needs_build(a->r.v[a->todo[i]].candidate) ? TO_BUILD : NO_BUILD;
    return 0;
}

/* ---- the scheduler loop ------------------------------------------------------------------------ */

/* Candidates with a build step (load_inline: ~1 minute of compiler each) are built first, on
 * the compile slots, while the check slots take whatever is ready: a candidate without a
 * build, or one whose build is done. A check never waits on a build while other work is
 * ready, and the audit does not end on a long tail of builds. */
static int next_row(const struct audit_run *a, bool check_slot)
{
    for (int i = 0; i < a->ntodo; i++)
        if (!a->started[i] && (check_slot ? a->bs[i] == NO_BUILD || a->bs[i] == BUILT : a->bs[i] == TO_BUILD)) return i;
    return -1;
}

/* Starts checks on free check slots, builds on free compile slots. */
static void start_jobs(struct audit_run *a)
{
    const struct audit_opts *o = a->o;
    for (int sl = 0; sl < a->nslots; sl++) {
        struct job *j = &a->jobs[sl];
        if (j->pid > 0) continue;
        bool check_slot = sl < o->jobs;
        int row = next_row(a, check_slot);
        if (row < 0) continue;
        j->row = row;
        j->compile_only = !check_slot;
        j->start = kg_now();
        if (check_slot) {
            a->started[row] = true;
            j->slot = o->gpus ? sl % o->gpus : -1;
            snprintf(j->out, sizeof j->out, "%s/%d.json", a->tmpdir, j->row);
            j->pid = spawn(a->exe, o, &a->r.v[a->todo[j->row]], j->out, false, j->slot);
            a->running++;
        } else {
            a->bs[row] = BUILDING;
            j->slot = -1;
            j->pid = spawn(a->exe, o, &a->r.v[a->todo[j->row]], NULL, true, -1);
            a->compiling++;
        }
    }
}

/* A finished (or killed) check's record, counted and appended to the store. */
static void store_record(struct audit_run *a, const struct job *j, int status, bool timed_out)
{
    json_t *rec = finish(j, &a->r.v[a->todo[j->row]], status, timed_out, a->o->limit);
    a->viol += violated(rec);
    a->nochk += unchecked(rec);
    if (append(a->fd, rec)) fprintf(stderr, "\nkgate audit: cannot write %s: %s\n", a->o->store, strerror(errno));
    json_decref(rec);
}

static void kill_job(const struct job *j, int *status)
{
    kill(-j->pid, SIGKILL);
    kill(j->pid, SIGKILL);
    waitpid(j->pid, status, 0);
}

/* The per-kernel limit: a build past it is dropped (its check will say why), a check past it
 * is killed and recorded as such. */
static void enforce_limit(struct audit_run *a)
{
    const struct audit_opts *o = a->o;
    double now = kg_now();
    for (int sl = o->jobs; sl < a->nslots; sl++) {
        struct job *j = &a->jobs[sl];
        if (j->pid > 0 && now - j->start > o->limit) {
            kill_job(j, NULL);
            a->bs[j->row] = BUILT;
            j->pid = 0;
            a->compiling--;
        }
    }
    for (int sl = 0; sl < o->jobs; sl++) {
        struct job *j = &a->jobs[sl];
        if (j->pid > 0 && !j->compile_only && now - j->start > o->limit) {
            int status;
            kill_job(j, &status);
            store_record(a, j, status, true);
            j->pid = 0;
            a->running--;
            a->finished++;
        }
    }
}

/* A child that ended: a build (built, or failed: the check reports a build error itself) frees
 * its pair for a check; a check's report goes into the store. */
static void reaped(struct audit_run *a, pid_t pid, int status)
{
    for (int sl = 0; sl < a->nslots; sl++) {
        struct job *j = &a->jobs[sl];
        if (j->pid != pid) continue;
        j->pid = 0;
        if (j->compile_only) {
            a->bs[j->row] = BUILT;
            a->compiling--;
            return;
        }
        a->running--;
        store_record(a, j, status, false);
        a->finished++;
        if (!a->interactive) fprintf(stderr, "[%d/%d] %s\n", a->finished, a->ntodo, a->r.v[a->todo[j->row]].id);
        return;
    }
}

static void schedule(struct audit_run *a)
{
    a->t0 = kg_now();
    a->interactive = isatty(2);
    while (a->finished < a->ntodo) {
        start_jobs(a);
        if (a->interactive) progress(a->finished, a->ntodo, a->viol, a->running, a->compiling, a->t0);
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid > 0) {
            reaped(a, pid, status);
            continue;
        }
        enforce_limit(a);
        usleep(50000);
    }
    /* compile-ahead children still running are not needed any more */
    for (int sl = 0; sl < a->nslots; sl++)
        if (a->jobs[sl].pid > 0) {
            kill(-a->jobs[sl].pid, SIGKILL);
            waitpid(a->jobs[sl].pid, NULL, 0);
        }
}

static void summary(const struct audit_run *a)
{
    double el_s = kg_now() - a->t0;
    if (a->interactive) progress(a->finished, a->ntodo, a->viol, 0, 0, a->t0);
    fprintf(stderr, "\nkgate audit: %d pairs in %.1f s (%.0f per hour), %d with a violation", a->finished, el_s,
            el_s > 0 ? a->finished / el_s * 3600 : 0, a->viol);
    if (a->nochk) fprintf(stderr, ", %d not checked (the record's \"error\" says why)", a->nochk);
    fprintf(stderr, "; store %s\n", a->o->store);
}

int kg_audit(const struct audit_opts *o, struct kg_err *e)
{
    struct audit_run a = {.o = o, .fd = -1, .zyg = {.pid = -1, .fd = -1, .log_fd = -1}};
    char cache[KG_DIR_MAX];
    if (kg_cache_dir(cache, sizeof cache, e)) return KG_EXIT_INTERNAL;
    int rc = kg_audit_corpus(o, cache, &a.r, e);
    if (!rc) rc = open_store(&a, e);
    if (!rc) rc = prepare(&a, cache, e);
    if (!rc) schedule(&a);
    kg_worker_stop(&a.zyg); /* started in prepare; a no-op where it was not */
    if (!rc) {
        summary(&a);
        close(a.fd);
        a.fd = -1;
        rmdir(a.tmpdir);
    }
    run_free(&a);
    return rc;
}

int kg_audit_merge(const char *out, char *const *in, int n, struct kg_err *e)
{
    json_t *byid = json_object();
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(in[i], "r");
        if (!f) {
            json_decref(byid);
            return kg_errf(e, "%s: cannot open: %s", in[i], strerror(errno));
        }
        char *line = NULL;
        size_t lc = 0;
        while (getline(&line, &lc, f) > 0) {
            json_t *o = json_loads(line, 0, NULL);
            const char *id = json_string_value(json_object_get(o, "id"));
            if (id) json_object_set(byid, id, o); /* a later shard's record of the same id wins */
            json_decref(o);
        }
        free(line);
        fclose(f);
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        json_decref(byid);
        return kg_errf(e, "%s: cannot open: %s", out, strerror(errno));
    }
    size_t nk = json_object_size(byid), i = 0;
    const char **keys = calloc(nk ? nk : 1, sizeof *keys);
    const char *key;
    json_t *val;
    json_object_foreach(byid, key, val) keys[i++] = key;
    qsort(keys, nk, sizeof *keys, cmp_str);
    int rc = 0;
    for (i = 0; i < nk && !rc; i++) rc = append(fd, json_object_get(byid, keys[i]));
    free(keys);
    close(fd);
    json_decref(byid);
    if (rc) return kg_errf(e, "%s: write failed", out);
    fprintf(stderr, "kgate audit-merge: %zu records from %d stores into %s\n", nk, n, out);
    return 0;
}
