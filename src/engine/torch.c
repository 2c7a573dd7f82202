/* torch.c: KernelBench-format pairs. The problem file (Model, get_inputs, get_init_inputs and
 * module-level integer constants) is run by an oracle worker, the candidate (ModelNew) by a
 * candidate worker, both probes/torch_runner.py speaking the core protocol. The judge asks the
 * oracle worker to describe the problem, infers how each tensor dim follows the module's
 * constants (by describing it again with one constant changed at a time), and synthesises a
 * contract, so that every gate runs unchanged. Inputs come from get_inputs() (seeded) and are
 * transformed per gate (large mean, mixed magnitude, special values) here in C. */
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cache.h"
#include "base/rng.h"
#include "engine/session.h"
#include "engine/torch.h"

extern const char kg_torch_runner_py[]; /* src/engine/torch_runner_py.c, generated from src/runners/torch/torch_runner.py */

/* ---- talking to the oracle worker --------------------------------------------------------- */

static void set_syms(struct kg_req_problem *p, const struct kg_contract *c, const int64_t *sym)
{
    p->nsym = c->nsyms;
    for (int i = 0; i < c->nsyms; i++) {
        kg_strlcpy(p->sym_names[i], c->sym[i], KG_NAME_MAX);
        p->sym_values[i] = sym[i];
    }
}

/* A request about the problem at case k's constants and seed (k NULL: the module's own); one
 * static request, filled in by the caller and sent before the next is made. */
static struct kg_req *problem_req(enum kg_cmd cmd, const struct kg_case *k)
{
    static struct kg_req rq;
    memset(&rq, 0, sizeof rq);
    rq.magic = KG_PROTO_MAGIC;
    rq.cmd = cmd;
    if (k) {
        set_syms(&rq.u.problem, k->c, k->sym);
        rq.u.problem.seed = k->seed;
    }
    return &rq;
}

/* DESCRIBE at the given constants (nsym 0: the module's own); the JSON document or NULL. */
static json_t *describe(struct kg_session *s, int nsym, char names[][KG_NAME_MAX], const int64_t *values,
                        struct kg_err *e)
{
    struct kg_req *rq = problem_req(KG_CMD_DESCRIBE, NULL);
    struct kg_req_problem *p = &rq->u.problem;
    p->nsym = nsym;
    for (int i = 0; i < nsym; i++) {
        kg_strlcpy(p->sym_names[i], names[i], KG_NAME_MAX);
        p->sym_values[i] = values[i];
    }
    if (kg_session_oshm(s, 4u << 20, e)) return NULL;
    p->shm_size = s->oshm_size;
    struct kg_reply rp;
    if (kg_session_call(s, &s->oracle, rq, &rp) || rp.status != KG_WS_OK) {
        kg_errf(e, "%s: %s", s->c->problem_path, rp.msg);
        return NULL;
    }
    if (rp.code <= 0 || (uint64_t)rp.code >= s->oshm_size) {
        kg_errf(e, "%s: the torch runner returned no description", s->c->problem_path);
        return NULL;
    }
    json_error_t je;
    json_t *doc = json_loadb((const char *)s->oshm, (size_t)rp.code, 0, &je);
    if (!doc) kg_errf(e, "%s: unreadable description from the torch runner: %s", s->c->problem_path, je.text);
    return doc;
}

static int dtype_of(const char *name, enum kg_dtype *t)
{
    return name ? kg_dtype_parse(name, strlen(name), t) : -1;
}

/* Reads the shapes of the inputs and outputs of a description into flat arrays:
 * shapes[i] for input i (rank -1 for a non-tensor), then the outputs. */
struct shapes {
    int n_in, n_out;
    struct kg_shape s[KG_MAX_ARGS];
};

static int read_shapes(json_t *doc, struct shapes *sh)
{
    memset(sh, 0, sizeof *sh);
    json_t *ins = json_object_get(doc, "inputs"), *outs = json_object_get(doc, "outputs");
    if (!json_is_array(ins) || !json_is_array(outs)) return -1;
    sh->n_in = (int)json_array_size(ins);
    sh->n_out = (int)json_array_size(outs);
    if (sh->n_in + sh->n_out > KG_MAX_ARGS) return -1;
    for (int i = 0; i < sh->n_in + sh->n_out; i++) {
        json_t *t = i < sh->n_in ? json_array_get(ins, (size_t)i) : json_array_get(outs, (size_t)(i - sh->n_in));
        json_t *shape = json_object_get(t, "shape");
        const char *kind = json_string_value(json_object_get(t, "kind"));
        if (kind && strcmp(kind, "tensor")) {
            sh->s[i].rank = -1;
            continue;
        }
        if (!json_is_array(shape) || json_array_size(shape) > KG_MAX_RANK) return -1;
        sh->s[i].rank = (int)json_array_size(shape);
        for (int d = 0; d < sh->s[i].rank; d++) sh->s[i].dims[d] = json_integer_value(json_array_get(shape, (size_t)d));
    }
    return 0;
}

/* ---- inferring dims as expressions of the module's constants ---------------------------------- */

static int lookup(void *ud, const char *name, size_t n)
{
    const struct kg_contract *c = ud;
    for (int i = 0; i < c->nsyms; i++)
        if (strlen(c->sym[i]) == n && !memcmp(c->sym[i], name, n)) return i;
    return -1;
}

/* The expression for a dim of nominal value d0 given its value under each perturbation. */
static void infer_dim(const struct kg_contract *c, int64_t d0, const int64_t *pert_val, const int64_t *pert_dim,
                      const bool *ok, char *buf, size_t n, bool *fixed)
{
    int changed[KG_MAX_SYMS], nch = 0;
    for (int k = 0; k < c->nsyms; k++)
        if (ok[k] && pert_dim[k] != d0) changed[nch++] = k;
    if (nch == 0) {
        snprintf(buf, n, "%lld", (long long)d0);
        return;
    }
    if (nch == 1) {
        int k = changed[0];
        int64_t v = c->nominal[k], v2 = pert_val[k], d2 = pert_dim[k];
        if (d0 == v && d2 == v2) {
            snprintf(buf, n, "%s", c->sym[k]);
            return;
        }
        if (v && d0 % v == 0 && d2 == d0 / v * v2) {
            snprintf(buf, n, "%lld*%s", (long long)(d0 / v), c->sym[k]);
            return;
        }
        if (d0 && v % d0 == 0 && v2 % (v / d0) == 0 && d2 == v2 / (v / d0)) {
            snprintf(buf, n, "%s/%lld", c->sym[k], (long long)(v / d0));
            return;
        }
    }
    if (nch == 2) {
        int a = changed[0], b = changed[1];
        int64_t va = c->nominal[a], vb = c->nominal[b];
        if (d0 == va * vb && pert_dim[a] == pert_val[a] * vb && pert_dim[b] == va * pert_val[b]) {
            snprintf(buf, n, "%s*%s", c->sym[a], c->sym[b]);
            return;
        }
    }
    {
        /* d = sum c_k S_k + c0 with integer coefficients (a conv's H - K + 1, a concatenation) */
        size_t len = 0;
        int64_t c0 = d0;
        int lin = 1;
        buf[0] = 0;
        for (int i = 0; i < nch && lin; i++) {
            int k = changed[i];
            int64_t dv = pert_val[k] - c->nominal[k], dd = pert_dim[k] - d0;
            if (!dv || dd % dv) {
                lin = 0;
                break;
            }
            int64_t coef = dd / dv;
            c0 -= coef * c->nominal[k];
            if (coef == 1)
                kg_appendf(buf, n, &len, "%s%s", len ? "+" : "", c->sym[k]);
            else
                kg_appendf(buf, n, &len, "%s%lld*%s", len && coef > 0 ? "+" : "", (long long)coef, c->sym[k]);
        }
        if (lin) {
            if (c0) kg_appendf(buf, n, &len, "%+lld", (long long)c0);
            return;
        }
    }
    /* a relation we do not model: keep the dim constant and stop varying what moves it */
    for (int i = 0; i < nch; i++) fixed[changed[i]] = true;
    snprintf(buf, n, "%lld", (long long)d0);
}

static int add_arg(struct kg_contract *c, const char *name, enum kg_argkind kind, enum kg_io io, enum kg_dtype t)
{
    if (c->nargs == KG_MAX_ARGS) return -1;
    struct kg_arg *a = &c->args[c->nargs++];
    memset(a, 0, sizeof *a);
    kg_strlcpy(a->name, name, sizeof a->name);
    a->kind = kind;
    a->io = io;
    a->dtype = t;
    a->sym = -1;
    return 0;
}

static int synthesise(struct kg_session *s, json_t *doc, struct kg_err *e)
{
    struct kg_contract *c = s->c;
    json_t *syms = json_object_get(doc, "symbols");
    const char *key;
    json_t *val;
    json_object_foreach(syms, key, val)
    {
        if (!json_is_integer(val) || c->nsyms == KG_MAX_SYMS || strlen(key) >= KG_NAME_MAX) continue;
        kg_strlcpy(c->sym[c->nsyms], key, KG_NAME_MAX);
        c->nominal[c->nsyms++] = json_integer_value(val);
    }
    struct shapes nom;
    if (read_shapes(doc, &nom)) return kg_errf(e, "%s: malformed description", c->problem_path);
    if (nom.n_out == 0) return kg_errf(e, "%s: Model.forward returns no tensor", c->problem_path);
    /* one constant at a time: does the problem still build, and which dims move? */
    static struct shapes pert[KG_MAX_SYMS];
    int64_t pert_val[KG_MAX_SYMS];
    bool ok[KG_MAX_SYMS] = {0};
    for (int k = 0; k < c->nsyms; k++) {
        int64_t v = c->nominal[k];
        int64_t tries[2] = {v > 1 ? v + 1 : 2, v > 1 ? 2 * v : 3};
        for (int t = 0; t < 2 && !ok[k]; t++) {
            struct kg_err ee;
            json_t *d = describe(s, 1, &c->sym[k], &tries[t], &ee);
            if (d && !json_object_get(d, "error") && !read_shapes(d, &pert[k]) && pert[k].n_in == nom.n_in &&
                pert[k].n_out == nom.n_out) {
                ok[k] = true;
                pert_val[k] = tries[t];
            }
            json_decref(d);
        }
        if (!ok[k]) c->fixed[k] = true;
    }
    json_t *ins = json_object_get(doc, "inputs"), *outs = json_object_get(doc, "outputs");
    for (int i = 0; i < nom.n_in + nom.n_out; i++) {
        bool is_out = i >= nom.n_in;
        json_t *t = is_out ? json_array_get(outs, (size_t)(i - nom.n_in)) : json_array_get(ins, (size_t)i);
        const char *kind = json_string_value(json_object_get(t, "kind"));
        char name[32];
        snprintf(name, sizeof name, is_out ? "out%d" : "in%d", is_out ? i - nom.n_in : i);
        if (!is_out && kind && strcmp(kind, "tensor")) {
            bool isint = !strcmp(kind, "int");
            if (add_arg(c, name, isint ? KG_ARG_LONG : KG_ARG_DOUBLE, KG_IN, KG_F64))
                return kg_errf(e, "too many inputs");
            c->args[c->nargs - 1].value = json_number_value(json_object_get(t, "value"));
            continue;
        }
        enum kg_dtype dt;
        if (dtype_of(json_string_value(json_object_get(t, "dtype")), &dt))
            return kg_errf(e, "%s: %s %d has a dtype kgate does not handle (%s)", c->problem_path,
                           is_out ? "output" : "input", is_out ? i - nom.n_in : i,
                           json_string_value(json_object_get(t, "dtype")) ?: "?");
        if (add_arg(c, name, KG_ARG_TENSOR, is_out ? KG_OUT : KG_IN, dt)) return kg_errf(e, "too many tensors");
        struct kg_arg *a = &c->args[c->nargs - 1];
        a->rank = nom.s[i].rank;
        for (int d = 0; d < a->rank; d++) {
            int64_t pd[KG_MAX_SYMS];
            for (int k = 0; k < c->nsyms; k++) pd[k] = ok[k] && pert[k].s[i].rank == a->rank ? pert[k].s[i].dims[d] : nom.s[i].dims[d];
            char text[160];
            infer_dim(c, nom.s[i].dims[d], pert_val, pd, ok, text, sizeof text, c->fixed);
            int col;
            struct kg_err ee;
            a->dims[d] = kg_expr_parse(text, strlen(text), lookup, c, &col, &ee);
            if (!a->dims[d]) return kg_errf(e, "internal: inferred dim '%s': %s", text, ee.msg);
        }
        /* integer inputs (labels, indices) keep the problem's own values in every gate */
        if (!kg_dtype_is_float(dt)) a->dist = KG_AD_INT;
    }
    /* verify the inferred dims with every free constant changed at once; a dim they do not
     * predict fixes the constants that moved it */
    int64_t joint[KG_MAX_SYMS];
    char jnames[KG_MAX_SYMS][KG_NAME_MAX];
    int nj = 0;
    for (int k = 0; k < c->nsyms; k++)
        if (!c->fixed[k]) {
            kg_strlcpy(jnames[nj], c->sym[k], KG_NAME_MAX);
            joint[nj++] = pert_val[k];
        }
    if (nj > 1) {
        struct kg_err ee;
        json_t *d = describe(s, nj, jnames, joint, &ee);
        struct shapes js;
        int64_t symv[KG_MAX_SYMS];
        memcpy(symv, c->nominal, sizeof symv);
        for (int k = 0; k < c->nsyms; k++)
            if (!c->fixed[k]) symv[k] = pert_val[k];
        bool ok_joint = d && !json_object_get(d, "error") && !read_shapes(d, &js) && js.n_in == nom.n_in &&
                        js.n_out == nom.n_out;
        for (int i = 0; i < c->nargs; i++) { /* args are the inputs then the outputs: index i of js */
            struct kg_arg *a = &c->args[i];
            int idx = i;
            if (a->kind != KG_ARG_TENSOR) continue;
            for (int dd = 0; dd < a->rank; dd++) {
                int64_t want = 0;
                struct kg_err ve;
                bool same = ok_joint && js.s[idx].rank == a->rank && !kg_expr_eval(a->dims[dd], symv, &want, &ve) &&
                            want == js.s[idx].dims[dd];
                if (same) continue;
                bool any = false;
                for (int k = 0; k < c->nsyms; k++)
                    if (kg_expr_uses(a->dims[dd], k)) c->fixed[k] = any = true;
                if (!ok_joint || !any) /* nothing explains it: vary nothing */
                    for (int k = 0; k < c->nsyms; k++) c->fixed[k] = true;
            }
        }
        json_decref(d);
    }
    /* a constant whose change broke the problem or moved a dim in a way we do not model is
     * fixed; the others are the shape symbols the shapes gate varies */
    const char *dev = json_string_value(json_object_get(doc, "device"));
    s->torch_cuda = dev && !strcmp(dev, "cuda");
    json_t *kernels = json_object_get(doc, "kernels");
    if (json_is_array(kernels)) {
        size_t n = 1, idx;
        json_t *k;
        json_array_foreach(kernels, idx, k) n += strlen(json_string_value(k) ?: "") + 1;
        s->kernels_ref = calloc(1, n);
        if (s->kernels_ref)
            json_array_foreach(kernels, idx, k)
            {
                strcat(s->kernels_ref, json_string_value(k) ?: "");
                strcat(s->kernels_ref, "\n");
            }
    }
    return 0;
}

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
    cl->argv[1] = s->runner_py;
    cl->argv[2] = "3";
    cl->argv[3] = NULL;
    cl->w.pid = -1;
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
    char tmp[2300];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", out, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return kg_errf(e, "cannot write %s", tmp);
    int bad = fputs(kg_torch_runner_py, f) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, out)) {
        unlink(tmp);
        return kg_errf(e, "cannot write %s", out);
    }
    return 0;
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
    if (kg_torch_zygote(&s->zyg, py && *py ? py : "python3", s->runner_py, s->zygote, sizeof s->zygote, &e))
        s->zygote[0] = 0; /* the plain start reports why PyTorch cannot run */
}

int kg_session_open_pair(struct kg_session **out, const char *problem, const char *candidate,
                         const struct kg_session_opts *o, struct kg_err *e)
{
    *out = NULL;
    struct kg_session *s = calloc(1, sizeof *s);
    struct kg_contract *c = calloc(1, sizeof *c);
    if (!s || !c) {
        free(s);
        free(c);
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    double t0 = kg_now();
    s->c = c;
    s->o = *o;
    s->shm_fd = s->oshm_fd = -1;
    s->oracle.w.pid = -1;
    s->zyg.pid = -1;
    s->runner = KG_RUNNER_TORCH;
    c->tol_k = o->tol_k > 0 ? o->tol_k : 2;
    c->deterministic = true;
    for (int i = 0; i < KG_MAX_ARGS; i++) c->alias_of[i] = -1;
    c->lang = KG_LANG_PYTHON;
    c->path = strdup(candidate);
    c->problem_path = strdup(problem);
    size_t pl = 0;
    char *psrc = kg_read_file(problem, &pl, e);
    if (!c->path || !c->problem_path || !psrc) {
        free(psrc);
        kg_session_close(s);
        return KG_EXIT_USAGE;
    }
    c->source = kg_read_file(candidate, &c->source_len, e);
    if (!c->source) {
        free(psrc);
        kg_session_close(s);
        return KG_EXIT_USAGE;
    }
    c->hash = kg_hash64(c->source, c->source_len, kg_hash64(psrc, pl, 0));
    free(psrc);
    char *dup = strdup(candidate);
    if (dup) {
        char *b = basename(dup), *dot = strrchr(b, '.');
        if (dot) *dot = 0;
        kg_strlcpy(c->name, b, sizeof c->name);
        free(dup);
    }
    kg_strlcpy(c->entry, "ModelNew", sizeof c->entry);
    kg_strlcpy(c->oracle_func, "Model", sizeof c->oracle_func);
    snprintf(c->op_text, sizeof c->op_text, "reference Model of %s", problem);
    if (kg_cache_dir(s->cache, sizeof s->cache, e) || kg_torch_runner_path(s->cache, s->runner_py, sizeof s->runner_py, e)) {
        kg_session_close(s);
        return KG_EXIT_INTERNAL;
    }
    use_zygote(s);
    torch_load(s, &s->oracle, 0, problem);
    struct kg_reply rp;
    if (kg_client_start(s, &s->oracle, &rp)) {
        if (rp.status == KG_WS_COMPILE) /* the runner's message starts with FILE:LINE */
            kg_errf(e, "%s", rp.msg);
        else
            kg_errf(e, "%s: the reference could not be loaded (%s): %s", problem,
                    kg_wstatus_name((enum kg_wstatus)rp.status), rp.msg);
        kg_session_close(s);
        return rp.status == KG_WS_UNAVAILABLE ? KG_EXIT_UNAVAILABLE : KG_EXIT_USAGE;
    }
    json_t *doc = describe(s, 0, NULL, NULL, e);
    if (!doc || json_object_get(doc, "error")) {
        if (doc) kg_errf(e, "%s: %s", problem, json_string_value(json_object_get(doc, "error")) ?: "error");
        json_decref(doc);
        kg_session_close(s);
        return KG_EXIT_USAGE;
    }
    int rc = synthesise(s, doc, e);
    json_decref(doc);
    if (rc) {
        kg_session_close(s);
        return KG_EXIT_USAGE;
    }
    s->cand_dtype[0] = kg_contract_default_dtype(c);
    torch_load(s, &s->cand[0], 1, candidate);
    s->ncand = 1;
    if (kg_client_start(s, &s->cand[0], &rp)) {
        if (rp.status == KG_WS_COMPILE)
            kg_errf(e, "%s", rp.msg);
        else
            kg_errf(e, "%s: the candidate could not be loaded (%s): %s", candidate,
                    kg_wstatus_name((enum kg_wstatus)rp.status), rp.msg);
        kg_session_close(s);
        return rp.status == KG_WS_UNAVAILABLE ? KG_EXIT_UNAVAILABLE : KG_EXIT_USAGE;
    }
    s->t_total = kg_now() - t0;
    *out = s;
    return KG_EXIT_OK;
}

/* ---- inputs --------------------------------------------------------------------------------- */

/* The gate's distribution, as a transformation of the problem's own inputs. */
static void transform(const struct kg_case *k, struct kg_inputs *in)
{
    for (int i = 0; i < k->c->nargs; i++) {
        const struct kg_arg *a = &k->c->args[i];
        struct kg_tensor *t = &in->t[i];
        if (!kg_arg_is_input(a) || !t->data || !kg_dtype_is_float(t->dtype)) continue;
        for (int64_t j = 0; j < t->numel; j++) {
            double v = kg_load(t->dtype, t->data, j);
            switch (k->dist) {
            case KG_DIST_LARGE_MEAN: v += 1000.0; break;
            case KG_DIST_MIXED: v *= pow(10.0, 8.0 * kg_rng_uniform(k->seed, 2000 + (uint64_t)i, (uint64_t)j) - 4.0); break;
            case KG_DIST_BINARY: v = v > 0; break;
            default: continue;
            }
            kg_store(t->dtype, t->data, j, v);
        }
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

int kg_torch_inputs(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_err *e)
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
        char id[384];
        kg_case_id(k, id, sizeof id);
        return kg_errf(e, "%s: get_inputs() at %s: %s", k->c->problem_path, id, rp.msg);
    }
    n = 0;
    for (int i = 0; i < k->c->nargs; i++) {
        const struct kg_arg *a = &k->c->args[i];
        if (!kg_arg_is_input(a) && a->kind == KG_ARG_TENSOR) continue;
        if (a->kind == KG_ARG_TENSOR) {
            if (kg_tensor_alloc(&in->t[i], k->adtype[i], k->shape[i].rank, k->shape[i].dims)) {
                kg_inputs_free(in);
                return kg_errf(e, "out of memory for input %s", a->name);
            }
            memcpy(in->t[i].data, s->oshm + p->off[n], p->bytes[n]);
        }
        n++;
    }
    transform(k, in);
    return 0;
}

/* ---- the oracle ------------------------------------------------------------------------------ */

int kg_torch_oracle(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                    struct kg_tensor *const *out, int nout, int working, int *unchanged, struct kg_err *e)
{
    static struct kg_req rq;
    memset(&rq, 0, sizeof rq);
    rq.magic = KG_PROTO_MAGIC;
    rq.cmd = KG_CMD_ORACLE;
    struct kg_req_oracle *o = &rq.u.oracle;
    o->working = working;
    uint64_t off = 0;
    for (int i = 0; i < k->c->nargs; i++) {
        const struct kg_arg *a = &k->c->args[i];
        if (a->io != KG_IN) continue;
        if (o->n_in == KG_OP_MAX_IO) return kg_errf(e, "%s: more than %d inputs", k->c->problem_path, KG_OP_MAX_IO);
        struct kg_req_tensor *t = &o->in[o->n_in++];
        t->kind = a->kind;
        if (a->kind != KG_ARG_TENSOR) {
            t->value = a->value;
            continue;
        }
        t->dtype = k->adtype[i];
        t->rank = k->shape[i].rank;
        memcpy(t->dims, k->shape[i].dims, sizeof t->dims);
        t->off = off;
        off += (uint64_t)k->numel[i] * 8 + 64;
    }
    int j = 0;
    for (int i = 0; i < k->c->nargs && j < nout; i++) {
        if (!kg_arg_is_output(&k->c->args[i])) continue;
        struct kg_req_tensor *t = &o->out[o->n_out++];
        t->kind = KG_ARG_TENSOR;
        t->dtype = k->adtype[i];
        t->rank = k->shape[i].rank;
        memcpy(t->dims, k->shape[i].dims, sizeof t->dims);
        t->off = off;
        off += (uint64_t)out[j++]->numel * 8 + 64;
    }
    o->shm_size = off ? off : 8;
    o->nsym = k->c->nsyms;
    for (int i = 0; i < k->c->nsyms; i++) {
        kg_strlcpy(o->sym_names[i], k->c->sym[i], KG_NAME_MAX);
        o->sym_values[i] = k->sym[i];
    }
    if (kg_session_oshm(s, o->shm_size, e)) return -1;
    int q = 0;
    for (int i = 0; i < k->c->nargs; i++) {
        const struct kg_arg *a = &k->c->args[i];
        if (a->io != KG_IN) continue;
        if (a->kind == KG_ARG_TENSOR) {
            double *d = (double *)(s->oshm + o->in[q].off);
            for (int64_t x = 0; x < in->t[i].numel; x++) d[x] = kg_load(in->t[i].dtype, in->t[i].data, x);
        }
        q++;
    }
    struct kg_reply rp;
    if (kg_session_call(s, &s->oracle, &rq, &rp) || rp.status != KG_WS_OK)
        return kg_errf(e, "%s: the reference Model failed: %s", k->c->problem_path, rp.msg);
    for (j = 0; j < nout; j++) memcpy(out[j]->data, s->oshm + o->out[j].off, (size_t)out[j]->numel * 8);
    if (unchanged) *unchanged = working == 4 && rp.code == 1;
    return 0;
}

/* ---- decoys -------------------------------------------------------------------------------- */

int kg_torch_decoy(struct kg_session *s, struct kg_torch_decoy *d, struct kg_err *e)
{
    memset(d, 0, sizeof *d);
    if (!s->kernels_ref) return kg_errf(e, "no kernel records: the reference ran on the CPU (no CUDA)");
    struct kg_case k;
    if (kg_nominal_case(s, kg_contract_default_dtype(s->c), 0, KG_DIST_NORMAL, &k, e)) return -1;
    struct kg_inputs in;
    if (kg_session_inputs(s, &k, &in, e)) return -1;
    struct kg_exec x;
    struct kg_exec_opts o = {.fill = KG_FILL_ZERO, .guard_byte = 0xA5, .flags = KG_RUN_PROFILE};
    kg_exec(s, &k, &in, &o, &x);
    kg_inputs_free(&in);
    int rc = 0;
    if (x.status != KG_WS_OK) {
        rc = kg_errf(e, "the profiled run failed: %s", x.msg);
    } else if (s->last_run.nlaunch < 0) {
        rc = kg_errf(e, "the profiler recorded nothing: %s", s->last_run.msg);
    } else {
        d->valid = true;
        d->launched = s->last_run.nlaunch;
        for (int i = 0; i < s->last_run.nlaunch && i < KG_MAX_LAUNCH_RECS; i++) {
            const char *name = s->last_run.launch[i].name;
            char line[140];
            snprintf(line, sizeof line, "%s\n", name);
            bool in_ref = strstr(s->kernels_ref, line) != NULL;
            if (!in_ref && d->own < (int)(sizeof d->own_names / sizeof *d->own_names))
                kg_strlcpy(d->own_names[d->own], name, sizeof d->own_names[0]);
            if (!in_ref) d->own++;
        }
        d->decoy = d->own == 0;
    }
    kg_exec_free(&x);
    return rc;
}

int kg_torch_standard(struct kg_session *s, double tol, char *why, size_t n)
{
    /* its own fresh worker, holding the problem and the candidate, as KernelBench's process does */
    struct kg_client cl;
    memset(&cl, 0, sizeof cl);
    torch_load(s, &cl, 2, s->c->path);
    struct kg_reply rp;
    if (kg_client_start(s, &cl, &rp)) {
        snprintf(why, n, "the standard test's worker did not start (%s): %s", kg_wstatus_name((enum kg_wstatus)rp.status),
                 rp.msg);
        return -1;
    }
    struct kg_req *rq = problem_req(KG_CMD_STANDARD, NULL);
    rq->u.problem.tol = tol;
    int rc = kg_worker_call(&cl.w, rq, -1, &rp, 5 * s->o.timeout + 60);
    kg_worker_stop(&cl.w);
    if (!rc && rp.status == KG_WS_OK) {
        snprintf(why, n, "%s", rp.msg);
        return rp.code == 1;
    }
    /* under KernelBench a candidate that raises, crashes or hangs is simply incorrect */
    snprintf(why, n, "%s: %.300s", kg_wstatus_name((enum kg_wstatus)rp.status), rp.msg);
    return rp.status == KG_WS_BAD_REQUEST ? -1 : 0;
}

int kg_torch_sample(struct kg_session *s, bool candidate, const struct kg_case *k, const int64_t *idx, int n, int nout,
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
    uint8_t *mem = candidate ? s->shm : s->oshm;
    memcpy(mem, idx, (size_t)n * 8);
    struct kg_client *cl = candidate ? kg_session_client(s, k->dtype, rp) : &s->oracle;
    if (!cl) return kg_errf(e, "the candidate's worker did not start: %s", rp->msg);
    if (kg_client_start(s, cl, rp)) return kg_errf(e, "the worker did not start: %s", rp->msg);
    int rc = kg_worker_call(&cl->w, rq, candidate ? s->shm_fd : s->oshm_fd, rp, 120);
    if (rc || rp->status != KG_WS_OK) return kg_errf(e, "%s", rp->msg);
    for (int j = 0; j < nout; j++) memcpy(vals + (size_t)j * (size_t)n, mem + p->off[1 + j], (size_t)n * 8);
    return 0;
}
