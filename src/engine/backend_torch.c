/* backend_torch.c: the judge's side of KernelBench-format pairs. The problem file is run by an
 * oracle worker, the candidate (ModelNew) by a candidate worker, both the torch runner
 * (src/runners/torch/torch_runner.py) speaking the core protocol. The oracle worker describes the
 * problem, from which the contract is synthesised (contract/pair.c), so that every gate runs
 * unchanged; it also draws the inputs (get_inputs(), seeded; transformed per gate here in C)
 * and evaluates the reference Model in float64 and at working precision. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parallel.h"
#include "base/rng.h"
#include "contract/pair.h"
#include "engine/backend.h"
#include "engine/oracle_worker.h"
#include "engine/session.h"
#include "engine/torch.h"

extern const char kg_torch_runner_py[]; /* src/engine/torch_runner_py.c, generated from the runner */

/* What the backend knows beyond the contract. */
struct torch_state {
    char runner_py[KG_PATH_MAX]; /* the torch runner, written into the cache */
    char *kernels_ref;           /* kernel names the reference launched (newline separated), or NULL */
    bool cuda;                   /* the torch workers run on a CUDA device */
    /* the standard test, started beside the gates (standard_start): its worker, already sent
     * STANDARD (or not started: why, its status), the tolerance asked, when its limit ends */
    struct kg_client std;
    bool std_sent, std_unstarted; /* sent; or its worker did not start (std_status, std_why) */
    int std_status;
    char std_why[KG_MSG_MAX];
    double std_tol, std_limit, std_sent_at, std_deadline;
};

static struct torch_state *state(const struct kg_session *s)
{
    return s->be_state;
}

/* ---- talking to the oracle worker ------------------------------------------------------------ */

/* A request about the problem at case k's constants and seed (k NULL: the module's own); one
 * static request, filled in by the caller and sent before the next is made. */
static struct kg_req *problem_req(enum kg_cmd cmd, const struct kg_case *k)
{
    static struct kg_req rq;
    memset(&rq, 0, sizeof rq);
    rq.magic = KG_PROTO_MAGIC;
    rq.cmd = cmd;
    if (k) {
        struct kg_req_problem *p = &rq.u.problem;
        p->nsym = k->c->nsyms;
        for (int i = 0; i < k->c->nsyms; i++) {
            kg_strlcpy(p->sym_names[i], k->c->sym[i], KG_NAME_MAX);
            p->sym_values[i] = k->sym[i];
        }
        p->seed = k->seed;
    }
    return &rq;
}

/* DESCRIBE at the given constants (nsym 0: the module's own), with the request's flags
 * (KG_DESCRIBE_META). */
static json_t *describe_flags(struct kg_session *s, int flags, int nsym, char names[][KG_NAME_MAX],
                              const int64_t *values, struct kg_err *e)
{
    struct kg_req *rq = problem_req(KG_CMD_DESCRIBE, NULL);
    struct kg_req_problem *p = &rq->u.problem;
    p->flags = flags;
    p->nsym = nsym;
    for (int i = 0; i < nsym; i++) {
        kg_strlcpy(p->sym_names[i], names[i], KG_NAME_MAX);
        p->sym_values[i] = values[i];
    }
    if (kg_session_oshm(s, 4u << 20, e)) return NULL;
    p->shm_size = s->oshm.size;
    struct kg_reply rp;
    if (kg_session_call(s, &s->oracle, rq, &rp) || rp.status != KG_WS_OK) {
        kg_errf(e, "%s: %s", s->c->problem_path, rp.msg);
        return NULL;
    }
    if (rp.code <= 0 || (uint64_t)rp.code >= s->oshm.size) {
        kg_errf(e, "%s: the torch runner returned no description", s->c->problem_path);
        return NULL;
    }
    json_error_t je;
    json_t *doc = json_loadb((const char *)s->oshm.mem, (size_t)rp.code, 0, &je);
    if (!doc) kg_errf(e, "%s: unreadable description from the torch runner: %s", s->c->problem_path, je.text);
    return doc;
}

/* DESCRIBE at the given constants: a kg_describe_fn. */
static json_t *describe(void *ud, int nsym, char names[][KG_NAME_MAX], const int64_t *values, struct kg_err *e)
{
    return describe_flags(ud, 0, nsym, names, values, e);
}

/* The LOAD of a torch worker: role 0 the problem (oracle), 1 the candidate, 2 both (the
 * standard test's own process). */
static void torch_load(struct kg_session *s, struct kg_client *cl, int role, const char *path)
{
    memset(&cl->load, 0, sizeof cl->load);
    cl->load.magic = KG_PROTO_MAGIC;
    cl->load.cmd = KG_CMD_LOAD;
    struct kg_req_load *l = &cl->load.u.load;
    l->runner = KG_RUNNER_TORCH;
    l->role = role;
    l->dtype = KG_F32;
    kg_strlcpy(l->path, path, sizeof l->path);
    kg_strlcpy(l->aux_path, s->c->problem_path, sizeof l->aux_path);
    kg_strlcpy(l->entry, role ? "ModelNew" : "Model", sizeof l->entry);
    kg_strlcpy(l->cache_dir, s->cache, sizeof l->cache_dir);
    const char *py = s->o.python ? s->o.python : getenv("KGATE_PYTHON");
    cl->argv[0] = (char *)(py && *py ? py : "python3");
    cl->argv[1] = state(s)->runner_py;
    cl->argv[2] = "3";
    cl->argv[3] = NULL;
    cl->w.pid = -1;
    /* the candidate's import is its own code, under the run's limit, unless it builds an
     * extension there (load_inline: a minute of nvcc is legitimate) */
    const char *src = s->c->source;
    bool builds = src && (strstr(src, "load_inline") || strstr(src, "cpp_extension"));
    cl->open_limit = role == 0 || builds ? 600 : 0;
}

static void load_req(struct kg_session *s, struct kg_client *cl, enum kg_dtype dtype)
{
    (void)dtype; /* a pair has one instance: the problem's */
    torch_load(s, cl, 1, s->c->path);
}

int kg_torch_runner_path(const char *cache, char *out, size_t n, struct kg_err *e)
{
    const char *env = getenv("KGATE_TORCH_RUNNER");
    if (env && *env) {
        kg_strlcpy(out, env, n);
        return 0;
    }
    uint64_t h = kg_hash64(kg_torch_runner_py, strlen(kg_torch_runner_py), 0);
    snprintf(out, n, "%s/torch_runner-%016llx.py", cache, (unsigned long long)h);
    if (access(out, R_OK) == 0) return 0;
    return kg_write_file(out, kg_torch_runner_py, e);
}

int kg_torch_zygote(struct kg_worker *z, const char *python, const char *runner_py, char *name, size_t n,
                    struct kg_err *e)
{
    static unsigned counter;
    snprintf(name, n, "kgate-zygote-%d-%u-%llx", (int)getpid(), counter++, (unsigned long long)(kg_now() * 1e6));
    char *argv[] = {(char *)python, (char *)runner_py, "--zygote", name, NULL};
    if (kg_zygote_start(z, argv, name, e)) {
        name[0] = 0;
        return -1;
    }
    return 0;
}

/* This session's torch workers are forked from the audit's fork server ($KGATE_ZYGOTE), from
 * one of its own, or (KGATE_ZYGOTE=0, or no server could start) started as python processes. */
static void use_zygote(struct kg_session *s)
{
    const char *env = getenv("KGATE_ZYGOTE");
    if (env && !strcmp(env, "0")) return;
    if (env && *env) {
        kg_strlcpy(s->zygote, env, sizeof s->zygote);
        return;
    }
    struct kg_err e;
    const char *py = s->o.python ? s->o.python : getenv("KGATE_PYTHON");
    if (kg_torch_zygote(&s->zyg, py && *py ? py : "python3", state(s)->runner_py, s->zygote, sizeof s->zygote, &e))
        s->zygote[0] = 0; /* the plain start reports why PyTorch cannot run */
}

/* ---- opening a pair -------------------------------------------------------------------------- */

/* The device the problem runs on and the kernels its reference launched, from its description. */
static void read_facts(struct torch_state *t, json_t *doc)
{
    const char *dev = json_string_value(json_object_get(doc, "device"));
    t->cuda = dev && !strcmp(dev, "cuda");
    json_t *kernels = json_object_get(doc, "kernels");
    if (!json_is_array(kernels)) return;
    size_t n = 1, idx;
    json_t *k;
    json_array_foreach(kernels, idx, k) n += strlen(json_string_value(k) ?: "") + 1;
    t->kernels_ref = calloc(1, n);
    if (!t->kernels_ref) return;
    json_array_foreach(kernels, idx, k)
    {
        strcat(t->kernels_ref, json_string_value(k) ?: "");
        strcat(t->kernels_ref, "\n");
    }
}

/* Starts and loads a torch worker; a failure says FILE:LINE when the runner found one. */
static int start(struct kg_session *s, struct kg_client *cl, const char *what, const char *file, struct kg_err *e)
{
    struct kg_reply rp;
    if (!kg_client_start(s, cl, &rp)) return KG_EXIT_OK;
    if (rp.status == KG_WS_COMPILE) /* the runner's message starts with FILE:LINE */
        kg_errf(e, "%s", rp.msg);
    else
        kg_errf(e, "%s: the %s could not be loaded (%s): %s", file, what, kg_wstatus_name((enum kg_wstatus)rp.status),
                rp.msg);
    return rp.status == KG_WS_UNAVAILABLE ? KG_EXIT_UNAVAILABLE : KG_EXIT_USAGE;
}

/* The backend's state and the problem's oracle worker, started: what a check and an estimate
 * both begin with. A check's (candidate not NULL) candidate worker, and the standard test's
 * where it will run beside the gates, are started first and load while the oracle does: at
 * KernelBench's real sizes each load builds a model and starts a CUDA context, seconds that
 * were spent one after the other at a check's start. */
static int open_oracle(struct kg_session *s, const char *problem, const char *candidate, struct kg_err *e)
{
    struct torch_state *t = calloc(1, sizeof *t);
    if (!t) {
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    s->be_state = t;
    if (kg_torch_runner_path(s->cache, t->runner_py, sizeof t->runner_py, e)) return KG_EXIT_INTERNAL;
    use_zygote(s);
    if (candidate) {
        torch_load(s, &s->cand[0], 1, candidate);
        s->ncand = 1; /* stopped with the session, whatever happens next */
        kg_client_ahead(s, &s->cand[0]);
        if (s->o.baseline_ahead) {
            torch_load(s, &t->std, 2, s->c->path);
            t->std.standard = true;
            kg_client_ahead(s, &t->std);
        }
    }
    torch_load(s, &s->oracle, 0, problem);
    return start(s, &s->oracle, "reference", problem, e);
}

int kg_torch_open(struct kg_session *s, const char *problem, const char *candidate, struct kg_err *e)
{
    int rc = open_oracle(s, problem, candidate, e);
    if (rc) return rc;
    struct torch_state *t = state(s);
    json_t *doc = describe(s, 0, NULL, NULL, e);
    if (!doc || json_object_get(doc, "error")) {
        if (doc) kg_errf(e, "%s: %s", problem, json_string_value(json_object_get(doc, "error")) ?: "error");
        json_decref(doc);
        return KG_EXIT_USAGE;
    }
    rc = kg_pair_synthesise(s->c, doc, describe, s, e);
    if (!rc) read_facts(t, doc);
    json_decref(doc);
    if (rc) return KG_EXIT_USAGE;
    s->cand_dtype[0] = kg_contract_default_dtype(s->c);
    return start(s, &s->cand[0], "candidate", candidate, e);
}

/* The bytes of the tensors in a description's list (inputs or outputs); -1 where one is unreadable. */
static double list_bytes(json_t *list)
{
    double sum = 0;
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (strcmp(json_string_value(json_object_get(x, "kind")) ?: "", "tensor")) continue;
        const char *dt = json_string_value(json_object_get(x, "dtype"));
        enum kg_dtype t;
        json_t *shape = json_object_get(x, "shape");
        if (!dt || kg_dtype_parse(dt, strlen(dt), &t) || !json_is_array(shape)) return -1;
        double n = (double)kg_dtype_size(t);
        size_t d;
        json_t *v;
        json_array_foreach(shape, d, v) n *= (double)json_integer_value(v);
        sum += n;
    }
    return sum;
}

int kg_torch_estimate(struct kg_session *s, const char *problem, double *in_bytes, double *out_bytes, struct kg_err *e)
{
    int rc = open_oracle(s, problem, NULL, e);
    if (rc) return rc;
    json_t *doc = describe_flags(s, KG_DESCRIBE_META, 0, NULL, NULL, e);
    const char *why = doc ? json_string_value(json_object_get(doc, "error")) : NULL;
    if (doc && !why) {
        *in_bytes = list_bytes(json_object_get(doc, "inputs"));
        *out_bytes = list_bytes(json_object_get(doc, "outputs"));
        if (*in_bytes < 0 || *out_bytes < 0) why = "a tensor of an unknown dtype or shape";
    }
    if (why) kg_errf(e, "%s: no estimate: %s", problem, why);
    json_decref(doc);
    return why || !doc ? KG_EXIT_UNAVAILABLE : KG_EXIT_OK;
}

static void torch_close(struct kg_session *s)
{
    struct torch_state *t = state(s);
    if (!t) return;
    kg_client_stop(&t->std); /* its worker, or the one started ahead and never asked */
    free(t->kernels_ref);
    free(t);
    s->be_state = NULL;
}

static const char *no_gpu(const struct kg_session *s)
{
    return state(s)->cuda ? NULL : "needs a GPU: PyTorch runs on the CPU here (no streams or device limits)";
}

/* ---- inputs ------------------------------------------------------------------------------------ */

/* The gate's distribution, as a transformation of the problem's own inputs: elements [lo, hi)
 * of one tensor (kg_parallel_for). */
struct transform_job {
    const struct kg_case *k;
    struct kg_tensor *t;
    int i;
};

static void transform_range(void *ctx, int64_t lo, int64_t hi)
{
    const struct transform_job *job = ctx;
    const struct kg_case *k = job->k;
    struct kg_tensor *t = job->t;
    for (int64_t j = lo; j < hi; j++) {
        double v = kg_load(t->dtype, t->data, j);
        switch (k->dist) {
        case KG_DIST_LARGE_MEAN: v += 1000.0; break;
        case KG_DIST_MIXED:
            v *= pow(10.0, 8.0 * kg_rng_uniform(k->seed, 2000 + (uint64_t)job->i, (uint64_t)j) - 4.0);
            break;
        default: v = v > 0; break; /* KG_DIST_BINARY */
        }
        kg_store(t->dtype, t->data, j, v);
    }
}

static void transform(const struct kg_case *k, struct kg_inputs *in)
{
    bool elementwise = k->dist == KG_DIST_LARGE_MEAN || k->dist == KG_DIST_MIXED || k->dist == KG_DIST_BINARY;
    for (int i = 0; i < k->c->nargs && elementwise; i++) {
        const struct kg_arg *a = &k->c->args[i];
        struct kg_tensor *t = &in->t[i];
        if (!kg_arg_is_input(a) || !t->data || !kg_dtype_is_float(t->dtype)) continue;
        struct transform_job job = {k, t, i};
        kg_parallel_for(t->numel, KG_PARALLEL_GRAIN, transform_range, &job);
    }
    if (k->dist == KG_DIST_SPECIAL) {
        /* the same injections as for contract kernels, over the problem's own values */
        for (int i = 0; i < k->c->nargs; i++) {
            const struct kg_arg *a = &k->c->args[i];
            if (!kg_arg_is_input(a) || !in->t[i].data || !kg_dtype_is_float(in->t[i].dtype)) continue;
            kg_inputs_inject(k, i, in->t[i].data, in);
        }
    }
}

static int inputs(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_err *e)
{
    memset(in, 0, sizeof *in);
    struct kg_req *rq = problem_req(KG_CMD_INPUTS, k);
    struct kg_req_problem *p = &rq->u.problem;
    p->dist = k->dist;
    uint64_t off = 0;
    int n = 0;
    for (int i = 0; i < k->c->nargs; i++) {
        if (!kg_arg_is_input(&k->c->args[i]) && k->c->args[i].kind == KG_ARG_TENSOR) continue;
        if (k->c->args[i].kind == KG_ARG_TENSOR) {
            p->off[n] = off;
            p->bytes[n] = (uint64_t)k->numel[i] * kg_dtype_size(k->adtype[i]);
            off = (off + p->bytes[n] + 4095) / 4096 * 4096;
        }
        n++;
    }
    p->ntensor = n;
    p->shm_size = off ? off : 4096;
    if (kg_session_oshm(s, p->shm_size, e)) return -1;
    struct kg_reply rp;
    if (kg_session_call(s, &s->oracle, rq, &rp) || rp.status != KG_WS_OK) {
        char id[KG_CASE_ID_MAX];
        kg_case_id(k, id, sizeof id);
        return kg_errf(e, "%s: get_inputs() at %s: %s", k->c->problem_path, id, rp.msg);
    }
    n = 0;
    for (int i = 0; i < k->c->nargs; i++) {
        const struct kg_arg *a = &k->c->args[i];
        if (!kg_arg_is_input(a) && a->kind == KG_ARG_TENSOR) continue;
        if (a->kind == KG_ARG_TENSOR) {
            if (kg_tensor_copy_from(&in->t[i], k->adtype[i], k->shape[i].rank, k->shape[i].dims,
                                    s->oshm.mem + p->off[n])) {
                kg_inputs_free(in);
                return kg_errf(e, "out of memory for input %s", a->name);
            }
        }
        n++;
    }
    transform(k, in);
    return 0;
}

/* ---- the oracle ---------------------------------------------------------------------------------- */

/* The reference Model on the inputs (sent as stored; the worker casts them on its device to
 * float64 or keeps the problem's dtype): working 0 in float64, 1 in the problem's dtype with
 * TF32 off, 4 likewise with sequential fp32 sums and products, as evaluation `set` of the case
 * in its segment g (kg_oracle_worker_lend: the outputs become views of it). For 4, *unchanged
 * (when not NULL) says that no op was replaced: the result is also working 1's. */
static int model(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_oracle_case *g,
                 int set, uint64_t resident, struct kg_tensor *const *out, int nout, int working, int *unchanged,
                 struct kg_err *e)
{
    struct kg_oracle_arg args[KG_OP_MAX_IO];
    enum kg_dtype odt[KG_OP_MAX_IO];
    int nin = 0, j = 0;
    for (int i = 0; i < k->c->nargs; i++) {
        const struct kg_arg *a = &k->c->args[i];
        if (a->io == KG_IN) {
            if (nin == KG_OP_MAX_IO) return kg_errf(e, "%s: more than %d inputs", k->c->problem_path, KG_OP_MAX_IO);
            if (a->kind != KG_ARG_TENSOR)
                args[nin++] = (struct kg_oracle_arg){.kind = a->kind, .value = a->value};
            else
                args[nin++] = (struct kg_oracle_arg){.kind = KG_ARG_TENSOR,
                                                     .dtype = k->adtype[i],
                                                     .rank = k->shape[i].rank,
                                                     .dims = k->shape[i].dims,
                                                     .numel = k->numel[i],
                                                     .data = in->t[i].data,
                                                     .data_dtype = in->t[i].dtype};
        } else if (kg_arg_is_output(a) && j < nout) {
            odt[j++] = k->adtype[i];
        }
    }
    int code = 0;
    struct kg_err we;
    if (kg_oracle_worker_lend(s, k, working, g, set, resident, args, nin, out, odt, nout, &code, &we))
        return kg_errf(e, "%s: the reference Model failed: %s", k->c->problem_path, we.msg);
    if (unchanged) *unchanged = working == 4 && code == 1;
    return 0;
}

/* PyTorch's own reductions are pairwise or blocked: the reference is taken with sequential fp32
 * accumulation too, and the worse of the two legitimate evaluations per element. The oracle's
 * evaluations of case k, as sets of g (kept in the worker under resident, or 0: views of g's
 * segment): the exact one (0) into exact, the sequential fp32 one (1) into seq, and the plain
 * fp32 one: as set 1 into seq where the sequential mode cannot evaluate the model, as set 2
 * into plain (*plain_too) where it changed an op; not at all where it changed none (no
 * reduction in the model: it is the plain reference already). The evaluations share the case's
 * segment, the inputs placed once. */
static int evaluate(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_oracle_case *g,
                    uint64_t resident, struct kg_tensor *const *exact, struct kg_tensor *const *seq,
                    struct kg_tensor *const *plain, int nout, bool *plain_too, struct kg_err *e)
{
    *plain_too = false;
    if (model(s, k, in, g, 0, resident, exact, nout, 0, NULL, e)) return -1;
    int unchanged = 0;
    struct kg_err se; /* where the sequential mode cannot evaluate the model, the plain reference alone */
    if (model(s, k, in, g, 1, resident, seq, nout, 4, &unchanged, &se))
        return model(s, k, in, g, 1, resident, seq, nout, 1, NULL, e);
    if (unchanged) return 0;
    *plain_too = true;
    return model(s, k, in, g, 2, resident, plain, nout, 1, NULL, e);
}

/* Whether the oracle's values of a case stay in the oracle worker (struct kg_resident): unless
 * TF32 is allowed (its reference is computed here, from the values) or KGATE_RESIDENT=0 (the
 * values come to the judge, as before: for comparing the two). */
static bool keep_resident(const struct kg_session *s, const struct kg_case *k)
{
    const char *env = getenv("KGATE_RESIDENT");
    return !(s->o.allow_tf32 || k->c->allow_tf32) && !(env && !strcmp(env, "0"));
}

/* The oracle of a resident case: the same evaluations, kept in the worker under a new id, which
 * then makes the reference, the scale and the reference's error as oracle() and kg_expect_eval
 * do here. */
static int oracle_resident(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                           struct kg_expect *x, struct kg_err *e)
{
    struct kg_tensor *ex[KG_OP_MAX_IO];
    enum kg_dtype dt[KG_OP_MAX_IO];
    uint64_t bytes = 0;
    for (int j = 0; j < x->nout; j++) {
        ex[j] = &x->exact[j];
        dt[j] = k->adtype[x->arg[j]];
        bytes += (uint64_t)x->exact[j].numel * (8 + kg_dtype_size(dt[j]));
    }
    uint64_t id = ++s->resident_next;
    struct kg_oracle_case g = {0};
    bool plain_too;
    int rc = evaluate(s, k, in, &g, id, ex, ex, ex, x->nout, &plain_too, e);
    kg_seg_put(g.g);
    if (!rc) rc = kg_oracle_resident_calibrate(s, id, dt, x->nout, x->scale, x->ref_err, e);
    if (rc) {
        kg_oracle_resident_drop(s, id);
        return -1;
    }
    x->resident = (struct kg_resident){
        .id = id, .bytes = bytes, .gen = s->oracle.restarts, .s = s, .drop = kg_oracle_resident_drop};
    return 0;
}

static int oracle(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                  struct kg_err *e)
{
    if (keep_resident(s, k)) return oracle_resident(s, k, in, x, e);
    struct kg_tensor *ex[KG_OP_MAX_IO], *rf[KG_OP_MAX_IO], plain[KG_OP_MAX_IO], *pl[KG_OP_MAX_IO];
    for (int j = 0; j < x->nout; j++) {
        ex[j] = &x->exact[j];
        rf[j] = &x->ref[j];
        plain[j] = x->ref[j]; /* the shape; its data a view of the third evaluation */
        pl[j] = &plain[j];
    }
    struct kg_oracle_case g = {0};
    bool plain_too;
    int rc = evaluate(s, k, in, &g, 0, ex, rf, pl, x->nout, &plain_too, e);
    for (int j = 0; !rc && plain_too && j < x->nout; j++) {
        /* the sequential evaluation where it is strictly worse, else the plain one */
        const double *xe = x->exact[j].data, *p = plain[j].data;
        double *r = x->ref[j].data;
        for (int64_t i = 0; i < x->ref[j].numel; i++)
            if (!(fabs(r[i] - xe[i]) > fabs(p[i] - xe[i]))) r[i] = p[i];
    }
    if (rc) { /* no views of a segment given back */
        for (int j = 0; j < x->nout; j++) x->exact[j].data = x->ref[j].data = NULL;
        kg_seg_put(g.g);
        return -1;
    }
    kg_oracle_worker_settle(&g, 2); /* exact and ref stay; the inputs' copy and the plain evaluation go */
    x->seg = g.g;
    return 0;
}

/* ---- the standard test, sampling, decoys -------------------------------------------------------- */

/* KernelBench's own test, in a fresh worker that runs the reference and then the candidate in
 * one process, as that harness does. standard_start starts it and sends the request, so that it
 * runs beside the gates (at real sizes its five trials draw KernelBench's inputs on the host,
 * seconds each, and its worker starts a CUDA context of its own); standard takes its answer,
 * starting it first where nothing did. Its limit counts from the request. */
static int standard_start(struct kg_session *s, double tol)
{
    struct torch_state *t = state(s);
    if (t->std_sent || t->std_status || t->std_unstarted) return 0;
    if (!kg_worker_alive(&t->std.spare)) { /* not started as the session opened (baseline_ahead) */
        memset(&t->std, 0, sizeof t->std);
        t->std.standard = true;
        torch_load(s, &t->std, 2, s->c->path);
    }
    struct kg_reply rp;
    t->std_tol = tol;
    if (kg_client_start(s, &t->std, &rp)) {
        t->std_unstarted = true;
        snprintf(t->std_why, sizeof t->std_why, "the standard test's worker did not start (%s): %.3900s",
                 kg_wstatus_name((enum kg_wstatus)rp.status), rp.msg);
        return -1;
    }
    struct kg_req *rq = problem_req(KG_CMD_STANDARD, NULL);
    rq->u.problem.tol = tol;
    t->std_limit = 5 * s->o.timeout + 60;
    t->std_sent_at = kg_now();
    t->std_deadline = t->std_sent_at + t->std_limit;
    if (kg_worker_send(&t->std.w, rq, -1, &rp, t->std_limit)) {
        t->std_status = rp.status ? rp.status : KG_WS_CRASH;
        snprintf(t->std_why, sizeof t->std_why, "%s: %.300s", kg_wstatus_name((enum kg_wstatus)rp.status), rp.msg);
        return -1;
    }
    t->std_sent = true;
    return 0;
}

static int standard(struct kg_session *s, double tol, char *why, size_t n)
{
    struct torch_state *t = state(s);
    if (t->std_sent && t->std_tol != tol) { /* asked again otherwise: that one's answer is not this */
        kg_worker_stop(&t->std.w);
        t->std_sent = false;
    }
    if (!t->std_sent && !t->std_status && !t->std_unstarted) standard_start(s, tol);
    struct kg_reply rp;
    memset(&rp, 0, sizeof rp);
    int rc = -1;
    bool full = false;
    if (t->std_sent) {
        double t0 = kg_now();
        for (int tries = 0;; tries++) {
            rc = kg_worker_await(&t->std.w, &rp, t->std_limit, t->std_deadline, NULL);
            kg_session_note_dev_peak(s, &t->std, &rp);
            /* a trial that met a full device under kgate audit: the five trials again after a
             * wait, in the same worker (kg_session_wait_full); when the wait is spent, no answer */
            full = !rc &&
                   (kg_reply_device_full(&rp) || (rp.status == KG_WS_OK && rp.code != 1 && kg_msg_device_full(rp.msg)));
            if (!full) break;
            s->judge_broken[0] = 0;
            if (!kg_session_wait_full(s, KG_CMD_STANDARD, &rp, tries)) break;
            full = false;
            struct kg_req *rq = problem_req(KG_CMD_STANDARD, NULL);
            rq->u.problem.tol = tol;
            t->std_deadline = kg_now() + t->std_limit;
            if ((rc = kg_worker_send(&t->std.w, rq, -1, &rp, t->std_limit)) != 0) break;
        }
        kg_worker_stop(&t->std.w);
        if (s->trace) /* KGATE_TRACE: when it was sent, until its answer was taken, of which waited */
            fprintf(stderr, "kgate: trace: %9.3f s %8.3f s  std    standard  (waited %.3f s)  status %d\n",
                    t->std_sent_at - s->t_open, kg_now() - t->std_sent_at, kg_now() - t0, rp.status);
    } else {
        rp.status = t->std_status;
        kg_strlcpy(rp.msg, t->std_why, sizeof rp.msg);
    }
    bool unstarted = t->std_unstarted;
    t->std_sent = t->std_unstarted = false;
    t->std_status = 0;
    if (unstarted) {
        snprintf(why, n, "%s", rp.msg);
        return -1;
    }
    if (full && s->judge_broken[0]) { /* the device stayed full: kgate audit runs the check again */
        snprintf(why, n, "%s", s->judge_broken);
        s->judge_broken[0] = 0;
        return -1;
    }
    if (!rc && rp.status == KG_WS_OK) {
        snprintf(why, n, "%s", rp.msg);
        return rp.code == 1;
    }
    if (rp.status == KG_WS_HOST_OOM) { /* the host's trouble, not the kernel's: no answer (an audit runs it again) */
        snprintf(why, n, "%s", rp.msg);
        return -1;
    }
    /* under KernelBench a candidate that raises, crashes or hangs is simply incorrect */
    snprintf(why, n, "%s: %.300s", kg_wstatus_name((enum kg_wstatus)rp.status), rp.msg);
    return rp.status == KG_WS_BAD_REQUEST ? -1 : 0;
}

static int sample(struct kg_session *s, bool candidate, const struct kg_case *k, const int64_t *idx, int n, int nout,
                  double *vals, struct kg_reply *rp, struct kg_err *e)
{
    struct kg_req *rq = problem_req(KG_CMD_SAMPLE, k);
    struct kg_req_problem *p = &rq->u.problem;
    p->ntensor = nout;
    uint64_t page = 4096, each = ((uint64_t)n * 8 + page - 1) / page * page;
    p->off[0] = 0;
    p->bytes[0] = (uint64_t)n * 8;
    for (int j = 0; j < nout; j++) p->off[1 + j] = each * (uint64_t)(1 + j);
    p->shm_size = each * (uint64_t)(1 + nout);
    /* each worker its own memory: the reference's values never pass through the candidate's */
    if (candidate ? kg_session_shm(s, p->shm_size, e) : kg_session_oshm(s, p->shm_size, e)) return -1;
    uint8_t *mem = candidate ? s->shm.mem : s->oshm.mem;
    memcpy(mem, idx, (size_t)n * 8);
    struct kg_client *cl = candidate ? kg_session_client(s, k->dtype, rp) : &s->oracle;
    if (!cl) return kg_errf(e, "the candidate's worker did not start: %s", rp->msg);
    if (kg_client_start(s, cl, rp)) return kg_errf(e, "the worker did not start: %s", rp->msg);
    int rc;
    const double t0 = kg_now();
    for (int tries = 0;; tries++) { /* the device full under an audit: once more after a wait */
        rc = kg_worker_call_until(&cl->w, rq, candidate ? s->shm.fd : s->oshm.fd, rp, KG_SAMPLE_LIMIT, s->o.interrupted,
                                  s->o.interrupted_ud);
        /* what it holds now (a full device's room), not in the record's most held: a sample past
         * 2^31 elements is a transient of its own, taken in turns (limits) */
        s->dev_now[candidate ? KG_DEV_KERNEL : KG_DEV_ORACLE] = rp->dev_held;
        if (rc || !kg_session_wait_device(s, rq, rp, tries)) break;
    }
    if (s->trace) kg_session_trace_call(s, cl, rq, t0, rp); /* with its waits for a full device */
    if (rc || rp->status != KG_WS_OK) {
        /* a CUDA error can leave the process's context unusable (sticky errors): the next
         * request, e.g. limits' run just below 2^31, gets a fresh worker */
        if (kg_worker_alive(&cl->w)) kg_worker_stop(&cl->w);
        return kg_errf(e, "%s", rp->msg);
    }
    for (int j = 0; j < nout; j++) memcpy(vals + (size_t)j * (size_t)n, mem + p->off[1 + j], (size_t)n * 8);
    return 0;
}

static int decoy(struct kg_session *s, struct kg_decoy *d, struct kg_err *e)
{
    const char *ref = state(s)->kernels_ref;
    if (!ref) return kg_errf(e, "no kernel records: the reference ran on the CPU (no CUDA)");
    struct kg_case k;
    if (kg_nominal_case(s, kg_contract_default_dtype(s->c), 0, KG_DIST_NORMAL, &k, e)) return -1;
    struct kg_inputs in;
    if (kg_session_inputs(s, &k, &in, e)) return -1;
    struct kg_exec x;
    /* only the launches are looked at: the outputs stay in the worker (at real sizes, GBs) */
    struct kg_exec_opts o = {.fill = KG_FILL_ZERO,
                             .guard_byte = 0xA5,
                             .flags = KG_RUN_PROFILE | (kg_session_can(s, KG_CAP_DIGEST) ? KG_RUN_DIGEST : 0)};
    kg_exec(s, &k, &in, &o, &x);
    kg_inputs_free(&in);
    int rc = 0;
    const struct kg_reply *run = &s->last_run;
    if (x.status != KG_WS_OK) {
        rc = kg_errf(e, "the profiled run failed: %s", x.msg);
    } else if (run->nlaunch < 0) {
        rc = kg_errf(e, "the profiler recorded nothing: %s", run->msg);
    } else {
        d->valid = true;
        d->launched = run->nlaunch;
        for (int i = 0; i < run->nlaunch && i < KG_MAX_LAUNCH_RECS; i++) {
            const char *name = run->launch[i].name;
            char line[140];
            snprintf(line, sizeof line, "%s\n", name);
            bool in_ref = strstr(ref, line) != NULL;
            if (!in_ref && d->own < (int)(sizeof d->own_names / sizeof *d->own_names))
                kg_strlcpy(d->own_names[d->own], name, sizeof d->own_names[0]);
            if (!in_ref) d->own++;
        }
        d->decoy = d->own == 0;
    }
    kg_exec_free(&x);
    return rc;
}

const struct kg_backend kg_backend_torch = {
    .name = "torch",
    .title = "PyTorch",
    .kind = KG_RUNNER_TORCH,
    .guard = 4096,
    .budget = 1 << 22,
    .caps = KG_CAP_SAMPLE_HUGE | KG_CAP_TF32_SWITCH | KG_CAP_FRESH_OUTPUTS | KG_CAP_SYNC_DEVICE | KG_CAP_DIGEST,
    .found = KG_RUN_OUT_SHARES_INPUT | KG_RUN_OUT_OOB_WRITE | KG_RUN_INPUTS_AS_SENT | KG_RUN_OUT_LATE_WRITE |
             KG_RUN_INPUTS_KEPT,
    .load_req = load_req,
    .no_gpu = no_gpu,
    .inputs = inputs,
    .oracle = oracle,
    .oracle_lends = true,
    .worker_fills_outputs = true,
    .baseline = standard,
    .baseline_start = standard_start,
    .sample = sample,
    .decoy = decoy,
    .close = torch_close,
};
