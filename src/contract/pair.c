/* pair.c: synthesising a KernelBench pair's contract (pair.h). */
#include "contract/pair.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kg_contract *kg_pair_contract_new(const char *problem, const char *candidate, struct kg_err *e)
{
    struct kg_contract *c = calloc(1, sizeof *c);
    if (!c) {
        kg_errf(e, "out of memory");
        return NULL;
    }
    c->tol_k = 2;
    c->deterministic = true;
    for (int i = 0; i < KG_MAX_ARGS; i++) c->alias_of[i] = -1;
    c->lang = KG_LANG_PYTHON;
    c->path = strdup(candidate);
    c->problem_path = strdup(problem);
    size_t pl = 0;
    char *psrc = kg_read_file(problem, KG_SOURCE_MAX, &pl, e);
    if (!c->path || !c->problem_path || !psrc) {
        if (!c->path || !c->problem_path) kg_errf(e, "out of memory");
        free(psrc);
        kg_contract_free(c);
        return NULL;
    }
    c->source = kg_read_file(candidate, KG_SOURCE_MAX, &c->source_len, e);
    if (!c->source) {
        free(psrc);
        kg_contract_free(c);
        return NULL;
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
    return c;
}

/* ---- a description's shapes ------------------------------------------------------------------ */

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

/* ---- dims as expressions of the module's constants ------------------------------------------- */

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

/* One constant at a time: does the problem still build, and which dims move? A constant whose
 * change breaks the problem is fixed. */
struct probes {
    struct shapes nom;
    struct shapes pert[KG_MAX_SYMS];
    int64_t val[KG_MAX_SYMS];
    bool ok[KG_MAX_SYMS];
};

static void probe_constants(struct kg_contract *c, struct probes *p, kg_describe_fn describe, void *ud)
{
    for (int k = 0; k < c->nsyms; k++) {
        int64_t v = c->nominal[k];
        int64_t tries[2] = {v > 1 ? v + 1 : 2, v > 1 ? 2 * v : 3};
        for (int t = 0; t < 2 && !p->ok[k]; t++) {
            struct kg_err ee;
            json_t *d = describe(ud, 1, &c->sym[k], &tries[t], &ee);
            if (d && !json_object_get(d, "error") && !read_shapes(d, &p->pert[k]) && p->pert[k].n_in == p->nom.n_in &&
                p->pert[k].n_out == p->nom.n_out) {
                p->ok[k] = true;
                p->val[k] = tries[t];
            }
            json_decref(d);
        }
        if (!p->ok[k]) c->fixed[k] = true;
    }
}

/* The i-th input or output of the description as an arg, its dims inferred from the probes. */
static int describe_arg(struct kg_contract *c, const struct probes *p, json_t *t, int i, struct kg_err *e)
{
    const struct shapes *nom = &p->nom;
    bool is_out = i >= nom->n_in;
    const char *kind = json_string_value(json_object_get(t, "kind"));
    char name[32];
    snprintf(name, sizeof name, is_out ? "out%d" : "in%d", is_out ? i - nom->n_in : i);
    if (!is_out && kind && strcmp(kind, "tensor")) {
        bool isint = !strcmp(kind, "int");
        if (add_arg(c, name, isint ? KG_ARG_LONG : KG_ARG_DOUBLE, KG_IN, KG_F64)) return kg_errf(e, "too many inputs");
        c->args[c->nargs - 1].value = json_number_value(json_object_get(t, "value"));
        return 0;
    }
    enum kg_dtype dt;
    if (dtype_of(json_string_value(json_object_get(t, "dtype")), &dt))
        return kg_errf(e, "%s: %s %d has a dtype kgate does not handle (%s)", c->problem_path,
                       is_out ? "output" : "input", is_out ? i - nom->n_in : i,
                       json_string_value(json_object_get(t, "dtype")) ?: "?");
    if (add_arg(c, name, KG_ARG_TENSOR, is_out ? KG_OUT : KG_IN, dt)) return kg_errf(e, "too many tensors");
    struct kg_arg *a = &c->args[c->nargs - 1];
    a->rank = nom->s[i].rank;
    for (int d = 0; d < a->rank; d++) {
        int64_t pd[KG_MAX_SYMS];
        for (int k = 0; k < c->nsyms; k++)
            pd[k] = p->ok[k] && p->pert[k].s[i].rank == a->rank ? p->pert[k].s[i].dims[d] : nom->s[i].dims[d];
        char text[160];
        infer_dim(c, nom->s[i].dims[d], p->val, pd, p->ok, text, sizeof text, c->fixed);
        int col;
        struct kg_err ee;
        a->dims[d] = kg_expr_parse(text, strlen(text), lookup, c, &col, &ee);
        if (!a->dims[d]) return kg_errf(e, "internal: inferred dim '%s': %s", text, ee.msg);
    }
    /* integer inputs (labels, indices) keep the problem's own values in every gate */
    if (!kg_dtype_is_float(dt)) a->dist = KG_AD_INT;
    return 0;
}

/* Verifies the inferred dims with every free constant changed at once; a dim they do not
 * predict fixes the constants that moved it (all of them when nothing explains it). */
static void verify_jointly(struct kg_contract *c, const struct probes *p, kg_describe_fn describe, void *ud)
{
    int64_t joint[KG_MAX_SYMS];
    char jnames[KG_MAX_SYMS][KG_NAME_MAX];
    int nj = 0;
    for (int k = 0; k < c->nsyms; k++)
        if (!c->fixed[k]) {
            kg_strlcpy(jnames[nj], c->sym[k], KG_NAME_MAX);
            joint[nj++] = p->val[k];
        }
    if (nj <= 1) return;
    struct kg_err ee;
    json_t *d = describe(ud, nj, jnames, joint, &ee);
    struct shapes js;
    int64_t symv[KG_MAX_SYMS];
    memcpy(symv, c->nominal, sizeof symv);
    for (int k = 0; k < c->nsyms; k++)
        if (!c->fixed[k]) symv[k] = p->val[k];
    bool ok_joint =
        d && !json_object_get(d, "error") && !read_shapes(d, &js) && js.n_in == p->nom.n_in && js.n_out == p->nom.n_out;
    for (int i = 0; i < c->nargs; i++) { /* args are the inputs then the outputs: index i of js */
        struct kg_arg *a = &c->args[i];
        if (a->kind != KG_ARG_TENSOR) continue;
        for (int dd = 0; dd < a->rank; dd++) {
            int64_t want = 0;
            struct kg_err ve;
            bool same = ok_joint && js.s[i].rank == a->rank && !kg_expr_eval(a->dims[dd], symv, &want, &ve) &&
                        want == js.s[i].dims[dd];
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

int kg_pair_synthesise(struct kg_contract *c, json_t *doc, kg_describe_fn describe, void *ud, struct kg_err *e)
{
    json_t *syms = json_object_get(doc, "symbols");
    const char *key;
    json_t *val;
    json_object_foreach(syms, key, val)
    {
        if (!json_is_integer(val) || c->nsyms == KG_MAX_SYMS || strlen(key) >= KG_NAME_MAX) continue;
        kg_strlcpy(c->sym[c->nsyms], key, KG_NAME_MAX);
        c->nominal[c->nsyms++] = json_integer_value(val);
    }
    static struct probes p;
    memset(&p, 0, sizeof p);
    if (read_shapes(doc, &p.nom)) return kg_errf(e, "%s: malformed description", c->problem_path);
    if (p.nom.n_out == 0) return kg_errf(e, "%s: Model.forward returns no tensor", c->problem_path);
    probe_constants(c, &p, describe, ud);
    json_t *ins = json_object_get(doc, "inputs"), *outs = json_object_get(doc, "outputs");
    for (int i = 0; i < p.nom.n_in + p.nom.n_out; i++) {
        json_t *t = i >= p.nom.n_in ? json_array_get(outs, (size_t)(i - p.nom.n_in)) : json_array_get(ins, (size_t)i);
        if (describe_arg(c, &p, t, i, e)) return -1;
    }
    /* a constant whose change broke the problem or moved a dim in a way we do not model is
     * fixed; the others are the shape symbols the shapes gate varies */
    verify_jointly(c, &p, describe, ud);
    return 0;
}
