/* audit.c: `kgate audit` judges a corpus of KernelBench-format pairs (read by corpus.c). Each
 * pair is checked by a child `kgate check --ref` (its own workers, its own crash domain, a time
 * limit), a pool of children builds the candidates that need a build (load_inline) first, on the
 * CPU cores, while the checks take what is ready; every finished pair is appended to the JSONL
 * store (store.c: locked, whole records, fsync), so `--resume` after a kill -9 loses only the
 * pairs that were in flight, and a store that cannot be written stops the audit (exit 4). */
#include "audit/audit.h"
#include "audit/devmem.h"
#include "base/ledger.h"
#include "audit/corpus.h"
#include "audit/store.h"

#include <dirent.h>
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

/* ---- the scheduler --------------------------------------------------------------------------- */

/* Whether the candidate compiles an extension when imported (load_inline, cpp_extension): the
 * build can run ahead on the CPU cores. Triton compiles at first launch, inside the check. */
static bool needs_build(const char *path)
{
    size_t n = 0;
    struct kg_err e;
    char *src = kg_read_file(path, KG_SOURCE_MAX, &n, &e);
    bool b = src && (strstr(src, "load_inline") || strstr(src, "cpp_extension"));
    free(src);
    return b;
}

/* KGATE_AUDIT_LOGS=DIR: each check's standard error is kept as DIR/NAME.err (NAME: the pair id's
 * last component), for reading where a check's time went (with KGATE_TRACE=1, one line per
 * worker call); otherwise it is removed. */
static void keep_err(const char *errpath, const char *id)
{
    const char *dir = getenv("KGATE_AUDIT_LOGS");
    if (dir && *dir) {
        const char *base = strrchr(id, '/');
        char to[KG_DIR_MAX + 3 * KG_PATH_SLACK];
        snprintf(to, sizeof to, "%s/%s.err", dir, base ? base + 1 : id);
        if (rename(errpath, to) == 0) return;
        fprintf(stderr, "kgate audit: cannot keep %s as %s: %s\n", errpath, to, strerror(errno));
    }
    unlink(errpath);
}

/* What a child does: a pair's check (on a check slot), or on a compile slot its build
 * (--compile-only) or its cost estimate (--estimate). */
enum job_kind { JOB_CHECK, JOB_BUILD, JOB_ESTIMATE };

struct job {
    pid_t pid;
    int row;
    double start;
    enum job_kind kind;
    char out[KG_DIR_MAX + 2 * KG_PATH_SLACK]; /* TMPDIR/ROW.json (an estimate: TMPDIR/ROW.est) */
    int slot;                                 /* index into audit_run's gpu names, or -1 */
    uint64_t need;                            /* a check: the host memory it is expected to reserve */
    double dev_need;                          /* ... the device memory it is expected to hold, -1 unknown */
    const char *gpu;                          /* that GPU's CUDA_VISIBLE_DEVICES name, or NULL */
    bool standard_after;                      /* a check: its standard test after its gates (see standard_after) */
};

static pid_t spawn(const char *exe, const struct audit_opts *o, const struct audit_row *r, const char *out,
                   enum job_kind kind, const char *gpu, bool standard_after)
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
    if (out && kind == JOB_ESTIMATE) { /* its one line of JSON */
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) dup2(fd, 1);
    } else if (out) { /* the check's own message (FILE:LINE: why) goes into the record if it has no report */
        char err[KG_DIR_MAX + 3 * KG_PATH_SLACK];
        snprintf(err, sizeof err, "%s.err", out);
        int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) dup2(fd, 2);
    }
    if (gpu) setenv("CUDA_VISIBLE_DEVICES", gpu, 1);
    if (standard_after) setenv("KGATE_STANDARD_BESIDE", "0", 1);
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
    if (kind == JOB_BUILD) {
        argv[a++] = "--compile-only";
    } else if (kind == JOB_ESTIMATE) {
        argv[a++] = "--estimate";
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
        if (o->allow_tf32) {
            argv[a++] = "--allow";
            argv[a++] = "tf32";
        }
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
        char *log = timed_out ? NULL : kg_read_file(errpath, KG_OUTPUT_MAX, &n, &ee);
        if (log && n) {
            for (size_t i = 0; i < n; i++) /* valid UTF-8 for JSON, whatever a compiler printed */
                if ((unsigned char)log[i] >= 0x80 || (log[i] < 0x20 && log[i] != '\n' && log[i] != '\t')) log[i] = '?';
            /* the first line that is not a trace line (KGATE_TRACE): the reason, which
             * met_full_memory reads (a CUDA context that could not be made on a full device is
             * a pair to check again, not one that cannot be loaded) */
            const char *line = log;
            while (!strncmp(line, "kgate: trace:", 13) && strchr(line, '\n')) line = strchr(line, '\n') + 1;
            size_t first = strcspn(line, "\n");
            size_t have = strlen(why);
            snprintf(why + have, sizeof why - have, ": %.*s", (int)(first < 1000 ? first : 1000), line);
            json_object_set_new(rec, "log", json_stringn(log + (n > 4000 ? n - 4000 : 0), n > 4000 ? 4000 : n));
        }
        free(log);
        json_object_set_new(rec, "error", json_string(why));
    }
    keep_err(errpath, r->id);
    /* the pair first: the id of a record torn by a kill is still readable (store.c) */
    json_t *pair = json_pack("{s:s,s:s,s:s,s:o}", "id", r->id, "problem", r->problem, "candidate", r->candidate,
                             "label", r->label ? json_string(r->label) : json_null());
    json_object_update_missing(pair, rec);
    json_decref(rec);
    json_object_set_new(pair, "audit_seconds", json_real(kg_now() - j->start));
    if (j->gpu) json_object_set_new(pair, "gpu", json_string(j->gpu));
    json_object_set_new(pair, "exit", json_integer(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    unlink(j->out);
    return pair;
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
/* A pair's cost estimate: none coming (not asked, or the meta device could not tell), to make,
 * being made, made. */
enum est { EST_NONE, EST_TODO, EST_RUNNING, EST_DONE };
/* How long check slots wait, from the audit's start, for the estimates of the pairs that are
 * ready: at most this, then a pair without one goes by the mean of those made. */
#define EST_WAIT 30.0
/* An estimate's time limit: a description on the meta device takes about a second. */
#define EST_LIMIT 120.0
/* How long the costliest ready pair may be passed over for smaller ones that fit the host's
 * memory before no smaller one starts ahead of it. */
#define PASS_OVER_MAX 60.0

/* An audit in progress: the pairs it does, its slots (o->jobs check slots, then
 * o->compile_jobs compile slots), and the counts the progress line and the summary show. */
struct audit_run {
    const struct audit_opts *o;
    struct audit_rows r;
    int *todo, ntodo, skipped;                   /* indexes into r.v: this shard's pairs not yet in the store */
    struct audit_store st;                       /* locked from open_store to the end */
    char exe[KG_PATH_MAX];                       /* this kgate: every check runs it */
    char tmpdir[KG_DIR_MAX + KG_PATH_SLACK];     /* the checks' reports, until they are in the store */
    char ledger[KG_DIR_MAX + 2 * KG_PATH_SLACK]; /* in tmpdir: the host's memory shared out (base/ledger.h) */
    struct kg_worker zyg;
    struct job *jobs;
    int nslots;
    enum build *bs; /* per todo entry */
    /* per todo entry: its cost estimate, and from it its tensors' bytes at the nominal size (in
     * and out together, and out; -1 not known), by which the checks start, the costliest first */
    enum est *es;
    double *est, *est_out;
    int est_asked, estimated; /* estimates asked for, and made */
    double dev_ratio;         /* device bytes per weighted byte learned (learn_dev_ratio), 0 none */
    int dev_learned;          /* finished checks it was learned from */
    bool trace;               /* KGATE_AUDIT_TRACE=1: each check's start on stderr */
    int passed_over;          /* the costliest ready pair, passed over for smaller ones that fit, */
    double passed_since;      /* since then (-1: none) */
    bool *started;            /* per todo entry: its check has started */
    int *retries;             /* per todo entry: checks of it that met a full device and run again */
    bool *killed;             /* per todo entry: a check of it was killed (the host's OOM killer): it runs
                       again only with half the host's memory free, or alone */
    int finished, viol, nochk, running, compiling;
    double t0;
    double spent[KG_AUDIT_NSPENT]; /* the checks' timing, summed over pairs (kg_audit_spent_add) */
    bool interactive;
    /* --gpus N: the N devices' CUDA_VISIBLE_DEVICES names (the first N of an inherited list, so
     * that CUDA_VISIBLE_DEVICES=4,5,6,7 --gpus 4 runs on 4..7; else 0..N-1), and per device the
     * checks running on it, the checks done and their seconds */
    char (*gpu)[32];
    int *gpu_running, *gpu_done;
    double *gpu_seconds;
    /* device memory, per device (the --gpus devices, else the one the checks see): the largest
     * share of the device's memory in use per check running on it (sampled while checks run),
     * the most in use, the total, and the most checks at once; a check starts on a device only
     * while it has room for one more check of that size (room_for_check) */
    int ndev;
    char (*dev)[32];
    double *dev_per_check;
    uint64_t *dev_peak, *dev_total;
    int *dev_most;
    /* host memory, the same way for all checks at once: in use beyond what was in use before
     * the first check started (host_base), per check running; a real-size check's judge holds
     * its tensors in float64 (tens of GB for a 5e8-element problem), so two of those must not
     * start into a host that holds one (host_room) */
    bool host_known;
    uint64_t host_base, host_peak, host_total;
    double host_per_check;
    int host_most;
    uint64_t check_peak;     /* the most host memory one check was measured holding (its record's */
    double check_peak_bytes; /* memory.host_peak), its tensors' bytes and its id */
    char check_peak_id[128];
    /* device memory its workers said they held (memory.device_peak of the records): the check
     * whose workers held the most together, those, its tensors' bytes and id; the sum over checks
     * of held per tensor byte, and of how many */
    uint64_t dcheck_peak, dcheck_role[3];
    double dcheck_bytes, dratio_sum;
    int dratio_n;
    char dcheck_id[128];
    double learned[9];                   /* what the ledger learned for learned_kinds (read before it goes) */
    int mem_waits;                       /* check starts that waited for room (counted once per wait) */
    int dev_full_waits, dev_full_checks; /* worker calls sent again after a full device, and the */
    double dev_full_s;                   /* checks that did, and the seconds waited (records' timing) */
    int standard_after;                  /* checks started with their standard test after the gates (standard_after) */
    int host_waits;                      /* ... of them, for the host's memory */
    bool mem_held;                       /* the last pass held a start back */
    int failed;                          /* KG_EXIT_INTERNAL once a record could not be written: the audit stops */
    struct kg_err fail;                  /* ... naming the store and the record */
};

static void run_free(struct audit_run *a)
{
    if (a->st.fd >= 0) close(a->st.fd); /* an audit that failed: its error is already said */
    free(a->jobs);
    free(a->bs);
    free(a->started);
    free(a->retries);
    free(a->killed);
    free(a->es);
    free(a->est);
    free(a->est_out);
    free(a->todo);
    free(a->gpu);
    free(a->gpu_running);
    free(a->gpu_done);
    free(a->gpu_seconds);
    free(a->dev);
    free(a->dev_per_check);
    free(a->dev_peak);
    free(a->dev_total);
    free(a->dev_most);
    kg_audit_rows_free(&a->r);
}

/* The store of --resume: a torn last line (an audit killed while writing it) is cut off before
 * anything is appended, so that the next record does not continue it. */
static int cut_tail(struct audit_run *a, const struct audit_log *done, struct kg_err *e)
{
    int rc = kg_audit_store_cut(&a->st, done->tail_off, e);
    if (rc) return rc;
    char pair[300] = " (its pair id is not readable)";
    if (done->tail_id[0]) snprintf(pair, sizeof pair, " (pair %s)", done->tail_id);
    fprintf(stderr, "kgate audit: %s: cut a torn last record of %lld bytes%s\n", a->o->store, done->tail_len, pair);
    return 0;
}

/* The store, opened and locked (a second audit of it refuses here); then this shard's pairs,
 * less those the store holds with --resume (a store that exists is only continued with
 * --resume). */
static int open_store(struct audit_run *a, struct kg_err *e)
{
    const struct audit_opts *o = a->o;
    bool created;
    int rc = kg_audit_store_open(&a->st, o->store, &created, e);
    if (rc) return rc;
    struct audit_log done = {0};
    if (o->resume && !created) rc = kg_audit_log_read(&done, o->store, a->st.fd, "kgate audit", e);
    if (!rc && done.torn) rc = cut_tail(a, &done, e);
    a->todo = calloc((size_t)(a->r.n ? a->r.n : 1), sizeof *a->todo);
    if (!rc && !a->todo) {
        kg_errf(e, "out of memory");
        rc = KG_EXIT_INTERNAL;
    }
    for (int i = 0; !rc && i < a->r.n; i++) {
        if (o->shard_n > 1 && i % o->shard_n != o->shard_i) continue;
        if (done.byid && json_object_get(done.byid, a->r.v[i].id)) {
            a->skipped++;
            continue;
        }
        a->todo[a->ntodo++] = i;
    }
    kg_audit_log_free(&done);
    if (!rc && !o->resume && !created && a->ntodo) {
        kg_errf(e, "%s exists: --resume to continue it, or choose another store", o->store);
        rc = KG_EXIT_USAGE;
    }
    return rc;
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
/* a->gpu from --gpus and CUDA_VISIBLE_DEVICES (see struct audit_run). */
static int gpu_names(struct audit_run *a, struct kg_err *e)
{
    int n = a->o->gpus;
    if (n <= 0) return 0;
    a->gpu = calloc((size_t)n, sizeof *a->gpu);
    a->gpu_running = calloc((size_t)n, sizeof *a->gpu_running);
    a->gpu_done = calloc((size_t)n, sizeof *a->gpu_done);
    a->gpu_seconds = calloc((size_t)n, sizeof *a->gpu_seconds);
    if (!a->gpu || !a->gpu_running || !a->gpu_done || !a->gpu_seconds)
        return kg_errf(e, "out of memory"), KG_EXIT_INTERNAL;
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (!vis || !*vis) {
        for (int i = 0; i < n; i++) snprintf(a->gpu[i], sizeof a->gpu[i], "%d", i);
        return 0;
    }
    const char *p = vis;
    int have = 0;
    while (*p && have < n) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof a->gpu[0]) break;
        memcpy(a->gpu[have], p, len);
        a->gpu[have++][len] = 0;
        p += len;
        if (*p == ',') p++;
    }
    if (have < n) {
        kg_errf(e, "--gpus %d: CUDA_VISIBLE_DEVICES=%s names %d device%s; ask for at most that many", n, vis, have,
                have == 1 ? "" : "s");
        return KG_EXIT_USAGE;
    }
    return 0;
}

/* The devices whose memory admits checks (struct audit_run): the --gpus devices, else the first
 * of CUDA_VISIBLE_DEVICES (or device 0) when its memory can be read at all. */
static int dev_names(struct audit_run *a, struct kg_err *e)
{
    int n = a->o->gpus > 0 ? a->o->gpus : 1;
    a->dev = calloc((size_t)n, sizeof *a->dev);
    a->dev_per_check = calloc((size_t)n, sizeof *a->dev_per_check);
    a->dev_peak = calloc((size_t)n, sizeof *a->dev_peak);
    a->dev_total = calloc((size_t)n, sizeof *a->dev_total);
    a->dev_most = calloc((size_t)n, sizeof *a->dev_most);
    if (!a->dev || !a->dev_per_check || !a->dev_peak || !a->dev_total || !a->dev_most)
        return kg_errf(e, "out of memory"), KG_EXIT_INTERNAL;
    if (a->o->gpus > 0) {
        memcpy(a->dev, a->gpu, (size_t)n * sizeof *a->dev);
    } else {
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        size_t len = vis ? strcspn(vis, ",") : 0;
        if (len >= sizeof a->dev[0]) len = 0;
        if (len)
            memcpy(a->dev[0], vis, len);
        else
            snprintf(a->dev[0], sizeof a->dev[0], "0");
    }
    uint64_t fr, tot;
    a->ndev = 0;
    for (int g = 0; g < n; g++)
        if (kg_devmem(a->dev[g], &fr, &tot) == 0) {
            a->ndev = n; /* one readable device: all are tracked */
            a->dev_total[g] = tot;
        }
    return 0;
}

/* Checks running on device g (every check when --gpus is not given). */
static int dev_running(const struct audit_run *a, int g)
{
    return a->o->gpus > 0 ? a->gpu_running[g] : a->running;
}

/* Device memory of a check beyond its tensors: the CUDA contexts and caching allocators of its
 * torch workers (the candidate's, its spare for determinism's fresh run, the oracle's, the
 * standard test's). */
#define DEV_BASE ((double)(2u << 30))
/* The device's memory goes by a pair's weighted bytes: its input bytes plus DEV_OUT_WEIGHT
 * times its output bytes at the nominal size (the meta device's estimate). Outputs cost more:
 * the oracle keeps each case's outputs on the device in float64 and in working precision, and
 * the candidate's worker and the standard test each keep their own. What the 42 real-size pairs'
 * workers held together at their steadiest (the oracle's and the kernel's held as they last
 * replied, the standard test's peak beside them) was 5.3-16.0 bytes per tensor byte over the
 * checks of 1 GB or more, and 5.3-6.9 per weighted byte (H100, 2026-12-06, stop 47's records):
 * a 3.2 GB triplet loss whose output is a scalar (16 GiB) and a conv1d of the same bytes, two
 * thirds of them output (47 GiB), were both expected at 58.8 GiB by one ratio per tensor byte. */
#define DEV_OUT_WEIGHT 3.0
/* Device bytes per weighted byte before the audit has learned any (below): 1.25 x 6.9, the most
 * a real-size check's workers held on the H100 (l2_1's conv2d, 3.4 GiB weighted: 23.5 GiB). */
#define DEV_PER_BYTE 8.6
/* Over what was learned: the steadiest memory leaves out the oracle's peak while it evaluates
 * (11 GiB for the triplet loss, which then holds nothing) and a cuDNN workspace's */
#define DEV_MARGIN 1.25
/* Learned only from checks of this many weighted bytes: below, DEV_BASE's error would be the
 * ratio */
#define DEV_LEARN_MIN ((double)(1u << 30))

/* Of that, per weighted byte, the standard test's: KernelBench's inputs and the two outputs of a
 * trial, on the device while the gates run (its peak was 1.8-2.3 per weighted byte on the H100) */
#define DEV_STANDARD_PER_BYTE 2.0

/* The largest device's total memory (0 when none is known). */
static double dev_largest(const struct audit_run *a)
{
    double most = 0;
    for (int g = 0; g < a->ndev && g < 64; g++)
        if ((double)a->dev_total[g] > most) most = (double)a->dev_total[g];
    return most;
}

/* Whether the check of pair i runs the standard test after its gates, not beside them
 * (KGATE_STANDARD_BESIDE=0 in its environment): when it met a full device or host once (the
 * trials' inputs and outputs beside the gates' were what did not fit: on an H100's 80 GB,
 * KernelBench's 4.3 GB max pool did not), or when its expected device memory, need, with
 * them is more than the largest device holds. It then holds DEV_STANDARD_PER_BYTE less per
 * byte, and waits the trials' time at its end. */
static bool standard_after(const struct audit_run *a, int i, double need)
{
    const double total = dev_largest(a);
    return a->retries[i] > 0 || (need >= 0 && total > 0 && need > total);
}

/* Pair i's weighted bytes (DEV_OUT_WEIGHT); mean: the mean estimate, for a pair without one,
 * taken as half output. */
static double dev_bytes(const struct audit_run *a, int i, double mean)
{
    if (a->est[i] < 0) return mean * (1 + DEV_OUT_WEIGHT) / 2;
    const double out = a->est_out[i] > 0 ? a->est_out[i] : 0;
    return a->est[i] - out + DEV_OUT_WEIGHT * out;
}

/* The device memory the check of pair i is expected to hold: DEV_BASE plus DEV_MARGIN times
 * the device bytes per weighted byte learned so far (learn_dev_ratio), else DEV_PER_BYTE, per
 * weighted byte (KGATE_DEV_PER_BYTE fixes the ratio: for measuring, and tests), less the
 * standard test's share where it runs after the gates (standard_after; *after says so, when not
 * NULL); -1 without estimates (the audit then admits by the largest share per check seen,
 * check_need). */
static double dev_need_row(const struct audit_run *a, int i, double mean, bool *after)
{
    if (after) *after = a->retries[i] > 0;
    if (!a->est_asked || (a->est[i] < 0 && !(mean > 0))) return -1;
    const char *f = getenv("KGATE_DEV_PER_BYTE");
    double r = f && atof(f) > 0 ? atof(f) : a->dev_ratio > 0 ? DEV_MARGIN * a->dev_ratio : DEV_PER_BYTE;
    const double bytes = dev_bytes(a, i, mean), need = DEV_BASE + r * bytes;
    if (!standard_after(a, i, need)) return need;
    if (after) *after = true;
    return r > 2 * DEV_STANDARD_PER_BYTE ? need - DEV_STANDARD_PER_BYTE * bytes : need;
}

/* The device memory the workers of a finished check (of pair row, its record's memory object
 * m) held at their steadiest, per weighted byte, raises what the audit expects of the checks
 * after it: the oracle's and the kernel's memory as they last replied (the oracle's resident
 * float64 outputs, the candidate's kept inputs and outputs) and the standard test's peak (its
 * trials run beside the gates). Peaks are not summed: the oracle's while it evaluates and the
 * limits gate's case past 2^31 elements (50 GiB for a 0.13 GB gemm's candidate on the H100, one
 * check at a time under the device's lock, given back before the reply) come and go. Learned
 * from checks of DEV_LEARN_MIN weighted bytes or more (KGATE_DEV_LEARN_MIN: for tests, whose
 * pairs are tiny) that were sized. The whole device sampled while checks ran taught this before
 * (stop 47): its most per tensor byte counted every check's transient peaks at once and kept
 * the big pairs one at a time. */
static void learn_dev_ratio(struct audit_run *a, int row, json_t *m)
{
    if (!a->est_asked || a->est[row] < 0) return;
    const char *lm = getenv("KGATE_DEV_LEARN_MIN");
    const double least = lm && atof(lm) > 0 ? atof(lm) : DEV_LEARN_MIN, bytes = dev_bytes(a, row, 0);
    json_t *held = json_object_get(m, "device_held"), *peak = json_object_get(m, "device_peak");
    const double sum = json_number_value(json_object_get(held, "oracle")) +
                       json_number_value(json_object_get(held, "kernel")) +
                       json_number_value(json_object_get(peak, "standard"));
    if (bytes < least || !(sum > 0)) return;
    a->dev_learned++;
    if (sum / bytes > a->dev_ratio) a->dev_ratio = sum / bytes;
}

/* Memory in use on each device while checks run on it, per check: the size a check is taken to
 * need where the pairs have no estimates (other processes' memory counts in, which errs toward
 * waiting). */
static void sample_devices(struct audit_run *a)
{
    for (int g = 0; g < a->ndev; g++) {
        int n = dev_running(a, g);
        uint64_t fr, tot;
        if (n <= 0 || kg_devmem(a->dev[g], &fr, &tot)) continue;
        uint64_t used = tot > fr ? tot - fr : 0;
        double per = (double)used / n;
        if (per > a->dev_per_check[g]) a->dev_per_check[g] = per;
        if (used > a->dev_peak[g]) a->dev_peak[g] = used;
        a->dev_total[g] = tot;
        if (n > a->dev_most[g]) a->dev_most[g] = n;
    }
}

/* The host's memory in use by checks (beyond host_base), per check running. */
static void sample_host(struct audit_run *a)
{
    uint64_t fr, tot;
    if (!a->host_known || a->running <= 0 || kg_hostmem(&fr, &tot)) return;
    uint64_t used = tot > fr ? tot - fr : 0, mine = used > a->host_base ? used - a->host_base : 0;
    if ((double)mine / a->running > a->host_per_check) a->host_per_check = (double)mine / a->running;
    if (mine > a->host_peak) a->host_peak = mine;
    a->host_total = tot;
    if (a->running > a->host_most) a->host_most = a->running;
}

/* Whether the host has room for one more check: always with none running or where its memory
 * is not known; else while what it can still allocate, less what this pass has given out
 * (*left, -1 before the first query), holds 1.25x the largest per-check share seen, and 1/64 of
 * the host at least. */
static double host_need(const struct audit_run *a)
{
    double need = 1.25 * a->host_per_check;
    return need < (double)a->host_total / 64 ? (double)a->host_total / 64 : need;
}

static bool host_room(struct audit_run *a, double *left)
{
    if (!a->host_known || a->running == 0) return true;
    uint64_t fr, tot;
    if (*left < 0) {
        if (kg_hostmem(&fr, &tot)) return true;
        *left = (double)fr;
        a->host_total = tot;
    }
    return *left >= host_need(a);
}

/* Whether a check that was killed once may start again: alone, or with half the host's memory
 * still free after what this pass has given out (host_left, from host_room). */
static bool host_half_free(const struct audit_run *a, double host_left)
{
    return a->running == 0 || !a->host_known || host_left < 0 || host_left >= (double)a->host_total / 2;
}

/* Whether one more check may start on device g: always on an idle device or one whose memory
 * is not known; else while its free memory, less what this pass has already given out (*left,
 * -1 before the first query), holds 1.25x the largest per-check share seen, and 1/32 of the
 * device at least. Two real-size checks of huge problems then never start into a device that
 * holds only one. */
static double check_need(const struct audit_run *a, int g)
{
    double need = 1.25 * a->dev_per_check[g];
    return need < (double)a->dev_total[g] / 32 ? (double)a->dev_total[g] / 32 : need;
}

/* need: the check's own (dev_need_row), or -1: the largest share seen (check_need). With its own,
 * the room is also at most the device's total less what the checks running there are expected
 * to hold (a check just started has not allocated yet). */
static bool room_for_check(struct audit_run *a, int g, double *left, double need)
{
    if (g < 0 || g >= a->ndev || dev_running(a, g) == 0) return true;
    uint64_t fr, tot;
    if (*left < 0) {
        if (kg_devmem(a->dev[g], &fr, &tot)) return true;
        *left = (double)fr;
        a->dev_total[g] = tot;
        double held = 0;
        for (int sl = 0; sl < a->o->jobs; sl++) {
            const struct job *j = &a->jobs[sl];
            if (j->pid > 0 && j->kind == JOB_CHECK && j->dev_need >= 0 && (a->o->gpus <= 0 || j->slot == g))
                held += j->dev_need;
        }
        if (held > 0 && (double)tot - held < *left) *left = (double)tot - held;
    }
    return *left >= (need >= 0 ? need : check_need(a, g));
}

/* A check placed on device g: its share of the room this pass saw (left[]: per device). */
static void take_room(struct audit_run *a, int g, double left[64], double need)
{
    if (g >= 0 && g < a->ndev && g < 64 && left[g] >= 0) left[g] -= need >= 0 ? need : check_need(a, g);
}

/* Where a check expected to hold need (-1: not known) goes: of the GPUs with room for it
 * (room_for_check), the one with the fewest checks running (the lowest index of those tied);
 * without --gpus 0, the one device; -2 when no device has room. left[]: room_for_check's, per
 * device, for this pass. */
static int device_with_room(struct audit_run *a, double left[64], double need)
{
    if (a->o->gpus <= 0) return room_for_check(a, 0, &left[0], need) ? 0 : -2;
    int best = -2;
    for (int g = 0; g < a->o->gpus && g < 64; g++)
        if ((best < 0 || a->gpu_running[g] < a->gpu_running[best]) && room_for_check(a, g, &left[g], need)) best = g;
    return best;
}

/* The report folders (cache/audit-PID) of audits that were killed (-9: no clean-up) with their
 * checks' files, so that they do not pile up in the cache: those whose PID is gone. */
static void remove_stale_tmpdirs(const char *cache)
{
    DIR *d = opendir(cache);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        if (strncmp(de->d_name, "audit-", 6)) continue;
        long pid = strtol(de->d_name + 6, &end, 10);
        if (*end || pid <= 0 || pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char dir[KG_DIR_MAX + KG_PATH_SLACK];
        snprintf(dir, sizeof dir, "%s/%s", cache, de->d_name);
        DIR *sub = opendir(dir);
        if (!sub) continue;
        struct dirent *f;
        while ((f = readdir(sub))) {
            if (f->d_name[0] == '.') continue;
            char path[sizeof dir + 300];
            snprintf(path, sizeof path, "%s/%s", dir, f->d_name);
            unlink(path);
        }
        closedir(sub);
        rmdir(dir);
    }
    closedir(d);
}

static int prepare(struct audit_run *a, const char *cache, struct kg_err *e)
{
    const struct audit_opts *o = a->o;
    int rc = gpu_names(a, e);
    if (!rc) rc = dev_names(a, e);
    if (rc) return rc;
    uint64_t fr, tot;
    a->host_known = kg_hostmem(&fr, &tot) == 0;
    if (a->host_known) a->host_base = tot > fr ? tot - fr : 0;
    ssize_t el = readlink("/proc/self/exe", a->exe, sizeof a->exe - 1);
    a->exe[el > 0 ? el : 0] = 0;
    remove_stale_tmpdirs(cache);
    snprintf(a->tmpdir, sizeof a->tmpdir, "%s/audit-%d", cache, (int)getpid());
    kg_mkdirs(a->tmpdir);
    if (a->host_known) { /* the checks share 90% of the host's free memory (base/ledger.h) */
        struct kg_err le;
        snprintf(a->ledger, sizeof a->ledger, "%s/host-ledger", a->tmpdir);
        if (kg_ledger_create(a->ledger, fr / 10 * 9, &le) == 0)
            setenv("KGATE_HOST_LEDGER", a->ledger, 1);
        else
            a->ledger[0] = 0;
    }
    char on[32] = "";
    if (o->gpus) snprintf(on, sizeof on, " on %d GPU%s", o->gpus, o->gpus > 1 ? "s" : "");
    fprintf(stderr,
            "kgate audit: %d pairs (%d in the store already, shard %d/%d), %d checking at once%s, %d compiling ahead\n",
            a->ntodo, a->skipped, o->shard_i, o->shard_n > 1 ? o->shard_n : 1, o->jobs, on, o->compile_jobs);
    signal(SIGPIPE, SIG_IGN);
    start_zygote(a, cache);
    share_threads(o->jobs);
    if (!getenv("KGATE_CHECKS_AT_ONCE")) { /* each check's memory budgets are a share of the host */
        char n[24];
        snprintf(n, sizeof n, "%d", o->jobs > 0 ? o->jobs : 1);
        setenv("KGATE_CHECKS_AT_ONCE", n, 1);
    }
    a->nslots = o->jobs + o->compile_jobs;
    a->jobs = calloc((size_t)a->nslots, sizeof *a->jobs);
    a->bs = calloc((size_t)(a->ntodo ? a->ntodo : 1), sizeof *a->bs);
    a->started = calloc((size_t)(a->ntodo ? a->ntodo : 1), sizeof *a->started);
    a->retries = calloc((size_t)(a->ntodo ? a->ntodo : 1), sizeof *a->retries);
    a->killed = calloc((size_t)(a->ntodo ? a->ntodo : 1), sizeof *a->killed);
    a->es = calloc((size_t)(a->ntodo ? a->ntodo : 1), sizeof *a->es);
    a->est = calloc((size_t)(a->ntodo ? a->ntodo : 1), sizeof *a->est);
    a->est_out = calloc((size_t)(a->ntodo ? a->ntodo : 1), sizeof *a->est_out);
    if ((a->nslots && !a->jobs) || !a->bs || !a->started || !a->retries || !a->killed || !a->es || !a->est ||
        !a->est_out) {
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    for (int i = 0; i < a->ntodo && o->compile_jobs > 0; i++)
        a->bs[i] = needs_build(a->r.v[a->todo[i]].candidate) ? TO_BUILD : NO_BUILD;
    /* costs, where the order can matter: more pairs than check slots, and compile slots to
     * estimate them on (KGATE_AUDIT_ESTIMATE=0: in the corpus's order, as before) */
    const char *est = getenv("KGATE_AUDIT_ESTIMATE");
    bool estimate = o->compile_jobs > 0 && a->ntodo > o->jobs && !(est && !strcmp(est, "0"));
    a->est_asked = estimate ? a->ntodo : 0;
    for (int i = 0; i < a->ntodo; i++) {
        a->es[i] = estimate ? EST_TODO : EST_NONE;
        a->est[i] = a->est_out[i] = -1;
    }
    a->passed_over = -1;
    a->passed_since = -1;
    const char *tr = getenv("KGATE_AUDIT_TRACE");
    a->trace = tr && *tr && strcmp(tr, "0");
    return 0;
}

/* ---- the scheduler loop ------------------------------------------------------------------------ */

/* Compile slots: first every pair's cost estimate (about a second each, so that the checks can
 * start the costliest first), then the candidates with a build step (load_inline: ~1 minute of
 * compiler each), the costliest first; the check slots meanwhile take whatever is ready: a
 * candidate without a build, or one whose build is done. A check never waits on a build while
 * other work is ready, and the audit does not end on a long tail of builds. Past EST_WAIT (a
 * corpus of thousands: its estimates take minutes) the builds come first, which the checks wait
 * for, and the first compile slot (first) goes on with the estimates left. */
static int next_compile(const struct audit_run *a, bool first, enum job_kind *kind)
{
    int est = -1, best = -1;
    for (int i = 0; i < a->ntodo && est < 0; i++)
        if (a->es[i] == EST_TODO && !a->started[i]) est = i;
    for (int i = 0; i < a->ntodo; i++)
        if (a->bs[i] == TO_BUILD && !a->started[i] && (best < 0 || a->est[i] > a->est[best])) best = i;
    const bool builds_first = kg_now() - a->t0 >= EST_WAIT && !first;
    *kind = est >= 0 && (best < 0 || !builds_first) ? JOB_ESTIMATE : JOB_BUILD;
    return *kind == JOB_ESTIMATE ? est : best;
}

/* The mean of the estimates made (0 when none was): the cost of a pair without one. */
static double mean_cost(const struct audit_run *a)
{
    double sum = 0;
    int n = 0;
    for (int k = 0; k < a->ntodo; k++)
        if (a->est[k] >= 0) sum += a->est[k], n++;
    return n ? sum / n : 0;
}

/* The host memory the check of pair i is expected to reserve (base/ledger.h's kg_ledger_need, from
 * what the audit's checks have learned so far; a pair without an estimate at the mean, mean, as
 * an input-heavy one); 0 without estimates. */
static uint64_t check_host_need(const struct audit_run *a, int i, double mean)
{
    if (a->est[i] >= 0) return kg_ledger_need(a->ledger, "torch", a->est[i], a->est_out[i], 0);
    return mean > 0 ? kg_ledger_need(a->ledger, "torch", mean, 0, 0) : 0;
}

/* What the ledger has free for one more check: its budget less the live reservations, and less,
 * for each check started but not yet in it (it reserves once its problem is described), what
 * that one is expected to reserve; -1 without a ledger (room for anything). */
static double ledger_room(const struct audit_run *a)
{
    if (!a->ledger[0]) return -1;
    enum { MAX = 256 };
    long pid[MAX];
    uint64_t bytes[MAX], budget;
    int n = kg_ledger_live(a->ledger, &budget, pid, bytes, MAX);
    if (n < 0) return -1;
    double room = (double)budget;
    for (int i = 0; i < n; i++) room -= (double)bytes[i];
    for (int sl = 0; sl < a->o->jobs; sl++) {
        const struct job *j = &a->jobs[sl];
        if (j->pid <= 0 || j->kind != JOB_CHECK) continue;
        bool in = false;
        for (int i = 0; i < n && !in; i++) in = pid[i] == (long)j->pid;
        if (!in) room -= (double)j->need;
    }
    return room;
}

/* The next pair for a check slot: of the ready pairs not started, the costliest (tensor bytes at
 * the nominal size: at real sizes the larger pairs take minutes, and started last they were the
 * audit's tail) whose expected reservation fits what the ledger has free (*room, ledger_room's,
 * -2 before this pass asked; a check that would only wait in its slot leaves it to a smaller
 * one), unless the costliest has been passed over for PASS_OVER_MAX already. While estimates
 * are still coming, at most EST_WAIT from the start, nothing starts.
 * *held: a pair is ready but kept back for memory. */
static int next_check(struct audit_run *a, double *room, double left[64], bool *held, bool *host_held)
{
    if (kg_now() - a->t0 < EST_WAIT) /* the order needs every ready pair's estimate */
        for (int i = 0; i < a->ntodo; i++)
            if (!a->started[i] && (a->es[i] == EST_TODO || a->es[i] == EST_RUNNING)) return -1;
    const double mean = mean_cost(a);
#define COST(i) (a->est[i] >= 0 ? a->est[i] : mean)
    int best = -1, fit = -1;
    bool best_host = true; /* the costliest fits the host */
    for (int i = 0; i < a->ntodo; i++) {
        if (a->started[i] || a->retries[i] || !(a->bs[i] == NO_BUILD || a->bs[i] == BUILT)) continue;
        const double c = COST(i);
        const bool costliest = best < 0 || c > COST(best);
        if (costliest) best = i;
        if (!costliest && fit >= 0 && c <= COST(fit)) continue;
        if (*room == -2) *room = ledger_room(a);
        const bool host = *room < 0 || a->running == 0 || (double)check_host_need(a, i, mean) <= *room;
        if (costliest) best_host = host;
        if ((fit < 0 || c > COST(fit)) && host && device_with_room(a, left, dev_need_row(a, i, mean, NULL)) != -2)
            fit = i;
    }
#undef COST
    if (best >= 0 && fit != best) {
        if (a->passed_over != best) a->passed_over = best, a->passed_since = kg_now();
        if (kg_now() - a->passed_since > PASS_OVER_MAX) fit = -1; /* the large one's turn */
        *held = true;
        if (!best_host) *host_held = true;
    }
    if (fit >= 0) return fit;
    if (best >= 0) return -1;
    /* a check that met a full device goes again once the others have started, and with at most
     * half the check slots busy, so that what filled the device is unlikely to be back */
    if (a->running > a->o->jobs / 2) return -1;
    for (int i = 0; i < a->ntodo; i++)
        if (!a->started[i] && a->retries[i]) return i;
    return -1;
}

/* A compile slot's next job: an estimate or a build. */
static void start_compile(struct audit_run *a, struct job *j)
{
    enum job_kind kind;
    int row = next_compile(a, j == &a->jobs[a->o->jobs], &kind);
    if (row < 0) return;
    j->row = row;
    j->kind = kind;
    j->start = kg_now();
    j->slot = -1;
    j->gpu = NULL;
    if (kind == JOB_ESTIMATE) {
        a->es[row] = EST_RUNNING;
        snprintf(j->out, sizeof j->out, "%s/%d.est", a->tmpdir, row);
    } else
        a->bs[row] = BUILDING;
    j->pid = spawn(a->exe, a->o, &a->r.v[a->todo[row]], kind == JOB_ESTIMATE ? j->out : NULL, kind, NULL, false);
    a->compiling++;
}

/* Starts checks on free check slots, estimates and builds on free compile slots. */
static void start_jobs(struct audit_run *a)
{
    const struct audit_opts *o = a->o;
    double left[64], host_left = -1, room = -2;
    for (int g = 0; g < 64; g++) left[g] = -1;
    bool held = false, host_held = false;
    for (int sl = 0; sl < a->nslots; sl++) {
        struct job *j = &a->jobs[sl];
        if (j->pid > 0) continue;
        if (sl >= o->jobs) {
            start_compile(a, j);
            continue;
        }
        int row = next_check(a, &room, left, &held, &host_held);
        if (row < 0) continue;
        if (!host_room(a, &host_left) || (a->killed[row] && !host_half_free(a, host_left))) {
            held = host_held = true;
            continue;
        }
        bool after;
        const double dev_need = dev_need_row(a, row, mean_cost(a), &after);
        int g = device_with_room(a, left, dev_need);
        if (g == -2) {
            held = true;
            continue;
        }
        take_room(a, g, left, dev_need);
        if (host_left >= 0) host_left -= host_need(a);
        j->row = row;
        j->kind = JOB_CHECK;
        j->start = kg_now();
        j->need = check_host_need(a, row, mean_cost(a));
        j->dev_need = dev_need;
        j->standard_after = after;
        if (after) a->standard_after++;
        if (room >= 0) room -= (double)j->need;
        a->started[row] = true;
        if (a->passed_over == row) a->passed_over = -1;
        j->slot = o->gpus ? g : -1;
        j->gpu = j->slot >= 0 ? a->gpu[j->slot] : NULL;
        if (j->slot >= 0) a->gpu_running[j->slot]++;
        snprintf(j->out, sizeof j->out, "%s/%d.json", a->tmpdir, j->row);
        if (a->trace) /* KGATE_AUDIT_TRACE: each start, with what it is expected to hold */
            fprintf(
                stderr,
                "kgate audit: %.1f s: start %s (%.0f MB of tensors%s; expected: host %.2f GiB, device %.2f GiB%s)\n",
                kg_now() - a->t0, a->r.v[a->todo[row]].id, a->est[row] / 1e6, a->est[row] < 0 ? ", not sized" : "",
                (double)j->need / 1073741824.0, j->dev_need / 1073741824.0,
                after ? "; the standard test after the gates" : "");
        j->pid = spawn(a->exe, o, &a->r.v[a->todo[j->row]], j->out, JOB_CHECK, j->gpu, after);
        a->running++;
    }
    if (held && !a->mem_held) a->mem_waits++;
    if (host_held && !a->mem_held) a->host_waits++;
    a->mem_held = held;
}

static bool says(json_t *o, const char *key, const char *what)
{
    const char *t = json_string_value(json_object_get(o, key));
    return t && strstr(t, what);
}

/* Whether a record's trouble was memory rather than the kernel, as its words say (ANY_OOM: the
 * device's or the host's; HOST_OOM: the host's, its OOM killer having taken a worker): the check
 * could not load the pair, the standard test's worker could not start, or a gate errored, for
 * that. Checks share the device and the host (--jobs), and a big case of another check (a cuDNN
 * convolution past 2^31 elements takes what workspace it finds) can fill either for a moment. */
#define ANY_OOM  "out of memory"
#define HOST_OOM "the host ran out of memory"
static bool met_full_memory(json_t *rec, const char *what)
{
    if (says(rec, "error", what)) return true;
    json_t *b = json_object_get(rec, "baseline");
    const char *bk = json_string_value(json_object_get(b, "kernelbench"));
    if (bk && !strcmp(bk, "error") && says(b, "detail", what)) return true;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(rec, "gates"), i, g)
    {
        const char *st = json_string_value(json_object_get(g, "status"));
        if (st && !strcmp(st, "error") && says(g, "summary", what)) return true;
    }
    return false;
}

/* The device memory a finished check's workers held (its record's memory object m), for the
 * summary. */
static void note_device_peak(struct audit_run *a, json_t *m, const char *id)
{
    json_t *d = json_object_get(m, "device_peak");
    if (!d) return;
    static const char *const role[3] = {"oracle", "kernel", "standard"};
    uint64_t v[3], sum = 0;
    for (int r = 0; r < 3; r++) sum += v[r] = (uint64_t)json_integer_value(json_object_get(d, role[r]));
    double bytes = json_number_value(json_object_get(m, "tensor_bytes"));
    if (bytes >= DEV_LEARN_MIN) {
        a->dratio_sum += (double)sum / bytes;
        a->dratio_n++;
    }
    if (sum <= a->dcheck_peak) return;
    a->dcheck_peak = sum;
    memcpy(a->dcheck_role, v, sizeof v);
    a->dcheck_bytes = bytes;
    kg_strlcpy(a->dcheck_id, id, sizeof a->dcheck_id);
}

/* Checks of a pair that met a full device, at most: then its record stands as it is (a
 * kernel that needs more memory than the device has fails every time) */
#define OOM_RETRIES 2

/* A finished (or killed) check's record, counted and appended to the store; or, when it met a
 * full device or host, its pair queued again (met_full_memory). A record that cannot be written stops
 * the audit: a->failed, and a->fail says which. */
static bool store_record(struct audit_run *a, const struct job *j, int status, bool timed_out)
{
    if (j->slot >= 0) {
        a->gpu_running[j->slot]--;
        a->gpu_done[j->slot]++;
        a->gpu_seconds[j->slot] += kg_now() - j->start;
    }
    json_t *rec = finish(j, &a->r.v[a->todo[j->row]], status, timed_out, a->o->limit);
    json_t *tm = json_object_get(rec, "timing"); /* waits inside the check for a full device */
    const int dw = (int)json_integer_value(json_object_get(tm, "device_waits"));
    if (dw > 0) {
        a->dev_full_waits += dw;
        a->dev_full_s += json_number_value(json_object_get(tm, "device_wait"));
        a->dev_full_checks++;
    }
    /* SIGKILL that was not ours (no limit passed): the kernel's out-of-memory killer, which picks
     * the largest process when the checks together fill the host */
    bool killed = !timed_out && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !json_object_get(rec, "gates") &&
                  a->retries[j->row] < OOM_RETRIES;
    if (killed) {
        a->retries[j->row]++;
        a->started[j->row] = false;
        a->killed[j->row] = true;
        fprintf(stderr,
                "kgate audit: %s: its check was killed (SIGKILL: the host's memory ran out?); it runs again later, "
                "with half the host's memory free\n",
                a->r.v[a->todo[j->row]].id);
        json_decref(rec);
        return false;
    }
    if (!timed_out && a->retries[j->row] < OOM_RETRIES && met_full_memory(rec, ANY_OOM)) {
        bool host = met_full_memory(rec, HOST_OOM);
        a->retries[j->row]++;
        a->started[j->row] = false;
        a->killed[j->row] |= host;
        fprintf(stderr, "kgate audit: %s: the %s ran out of memory during its check; it runs again later%s\n",
                a->r.v[a->todo[j->row]].id, host ? "host" : "device", host ? ", with half the host's memory free" : "");
        json_decref(rec);
        return false;
    }
    if (a->retries[j->row]) json_object_set_new(rec, "oom_retries", json_integer(a->retries[j->row]));
    a->failed = kg_audit_store_append(&a->st, rec, true, &a->fail);
    if (!a->failed) {
        a->viol += violated(rec);
        a->nochk += unchecked(rec);
        kg_audit_spent_add(a->spent, rec);
        a->finished++;
        json_t *m = json_object_get(rec, "memory");
        uint64_t held = (uint64_t)json_integer_value(json_object_get(m, "host_peak"));
        if (held > a->check_peak) {
            a->check_peak = held;
            a->check_peak_bytes = json_number_value(json_object_get(m, "tensor_bytes"));
            kg_strlcpy(a->check_peak_id, a->r.v[a->todo[j->row]].id, sizeof a->check_peak_id);
        }
        note_device_peak(a, m, a->r.v[a->todo[j->row]].id);
        learn_dev_ratio(a, j->row, m);
    }
    json_decref(rec);
    return true;
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
        if (j->pid > 0 && now - j->start > (j->kind == JOB_ESTIMATE ? EST_LIMIT : o->limit)) {
            kill_job(j, NULL);
            if (j->kind == JOB_ESTIMATE)
                a->es[j->row] = EST_NONE;
            else
                a->bs[j->row] = BUILT;
            j->pid = 0;
            a->compiling--;
        }
    }
    for (int sl = 0; sl < o->jobs && !a->failed; sl++) {
        struct job *j = &a->jobs[sl];
        if (j->pid > 0 && j->kind == JOB_CHECK && now - j->start > o->limit) {
            int status;
            kill_job(j, &status);
            j->pid = 0;
            a->running--;
            store_record(a, j, status, true);
        }
    }
}

/* An estimate that ended: its pair's bytes from its line of JSON, or none (the meta device could
 * not tell: the pair goes by the mean). */
static void estimated(struct audit_run *a, const struct job *j, int status)
{
    json_t *doc = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? json_load_file(j->out, 0, NULL) : NULL;
    json_t *in = json_object_get(doc, "in_bytes"), *out = json_object_get(doc, "out_bytes");
    if (json_is_number(in) && json_is_number(out)) {
        a->est_out[j->row] = json_number_value(out);
        a->est[j->row] = json_number_value(in) + a->est_out[j->row];
        a->es[j->row] = EST_DONE;
        a->estimated++;
    } else
        a->es[j->row] = EST_NONE;
    json_decref(doc);
    unlink(j->out);
}

/* A child that ended: an estimate, a build (built, or failed: the check reports a build error itself) frees
 * its pair for a check; a check's report goes into the store. */
static void reaped(struct audit_run *a, pid_t pid, int status)
{
    for (int sl = 0; sl < a->nslots; sl++) {
        struct job *j = &a->jobs[sl];
        if (j->pid != pid) continue;
        j->pid = 0;
        if (j->kind == JOB_ESTIMATE) {
            estimated(a, j, status);
            a->compiling--;
            return;
        }
        if (j->kind == JOB_BUILD) {
            a->bs[j->row] = BUILT;
            a->compiling--;
            return;
        }
        a->running--;
        if (store_record(a, j, status, false) && !a->interactive && !a->failed) {
            /* a log's progress line: the bar's rate and ETA, one line per finished pair */
            double el = kg_now() - a->t0, eta = el / a->finished * (a->ntodo - a->finished);
            fprintf(stderr, "[%d/%d] %.0f/h, ETA %d:%02d  %s\n", a->finished, a->ntodo,
                    el > 0 ? a->finished / el * 3600 : 0, (int)(eta / 60), (int)eta % 60, a->r.v[a->todo[j->row]].id);
        }
        return;
    }
}

/* Every child still running, killed and reaped, and the reports of the checks among them
 * removed: compile-ahead builds no check needs any more, or, when the audit stops on a store
 * that cannot be written, the checks in flight. Their count. */
static int stop_children(struct audit_run *a)
{
    int checks = 0;
    for (int sl = 0; sl < a->nslots; sl++) {
        struct job *j = &a->jobs[sl];
        if (j->pid <= 0) continue;
        kill_job(j, NULL);
        j->pid = 0;
        if (j->kind != JOB_CHECK) continue;
        checks++;
        char err[sizeof j->out + 8];
        snprintf(err, sizeof err, "%s.err", j->out);
        unlink(j->out);
        unlink(err);
    }
    a->running = a->compiling = 0;
    return checks;
}

/* Runs the checks until every pair is in the store, or one cannot be written: then the checks
 * in flight are stopped and the audit fails (KG_EXIT_INTERNAL), e naming the store and the
 * record; nothing claims success. */
static int schedule(struct audit_run *a, struct kg_err *e)
{
    a->t0 = kg_now();
    a->interactive = isatty(2);
    while (a->finished < a->ntodo && !a->failed) {
        start_jobs(a);
        if (a->interactive) progress(a->finished, a->ntodo, a->viol, a->running, a->compiling, a->t0);
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid > 0) {
            reaped(a, pid, status);
            continue;
        }
        enforce_limit(a);
        sample_devices(a);
        sample_host(a);
        usleep(50000);
    }
    int stopped = stop_children(a);
    if (!a->failed) return 0;
    if (a->interactive) fputc('\n', stderr);
    kg_errf(e,
            "%s; the audit stopped there: %d of %d pairs are in the store, %d check%s in flight stopped "
            "(kgate audit --resume continues once the store can be written)",
            a->fail.msg, a->finished, a->ntodo, stopped, stopped == 1 ? "" : "s");
    return a->failed;
}

/* the ledger's kinds (engine/run.c's host_class): each runner, then its two classes */
static const char *const learned_kinds[9] = {"host",    "host/in", "host/io",  "cuda",    "cuda/in",
                                             "cuda/io", "torch",   "torch/in", "torch/io"};

static void summary(const struct audit_run *a)
{
    double el_s = kg_now() - a->t0;
    if (a->interactive) progress(a->finished, a->ntodo, a->viol, 0, 0, a->t0);
    fprintf(stderr, "\nkgate audit: %d pairs in %.1f s (%.0f per hour), %d with a violation", a->finished, el_s,
            el_s > 0 ? a->finished / el_s * 3600 : 0, a->viol);
    if (a->nochk) fprintf(stderr, ", %d not checked (the record's \"error\" says why)", a->nochk);
    fprintf(stderr, "; store %s\n", a->o->store);
    kg_audit_spent_print(stderr, a->spent, a->finished, el_s, el_s * a->o->jobs, false);
    for (int g = 0; g < a->ndev; g++)
        if (a->dev_total[g])
            fprintf(stderr,
                    "kgate audit: device %s memory: at most %.1f of %.1f GiB in use, %.1f GiB per check at most, "
                    "%d check%s at once at most\n",
                    a->dev[g], a->dev_peak[g] / 1073741824.0, a->dev_total[g] / 1073741824.0,
                    a->dev_per_check[g] / 1073741824.0, a->dev_most[g], a->dev_most[g] == 1 ? "" : "s");
    if (a->dev_ratio > 0)
        fprintf(stderr,
                "kgate audit: device memory learned from %d check%s' workers: %.1f bytes per weighted byte (input "
                "bytes plus %.0f times output bytes; a check was then expected to hold 2 GiB plus %.2f times that "
                "per weighted byte)\n",
                a->dev_learned, a->dev_learned == 1 ? "" : "s", a->dev_ratio, DEV_OUT_WEIGHT, DEV_MARGIN);
    if (a->dcheck_peak) {
        fprintf(stderr,
                "kgate audit: device memory of one check's workers: at most %.1f GiB (%s, %.2f GB of tensors: the "
                "oracle's %.1f, the kernel's %.1f, the standard test's %.1f GiB)",
                a->dcheck_peak / 1073741824.0, a->dcheck_id, a->dcheck_bytes / 1e9, a->dcheck_role[0] / 1073741824.0,
                a->dcheck_role[1] / 1073741824.0, a->dcheck_role[2] / 1073741824.0);
        if (a->dratio_n)
            fprintf(stderr, "; %.1f bytes per tensor byte on average over %d checks of 1 GiB or more",
                    a->dratio_sum / a->dratio_n, a->dratio_n);
        fputc('\n', stderr);
    }
    if (a->standard_after)
        fprintf(stderr,
                "kgate audit: %d check%s ran the standard test after the gates, not beside them, for memory "
                "(too large for the device beside it, or met a full device or host once)\n",
                a->standard_after, a->standard_after == 1 ? "" : "s");
    if (a->host_total)
        fprintf(stderr,
                "kgate audit: host memory: at most %.1f of %.1f GiB in use by the checks, %.1f GiB per check at most, "
                "%d check%s at once at most\n",
                a->host_peak / 1073741824.0, a->host_total / 1073741824.0, a->host_per_check / 1073741824.0,
                a->host_most, a->host_most == 1 ? "" : "s");
    if (a->check_peak) {
        fprintf(stderr, "kgate audit: host memory of one check: at most %.1f GiB (%s, %.2f GB of tensors)",
                a->check_peak / 1073741824.0, a->check_peak_id, a->check_peak_bytes / 1e9);
        for (int i = 0; i < 9; i += 3) {
            if (!(a->learned[i] > 0)) continue;
            fprintf(stderr, "; learned for %s: %.2f bytes per tensor byte", learned_kinds[i], a->learned[i]);
            const char *sep = " (";
            for (int c = i + 1; c < i + 3; c++)
                if (a->learned[c] > 0) {
                    fprintf(stderr, "%s%s %.2f", sep, learned_kinds[c], a->learned[c]);
                    sep = ", ";
                }
            if (*sep == ',') fputc(')', stderr);
        }
        fputc('\n', stderr);
    }
    if (a->est_asked)
        fprintf(stderr,
                "kgate audit: the checks started the largest first: %d of %d pairs sized on PyTorch's meta device "
                "beforehand (kgate check --estimate)%s\n",
                a->estimated, a->est_asked, a->estimated < a->est_asked ? ", the others at their mean" : "");
    if (a->mem_waits > a->host_waits)
        fprintf(stderr, "kgate audit: %d time%s a check waited for device memory to start\n",
                a->mem_waits - a->host_waits, a->mem_waits - a->host_waits == 1 ? "" : "s");
    if (a->host_waits)
        fprintf(stderr, "kgate audit: %d time%s a check waited for host memory to start\n", a->host_waits,
                a->host_waits == 1 ? "" : "s");
    if (a->dev_full_waits)
        fprintf(stderr,
                "kgate audit: %d time%s a worker call met a full device and was sent again after a wait (%.1f s "
                "in %d check%s; KGATE_DEVICE_WAIT)\n",
                a->dev_full_waits, a->dev_full_waits == 1 ? "" : "s", a->dev_full_s, a->dev_full_checks,
                a->dev_full_checks == 1 ? "" : "s");
    if (a->o->gpus > 0) {
        fprintf(stderr, "kgate audit: checks per GPU:");
        for (int g = 0; g < a->o->gpus; g++)
            fprintf(stderr, "%s device %s: %d (%.0f check-seconds)", g ? "," : "", a->gpu[g], a->gpu_done[g],
                    a->gpu_seconds[g]);
        fprintf(stderr, "\n");
    }
}

int kg_audit(const struct audit_opts *o, struct kg_err *e)
{
    struct audit_run a = {.o = o, .st = {.fd = -1}, .zyg = {.pid = -1, .fd = -1, .log_fd = -1}};
    char cache[KG_DIR_MAX];
    if (kg_cache_dir(cache, sizeof cache, e)) return KG_EXIT_INTERNAL;
    int rc = kg_audit_corpus(o, cache, &a.r, e);
    if (!rc) rc = open_store(&a, e);
    if (!rc) rc = prepare(&a, cache, e);
    if (!rc) rc = schedule(&a, e);
    kg_worker_stop(&a.zyg); /* started in prepare; a no-op where it was not */
    for (int i = 0; i < 9 && a.ledger[0]; i++) a.learned[i] = kg_ledger_learned(a.ledger, learned_kinds[i]);
    if (a.ledger[0]) unlink(a.ledger);
    if (a.tmpdir[0]) rmdir(a.tmpdir);
    if (!rc) rc = kg_audit_store_close(&a.st, e); /* success is said only of a store closed */
    if (!rc) summary(&a);
    run_free(&a);
    return rc;
}
