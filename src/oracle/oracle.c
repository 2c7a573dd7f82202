/* oracle.c: the table of built-in ops and the generic entry points over it: lookup, parsing
 * of `op:` lines, shape and arity checks, evaluation. The ops themselves live one family per
 * file (elementwise.c, reduce.c, norm.c, linalg.c); this file only knows their opdefs. */
#include "oracle/oracle.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defined in the op files; listed here rather than in oracle.h because nothing but the
 * table should name an op directly (callers go through kg_op_find). */
extern const struct kg_opdef kg_opdef_relu, kg_opdef_leaky_relu, kg_opdef_gelu, kg_opdef_gelu_tanh, kg_opdef_silu,
    kg_opdef_sigmoid, kg_opdef_tanh, kg_opdef_exp, kg_opdef_scale, kg_opdef_add, kg_opdef_mul;
extern const struct kg_opdef kg_opdef_sum, kg_opdef_mean, kg_opdef_prod, kg_opdef_max, kg_opdef_min, kg_opdef_argmax,
    kg_opdef_softmax, kg_opdef_log_softmax, kg_opdef_cumsum;
extern const struct kg_opdef kg_opdef_layernorm, kg_opdef_rmsnorm;
extern const struct kg_opdef kg_opdef_matmul, kg_opdef_bmm, kg_opdef_transpose2d, kg_opdef_causal_attention;
extern const struct kg_opdef kg_opdef_linear_attn_fwd, kg_opdef_gla_fwd, kg_opdef_ssd_fwd, kg_opdef_gdn_fwd,
    kg_opdef_kda_fwd, kg_opdef_linear_attn_bwd, kg_opdef_gla_bwd, kg_opdef_ssd_bwd, kg_opdef_gdn_bwd, kg_opdef_kda_bwd;

const struct kg_opdef *const kg_ops[] = {
    &kg_opdef_relu,
    &kg_opdef_leaky_relu,
    &kg_opdef_gelu,
    &kg_opdef_gelu_tanh,
    &kg_opdef_silu,
    &kg_opdef_sigmoid,
    &kg_opdef_tanh,
    &kg_opdef_exp,
    &kg_opdef_scale,
    &kg_opdef_add,
    &kg_opdef_mul,
    &kg_opdef_sum,
    &kg_opdef_mean,
    &kg_opdef_prod,
    &kg_opdef_max,
    &kg_opdef_min,
    &kg_opdef_argmax,
    &kg_opdef_softmax,
    &kg_opdef_log_softmax,
    &kg_opdef_cumsum,
    &kg_opdef_layernorm,
    &kg_opdef_rmsnorm,
    &kg_opdef_matmul,
    &kg_opdef_bmm,
    &kg_opdef_transpose2d,
    &kg_opdef_causal_attention,
    &kg_opdef_linear_attn_fwd,
    &kg_opdef_gla_fwd,
    &kg_opdef_ssd_fwd,
    &kg_opdef_gdn_fwd,
    &kg_opdef_kda_fwd,
    &kg_opdef_linear_attn_bwd,
    &kg_opdef_gla_bwd,
    &kg_opdef_ssd_bwd,
    &kg_opdef_gdn_bwd,
    &kg_opdef_kda_bwd,
    NULL,
};

const struct kg_opdef *kg_op_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; kg_ops[i]; i++)
        if (strcmp(kg_ops[i]->name, name) == 0) return kg_ops[i];
    return NULL;
}

/* ---- parsing ------------------------------------------------------------------------- */

/* Integer-valued keywords; everything else is a real number. */
static bool param_is_int(const char *name)
{
    return strcmp(name, "dim") == 0;
}

static const char *skip_ws(const char *p)
{
    while (isspace((unsigned char)*p)) p++;
    return p;
}

static size_t ident_len(const char *p)
{
    size_t n = 0;
    if (!(isalpha((unsigned char)p[0]) || p[0] == '_')) return 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
    return n;
}

/* The length of the token starting at p, for quoting what could not be read. */
static int token_len(const char *p)
{
    int n = 0;
    while (p[n] && p[n] != ',' && p[n] != ')' && !isspace((unsigned char)p[n]) && n < 40) n++;
    return n ? n : (p[0] ? 1 : 0);
}

static int unknown_op(const char *name, size_t n, struct kg_err *e)
{
    char known[2048];
    size_t len = 0;
    known[0] = '\0';
    for (int i = 0; kg_ops[i]; i++) kg_appendf(known, sizeof known, &len, "%s%s", i ? ", " : "", kg_ops[i]->name);
    return kg_errf(e, "unknown op '%.*s' (known ops: %s)", (int)(n < 64 ? n : 64), name, known);
}

static int unknown_keyword(const struct kg_opdef *d, const char *kw, size_t n, struct kg_err *e)
{
    if (!d->params[0]) return kg_errf(e, "%s takes no keywords; got '%.*s'", d->name, (int)(n < 64 ? n : 64), kw);
    char known[256];
    size_t len = 0;
    known[0] = '\0';
    for (int i = 0; i < KG_OP_MAX_PARAMS && d->params[i]; i++)
        kg_appendf(known, sizeof known, &len, "%s%s", i ? ", " : "", d->params[i]);
    return kg_errf(e, "%s has no keyword '%.*s' (keywords: %s)", d->name, (int)(n < 64 ? n : 64), kw, known);
}

static bool starts_number(const char *p)
{
    return isdigit((unsigned char)p[0]) ||
           ((p[0] == '-' || p[0] == '+' || p[0] == '.') && p[1] && (isdigit((unsigned char)p[1]) || p[1] == '.'));
}

/* A value where a keyword belongs, "scale(2)": the parameters are keywords; the message writes
 * the call with the op's own keyword (or says the op takes none). */
static int positional(const struct kg_opdef *d, const char *p, struct kg_err *e)
{
    if (!d->params[0])
        return kg_errf(e, "%s takes no parameters; got '%.*s' (write %s)", d->name, token_len(p), p, d->name);
    if (!d->params[1])
        return kg_errf(e, "%s: the parameters are keywords, not positions: write %s(%s=%.*s)", d->name, d->name,
                       d->params[0], token_len(p), p);
    char known[256];
    size_t len = 0;
    known[0] = '\0';
    for (int i = 0; i < KG_OP_MAX_PARAMS && d->params[i]; i++)
        kg_appendf(known, sizeof known, &len, "%s%s=...", i ? ", " : "", d->params[i]);
    return kg_errf(e, "%s: the parameters are keywords, not positions: write %s(%s)", d->name, d->name, known);
}

/* Whether strto* read something from p and stopped at the end of a token. */
static bool value_ends(const char *p, const char *q)
{
    return q != p && (!*q || *q == ',' || *q == ')' || isspace((unsigned char)*q));
}

/* Reads the value of keyword k at p; sets *end past it. */
static int parse_value(const struct kg_opdef *d, int k, const char *p, const char **end, double *v, struct kg_err *e)
{
    const char *kw = d->params[k];
    char *q;
    errno = 0;
    if (param_is_int(kw)) {
        long l = strtol(p, &q, 10);
        if (!value_ends(p, q))
            return kg_errf(e, "%s: malformed number '%.*s' for %s (expected an integer)", d->name, token_len(p), p, kw);
        if (errno == ERANGE || l < -KG_MAX_RANK || l > KG_MAX_RANK)
            return kg_errf(e, "%s: %s=%.*s is out of range (tensors have at most %d dims)", d->name, kw, token_len(p),
                           p, KG_MAX_RANK);
        *v = (double)l;
    } else {
        double x = strtod(p, &q);
        if (!value_ends(p, q)) return kg_errf(e, "%s: malformed number '%.*s' for %s", d->name, token_len(p), p, kw);
        if (!isfinite(x)) return kg_errf(e, "%s: %s=%.*s must be a finite number", d->name, kw, token_len(p), p);
        *v = x;
    }
    *end = q;
    return 0;
}

int kg_op_parse(const char *text, struct kg_opcall *call, struct kg_err *e)
{
    if (!text) return kg_errf(e, "no op given");
    const char *p = skip_ws(text);
    size_t n = ident_len(p);
    if (!n) return kg_errf(e, "expected an op name, got '%.*s'", token_len(p), p);
    const struct kg_opdef *d = NULL;
    for (int i = 0; kg_ops[i] && !d; i++)
        if (strlen(kg_ops[i]->name) == n && memcmp(kg_ops[i]->name, p, n) == 0) d = kg_ops[i];
    if (!d) return unknown_op(p, n, e);
    p = skip_ws(p + n);

    struct kg_opcall c = {.def = d};
    bool seen[KG_OP_MAX_PARAMS] = {false};
    for (int k = 0; k < KG_OP_MAX_PARAMS; k++) c.param[k] = d->defaults[k];
    if (*p == '(') {
        p = skip_ws(p + 1);
        while (*p != ')') {
            if (!*p) return kg_errf(e, "%s: missing ')' after the keywords", d->name);
            size_t kn = ident_len(p);
            if (!kn && starts_number(p)) return positional(d, p, e);
            if (!kn) return kg_errf(e, "%s: expected a keyword or ')', got '%.*s'", d->name, token_len(p), p);
            int k = -1;
            for (int i = 0; i < KG_OP_MAX_PARAMS && d->params[i] && k < 0; i++)
                if (strlen(d->params[i]) == kn && memcmp(d->params[i], p, kn) == 0) k = i;
            if (k < 0) return unknown_keyword(d, p, kn, e);
            if (seen[k]) return kg_errf(e, "%s: keyword '%s' given twice", d->name, d->params[k]);
            seen[k] = true;
            p = skip_ws(p + kn);
            if (*p != '=')
                return kg_errf(e, "%s: expected '=' after %s, got '%.*s'", d->name, d->params[k], token_len(p), p);
            if (parse_value(d, k, skip_ws(p + 1), &p, &c.param[k], e)) return -1;
            p = skip_ws(p);
            if (*p == ',') {
                p = skip_ws(p + 1);
                if (*p == ')') return kg_errf(e, "%s: expected a keyword after ','", d->name);
            } else if (*p && *p != ')') {
                return kg_errf(e, "%s: expected ',' or ')' after %s=..., got '%.*s'", d->name, d->params[k],
                               token_len(p), p);
            }
        }
        p = skip_ws(p + 1);
        if (*p) return kg_errf(e, "%s: unexpected '%.40s' after ')'", d->name, p);
    } else if (*p) {
        return kg_errf(e, "%s: unexpected '%.40s' after the op name (usage: %s)", d->name, p, d->doc);
    }
    for (int k = 0; k < KG_OP_MAX_PARAMS && d->params[k]; k++)
        if (isnan(c.param[k]))
            return kg_errf(e, "%s: missing required keyword '%s' (%s)", d->name, d->params[k], d->doc);
    *call = c;
    return 0;
}

/* ---- checks -------------------------------------------------------------------------- */

static bool same_shape(const struct kg_shape *x, const struct kg_shape *y)
{
    if (x->rank != y->rank) return false;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] != y->dims[i]) return false;
    return true;
}

static int check_elementwise(const struct kg_opdef *d, int n_in, const struct kg_shape *in, int n_out,
                             const struct kg_shape *out, struct kg_err *e)
{
    char b0[KG_SHAPE_TEXT_MAX], b1[KG_SHAPE_TEXT_MAX];
    for (int i = 1; i < n_in; i++)
        if (!same_shape(&in[i], &in[0]))
            return kg_errf(e,
                           "%s is elementwise: every input and output has the same shape (no "
                           "broadcasting); got input %d %s for input 0 %s",
                           d->name, i, kg_shape_str(&in[i], b1, sizeof b1), kg_shape_str(&in[0], b0, sizeof b0));
    for (int i = 0; i < n_out; i++)
        if (!same_shape(&out[i], &in[0]))
            return kg_errf(e,
                           "%s is elementwise: every input and output has the same shape (no "
                           "broadcasting); got output %d %s for input %s",
                           d->name, i, kg_shape_str(&out[i], b1, sizeof b1), kg_shape_str(&in[0], b0, sizeof b0));
    return 0;
}

static int check_rank(const char *op, const char *what, int i, const struct kg_shape *s, struct kg_err *e)
{
    if (s->rank < 0 || s->rank > KG_MAX_RANK)
        return kg_errf(e, "%s: %s %d has rank %d (at most %d dims)", op, what, i, s->rank, KG_MAX_RANK);
    for (int k = 0; k < s->rank; k++)
        if (s->dims[k] < 0)
            return kg_errf(e, "%s: %s %d has a negative dim (%lld)", op, what, i, (long long)s->dims[k]);
    return 0;
}

int kg_op_check(const struct kg_opcall *c, int n_in, const struct kg_shape *in, int n_out, const struct kg_shape *out,
                struct kg_err *e)
{
    if (!c || !c->def) return kg_errf(e, "no op to check");
    const struct kg_opdef *d = c->def;
    if (n_in != d->n_in || n_out != d->n_out)
        return kg_errf(e, "%s takes %d input%s and %d output%s; got %d input%s and %d output%s", d->name, d->n_in,
                       d->n_in == 1 ? "" : "s", d->n_out, d->n_out == 1 ? "" : "s", n_in, n_in == 1 ? "" : "s", n_out,
                       n_out == 1 ? "" : "s");
    for (int i = 0; i < n_in; i++)
        if (check_rank(d->name, "input", i, &in[i], e)) return -1;
    for (int i = 0; i < n_out; i++)
        if (check_rank(d->name, "output", i, &out[i], e)) return -1;
    if (d->check) return d->check(c, in, out, e);
    return check_elementwise(d, n_in, in, n_out, out, e);
}

int kg_op_reduce_axis(const struct kg_opcall *c, const struct kg_shape *in0)
{
    if (!c || !c->def || !c->def->reduce_axis || !in0) return -1;
    return c->def->reduce_axis(c, in0);
}

/* ---- evaluation ---------------------------------------------------------------------- */

static int tensor_ok(const char *op, const char *what, int i, const struct kg_tensor *t, struct kg_shape *s,
                     struct kg_err *e)
{
    if (!t) return kg_errf(e, "%s: %s %d is missing", op, what, i);
    if (t->dtype != KG_F64)
        return kg_errf(e, "%s: %s %d is %s; the oracle evaluates f64 tensors only", op, what, i,
                       kg_dtype_name(t->dtype));
    if (t->rank < 0 || t->rank > KG_MAX_RANK) return kg_errf(e, "%s: %s %d has rank %d", op, what, i, t->rank);
    int64_t numel = 1;
    s->rank = t->rank;
    for (int k = 0; k < t->rank; k++) {
        s->dims[k] = t->dims[k];
        if (t->dims[k] < 0 || (t->dims[k] && numel > INT64_MAX / t->dims[k]))
            return kg_errf(e, "%s: %s %d has a bad shape", op, what, i);
        numel *= t->dims[k];
    }
    if (numel != t->numel)
        return kg_errf(e, "%s: %s %d has numel %lld but its dims make %lld", op, what, i, (long long)t->numel,
                       (long long)numel);
    if (numel && !t->data) return kg_errf(e, "%s: %s %d has no data", op, what, i);
    return 0;
}

int kg_op_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
               struct kg_tensor *const *out, struct kg_err *e)
{
    if (!c || !c->def) return kg_errf(e, "no op to evaluate");
    const struct kg_opdef *d = c->def;
    if (a != KG_EXACT && a != KG_W32 && a != KG_W64 && !(a == KG_EXACT_ALT && (d->flags & KG_OP_HAS_ALT)) &&
        !((a == KG_WACC16 || a == KG_WACCBF16) && (d->flags & KG_OP_LOWACC)))
        return kg_errf(e, "%s: unknown arithmetic mode %d", d->name, (int)a);
    if (d->n_in > KG_OP_MAX_IO || d->n_out > KG_OP_MAX_IO) return kg_errf(e, "%s: too many inputs or outputs", d->name);
    if (!in || !out) return kg_errf(e, "%s: no input or output tensors", d->name);
    struct kg_shape si[KG_OP_MAX_IO], so[KG_OP_MAX_IO];
    for (int i = 0; i < d->n_in; i++)
        if (tensor_ok(d->name, "input", i, in[i], &si[i], e)) return -1;
    for (int i = 0; i < d->n_out; i++)
        if (tensor_ok(d->name, "output", i, out[i], &so[i], e)) return -1;
    /* The shapes are checked again here: eval indexes by them, so a mismatch would read or
     * write out of bounds rather than merely give a wrong answer. */
    if (kg_op_check(c, d->n_in, si, d->n_out, so, e)) return -1;
    return d->eval(c, a, in, out, e);
}
