/* args.c: the keys about the entry's parameters: shape: (the symbols), args: (tensors with
 * dims over the symbols, and scalars), sweep:, launch: (grid, block and smem expressions), alias:
 * and inputs:. Each parser takes the key's value and line; contract.c calls them in order. */
#include "contract/parse.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shape: and sweep:, the symbols ------------------------------------------------------ */

int kg_parse_shape(struct kg_parse *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = kg_next_item(&cur, " \t,"))) {
        char *eq = strchr(item, '=');
        if (!eq) return kg_perr(x, line, "shape: expected SYMBOL=VALUE, got '%s'", item);
        *eq = 0;
        char *name = kg_trim(item), *val = kg_trim(eq + 1);
        if (!kg_valid_ident(name, strlen(name)))
            return kg_perr(x, line, "shape: '%s' is not a valid symbol name", name);
        if (kg_lookup_sym(c, name, strlen(name)) >= 0) return kg_perr(x, line, "shape: symbol '%s' given twice", name);
        if (c->nsyms == KG_MAX_SYMS) return kg_perr(x, line, "shape: more than %d symbols", KG_MAX_SYMS);
        int64_t n;
        if (kg_parse_int64(val, &n) || n < 0)
            return kg_perr(x, line, "shape: %s=%s: expected a non-negative integer", name, val);
        kg_strlcpy(c->sym[c->nsyms], name, KG_NAME_MAX);
        c->nominal[c->nsyms++] = n;
    }
    return 0;
}

/* Scalar a takes shape symbol a->sym as its C type: v, one of the symbol's values (`key:` on
 * `line`), must fit it. Checked at load so that it is the contract's error (exit 2), not a
 * gate's when a case is built. */
static int symbol_fits(struct kg_parse *x, const struct kg_arg *a, const char *key, int64_t v, int line)
{
    if (a->kind == KG_ARG_INT && (v > INT32_MAX || v < INT32_MIN))
        return kg_perr(x, line, "%s: %s=%lld does not fit '%s: int' (at most %d; declare %s: long)", key,
                       x->c->sym[a->sym], (long long)v, a->name, INT32_MAX, a->name);
    return 0;
}

int kg_parse_sweep(struct kg_parse *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = kg_next_item(&cur, " \t"))) {
        char *eq = strchr(item, '=');
        if (!eq) return kg_perr(x, line, "sweep: expected SYMBOL=V1,V2,..., got '%s'", item);
        *eq = 0;
        char *name = kg_trim(item);
        int k = kg_lookup_sym(c, name, strlen(name));
        if (k < 0) return kg_perr(x, line, "sweep: undefined symbol '%s' (declare it in shape:)", name);
        char *vc = eq + 1, *val;
        int nvals = 0;
        while ((val = kg_next_item(&vc, ","))) {
            nvals++;
            int64_t n;
            if (kg_parse_int64(val, &n) || n < 0)
                return kg_perr(x, line, "sweep: %s: '%s' is not a non-negative integer", name, val);
            if (c->nsweep[k] == KG_MAX_SWEEP)
                return kg_perr(x, line, "sweep: more than %d values for %s", KG_MAX_SWEEP, name);
            for (int i = 0; i < c->nargs; i++)
                if (c->args[i].sym == k && symbol_fits(x, &c->args[i], "sweep", n, line)) return -1;
            c->sweep[k][c->nsweep[k]++] = n;
        }
        if (!nvals) return kg_perr(x, line, "sweep: %s= has no values (write %s=V1,V2,...)", name, name);
    }
    return 0;
}

/* ---- args: ------------------------------------------------------------------------------- */

static const char *const dtype_list = "f64 f32 f16 bf16 i32 i64 u8 bool, or T with dtypes:";

/* A tensor's dims: expressions over the shape symbols, split on commas at paren depth 0. */
static int parse_dims(struct kg_parse *x, struct kg_arg *a, char *dims, int line)
{
    int depth = 0;
    char *start = dims;
    for (char *p = dims;; p++) {
        if (*p == '(') depth++;
        if (*p == ')') depth--;
        if ((*p == ',' && depth == 0) || *p == 0) {
            char save = *p;
            *p = 0;
            char *d = kg_trim(start);
            if (!*d) return kg_perr(x, line, "args: '%s': empty dim", a->name);
            if (a->rank == KG_MAX_RANK) return kg_perr(x, line, "args: '%s': more than %d dims", a->name, KG_MAX_RANK);
            int col = 0;
            struct kg_err ee;
            a->dims[a->rank] = kg_expr_parse(d, strlen(d), kg_lookup_sym, x->c, &col, &ee);
            if (!a->dims[a->rank])
                return kg_perr(x, line, "args: '%s' dim %d '%s': %s%s", a->name, a->rank, d, ee.msg,
                               strstr(ee.msg, "undefined symbol") ? " (declare it in shape:)" : "");
            a->rank++;
            if (save == 0) break;
            start = p + 1;
        }
    }
    return 0;
}

static int parse_tensor(struct kg_parse *x, struct kg_arg *a, char *spec, int line)
{
    /* spec: "in f32[M,N]" */
    char *s = kg_trim(spec);
    size_t n = strcspn(s, " \t");
    if (n == 2 && !strncmp(s, "in", 2))
        a->io = KG_IN;
    else if (n == 3 && !strncmp(s, "out", 3))
        a->io = KG_OUT;
    else if (n == 5 && !strncmp(s, "inout", 5))
        a->io = KG_INOUT;
    else if (n == 7 && !strncmp(s, "scratch", 7))
        a->io = KG_SCRATCH;
    else
        return kg_perr(x, line,
                       "args: '%s': expected in, out, inout or scratch before the dtype (or a scalar type: int, "
                       "long, float, double)",
                       a->name);
    s = kg_trim(s + n);
    char *lb = strchr(s, '[');
    size_t tn = lb ? (size_t)(lb - s) : strlen(s);
    while (tn && isspace((unsigned char)s[tn - 1])) tn--;
    if (kg_dtype_parse(s, tn, &a->dtype))
        return kg_perr(x, line, "args: '%s': unknown dtype '%.*s' (expected %s)", a->name, (int)tn, s, dtype_list);
    a->kind = KG_ARG_TENSOR;
    if (!lb) {
        a->rank = 0; /* a 0-d tensor: one element */
        return 0;
    }
    char *rb = strrchr(lb, ']');
    if (!rb || *kg_trim(rb + 1)) return kg_perr(x, line, "args: '%s': expected ']' to close the dims", a->name);
    *rb = 0;
    return parse_dims(x, a, lb + 1, line);
}

/* Whether the n-character word at spec is a scalar type; sets *kind when it is. */
static int scalar_kind(const char *spec, size_t n, enum kg_argkind *kind)
{
    static const struct {
        const char *w;
        enum kg_argkind k;
    } scalars[] = {{"int", KG_ARG_INT}, {"long", KG_ARG_LONG}, {"float", KG_ARG_FLOAT}, {"double", KG_ARG_DOUBLE}};
    for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++)
        if (strlen(scalars[i].w) == n && !strncmp(spec, scalars[i].w, n)) {
            *kind = scalars[i].k;
            return 1;
        }
    return 0;
}

/* A constant `= num` (a->value) holds in a's C type: an int or long in its range (inf is
 * no integer a kernel can take), a float no larger than FLT_MAX unless written as inf. */
static int constant_fits(struct kg_parse *x, const struct kg_arg *a, const char *num, int line)
{
    double v = a->value;
    const char *type = NULL, *range = NULL;
    if (a->kind == KG_ARG_INT && !(v >= INT32_MIN && v <= INT32_MAX))
        type = "int", range = "an integer from -2147483648 to 2147483647";
    else if (a->kind == KG_ARG_LONG && !(v >= -0x1p63 && v < 0x1p63))
        type = "long", range = "an integer from -2^63 to 2^63-1";
    else if (a->kind == KG_ARG_FLOAT && isfinite(v) && fabs(v) > FLT_MAX)
        type = "float", range = "at most 3.4028235e38 in magnitude, or inf";
    if (type) return kg_perr(x, line, "args: '%s': %s does not fit %s (%s)", a->name, num, type, range);
    return 0;
}

/* A scalar after its n-character type: `= VALUE` is a constant; without it the scalar takes
 * the shape symbol of its own name. */
static int parse_scalar(struct kg_parse *x, struct kg_arg *a, char *spec, size_t n, int line)
{
    const char *name = a->name;
    char *rest = kg_trim(spec + n);
    if (*rest == '=') {
        char *num = kg_trim(rest + 1), *end;
        errno = 0;
        a->value = strtod(num, &end);
        if (errno || end == num || *kg_trim(end))
            return kg_perr(x, line, "args: '%s': '%s' is not a number", name, num);
        if ((a->kind == KG_ARG_INT || a->kind == KG_ARG_LONG) && a->value != floor(a->value))
            return kg_perr(x, line, "args: '%s' is an integer but its value %s is not", name, num);
        return constant_fits(x, a, num, line);
    }
    if (*rest) return kg_perr(x, line, "args: '%s': unexpected '%s' after the type", name, rest);
    a->sym = kg_lookup_sym(x->c, name, strlen(name));
    if (a->sym < 0)
        return kg_perr(x, line,
                       "args: scalar '%s' has no shape symbol of that name and no '= value' (declare %s in shape:, or "
                       "write '%s: %.*s = VALUE')",
                       name, name, name, (int)n, spec);
    return symbol_fits(x, a, "shape", x->c->nominal[a->sym], x->c->line_shape);
}

/* The comma in s at bracket depth 0 that a `NAME:` follows ("x: in f32[N], y: out f32[N]"), or
 * NULL: args are separated by ';', and a comma there starts what was meant as the next arg. */
static const char *comma_before_name(const char *s)
{
    int depth = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '[' || *p == '(') depth++;
        if (*p == ']' || *p == ')') depth--;
        if (*p != ',' || depth != 0) continue;
        const char *q = p + 1;
        while (isspace((unsigned char)*q)) q++;
        size_t n = 0;
        while (isalnum((unsigned char)q[n]) || q[n] == '_') n++;
        const char *r = q + n;
        while (isspace((unsigned char)*r)) r++;
        if (kg_valid_ident(q, n) && *r == ':') return p;
    }
    return NULL;
}

/* item with each comma that separates two args written as ';', in the message. */
static int commas_between_args(struct kg_parse *x, const char *item, int line)
{
    char fixed[512];
    size_t len = 0;
    fixed[0] = 0;
    const char *p = item, *comma;
    while ((comma = comma_before_name(p))) {
        kg_appendf(fixed, sizeof fixed, &len, "%.*s;", (int)(comma - p), p);
        p = comma + 1;
    }
    kg_appendf(fixed, sizeof fixed, &len, "%s", p);
    return kg_perr(x, line, "args: args are separated by ';', not ',': write '%s'", fixed);
}

/* The C types a scalar is often written as, and the scalar type that is meant. */
static const struct {
    const char *w, *meant;
} scalar_aliases[] = {
    {"int32", "int"},      {"int32_t", "int"}, {"i32", "int"},      {"int64", "long"},     {"int64_t", "long"},
    {"i64", "long"},       {"size_t", "long"}, {"ssize_t", "long"}, {"ptrdiff_t", "long"}, {"float32", "float"},
    {"float64", "double"}, {"f32", "float"},   {"f64", "double"},
};

/* A one-word spec (maybe `= VALUE` after it) that is no scalar type and no in/out: a scalar
 * whose type is misspelt (`N: int32`, `N: i32`), or a tensor missing its in/out and dims. */
static int not_a_scalar_type(struct kg_parse *x, const char *name, const char *w, size_t n, int line)
{
    for (size_t i = 0; i < sizeof scalar_aliases / sizeof *scalar_aliases; i++)
        if (strlen(scalar_aliases[i].w) == n && !strncmp(w, scalar_aliases[i].w, n))
            return kg_perr(x, line,
                           "args: '%s': '%.*s' is not a scalar type (the scalar types are int, long, float, double): "
                           "write '%s: %s'",
                           name, (int)n, w, name, scalar_aliases[i].meant);
    return kg_perr(x, line,
                   "args: '%s': '%.*s' is not a scalar type (the scalar types are int, long, float, double) nor a "
                   "tensor ('%s: in|out|inout|scratch DTYPE[DIMS]')",
                   name, (int)n, w, name);
}

/* Whether the n-character word at w is one of in, out, inout, scratch. */
static int is_io_word(const char *w, size_t n)
{
    static const char *const io[] = {"in", "out", "inout", "scratch"};
    for (size_t i = 0; i < sizeof io / sizeof *io; i++)
        if (strlen(io[i]) == n && !strncmp(w, io[i], n)) return 1;
    return 0;
}

/* One `NAME: SPEC` item of args:, into the next free arg (the caller counts it). */
static int parse_arg(struct kg_parse *x, char *item, int line)
{
    struct kg_contract *c = x->c;
    if (comma_before_name(item)) return commas_between_args(x, item, line);
    char *colon = strchr(item, ':');
    if (!colon)
        return kg_perr(x, line,
                       "args: expected 'NAME: in|out|inout DTYPE[DIMS]' or 'NAME: int|long|float|double', got '%s'",
                       item);
    *colon = 0;
    char *name = kg_trim(item), *spec = kg_trim(colon + 1);
    if (!kg_valid_ident(name, strlen(name))) return kg_perr(x, line, "args: '%s' is not a valid name", name);
    if (kg_contract_arg(c, name) >= 0) return kg_perr(x, line, "args: '%s' declared twice", name);
    if (c->nargs == KG_MAX_ARGS) return kg_perr(x, line, "args: more than %d args", KG_MAX_ARGS);
    struct kg_arg *a = &c->args[c->nargs];
    memset(a, 0, sizeof *a);
    kg_strlcpy(a->name, name, KG_NAME_MAX);
    a->sym = -1;
    size_t n = strcspn(spec, " \t=");
    if (scalar_kind(spec, n, &a->kind)) return parse_scalar(x, a, spec, n, line);
    const char *after = kg_trim(spec + n);
    if ((!*after || *after == '=') && n && !memchr(spec, '[', n) && !is_io_word(spec, n))
        return not_a_scalar_type(x, a->name, spec, n, line);
    if (!parse_tensor(x, a, spec, line)) return 0;
    /* the arg is not counted, so kg_contract_free will not see the dims it had parsed */
    for (int d = 0; d < a->rank; d++) kg_expr_free(a->dims[d]);
    a->rank = 0;
    return -1;
}

int kg_parse_args(struct kg_parse *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = kg_next_item(&cur, ";"))) {
        if (parse_arg(x, item, line)) return -1;
        c->nargs++;
    }
    if (c->nargs == 0) return kg_perr(x, line, "args: no arguments declared");
    return 0;
}

/* ---- launch: ----------------------------------------------------------------------------- */

static const char *const launch_keys[] = {"grid", "block", "smem"};

/* Index in launch_keys of the n-character word at p, or 3 when it is none of them. */
static int launch_key(const char *p, size_t n)
{
    int k;
    for (k = 0; k < 3; k++)
        if (strlen(launch_keys[k]) == n && !strncmp(p, launch_keys[k], n)) break;
    return k;
}

/* Where the launch value starting at p ends: at the white space before the next "name=" at
 * paren depth 0, or at the end. */
static char *launch_value_end(char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '(') depth++;
        if (*p == ')') depth--;
        if (depth == 0 && isspace((unsigned char)*p)) {
            char *q = p;
            while (isspace((unsigned char)*q)) q++;
            size_t m = strcspn(q, " \t=");
            char *r = q + m;
            while (isspace((unsigned char)*r)) r++;
            if (launch_key(q, m) < 3 && *r == '=') break;
        }
    }
    return p;
}

/* Whether val (vl characters, in parens) is a tuple "(a, b)": its first paren closes at the
 * end and holds a comma at depth 1. "(a,b)+(c)" is not one (an expression, and a wrong one). */
static int is_tuple(const char *val, size_t vl)
{
    int d = 0, tuple = 0;
    for (size_t i = 0; i < vl; i++) {
        if (val[i] == '(') d++;
        if (val[i] == ')' && --d == 0 && i != vl - 1) return 0;
        if (val[i] == ',' && d == 1) tuple = 1;
    }
    return tuple;
}

/* Splits the tuple val (vl characters) on its depth-0 commas into at most 3 items. */
static int split_tuple(struct kg_parse *x, int k, char *val, size_t vl, char **items, int *nitems, int line)
{
    val[vl - 1] = 0;
    char *q = val + 1, *st = q;
    int d = 0;
    *nitems = 0;
    for (;; q++) {
        if (*q == '(') d++;
        if (*q == ')') d--;
        if ((*q == ',' && d == 0) || !*q) {
            char sv = *q;
            *q = 0;
            if (*nitems == 3) return kg_perr(x, line, "launch: %s has more than 3 dims", launch_keys[k]);
            items[(*nitems)++] = st;
            if (!sv) break;
            st = q + 1;
        }
    }
    return 0;
}

/* The value of launch key k: one expression, or for grid and block a tuple of up to 3. */
static int launch_value(struct kg_parse *x, int k, char *val, int line)
{
    struct kg_contract *c = x->c;
    struct kg_expr **slots = k == 0 ? c->grid : k == 1 ? c->block : &c->smem;
    if (slots[0]) return kg_perr(x, line, "launch: %s given twice", launch_keys[k]);
    char *items[3] = {val, NULL, NULL};
    int nitems = 1;
    size_t vl = strlen(val);
    if (k < 2 && val[0] == '(' && vl > 1 && val[vl - 1] == ')' && is_tuple(val, vl) &&
        split_tuple(x, k, val, vl, items, &nitems, line))
        return -1;
    for (int i = 0; i < nitems; i++) {
        int col = 0;
        struct kg_err ee;
        char *it = kg_trim(items[i]);
        slots[i] = kg_expr_parse(it, strlen(it), kg_lookup_sym, c, &col, &ee);
        if (!slots[i]) {
            const char *hint = strstr(ee.msg, "undefined symbol") ? " (declare it in shape:)"
                               : nitems == 1 && k < 2 && it[0] == '(' && strchr(it, ',')
                                   ? " (a tuple (X,Y,Z) is the whole value)"
                                   : "";
            return kg_perr(x, line, "launch: %s '%s': %s%s", launch_keys[k], it, ee.msg, hint);
        }
    }
    return 0;
}

/* Parses "grid=(cdiv(N,256),M) block=256 smem=0". */
int kg_parse_launch(struct kg_parse *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *p = v;
    while (*p) {
        while (isspace((unsigned char)*p) || *p == ',') p++;
        if (!*p) break;
        size_t n = strcspn(p, " \t=");
        int k = launch_key(p, n);
        if (k == 3) return kg_perr(x, line, "launch: expected grid=, block= or smem=, got '%.*s'", (int)n, p);
        p += n;
        while (isspace((unsigned char)*p)) p++;
        if (*p != '=') return kg_perr(x, line, "launch: expected '=' after %s", launch_keys[k]);
        p++;
        while (isspace((unsigned char)*p)) p++;
        char *start = p;
        p = launch_value_end(p);
        char save = *p;
        *p = 0;
        if (launch_value(x, k, kg_trim(start), line)) return -1;
        *p = save;
    }
    if (!c->grid[0] || !c->block[0]) return kg_perr(x, line, "launch: grid= and block= are both required");
    c->has_launch = true;
    return 0;
}

/* ---- inputs: and alias: ------------------------------------------------------------------ */

/* The parameters of a distribution, "(P1,P2)" at s (empty: none): at most 2 numbers, nothing
 * after the ')'. */
static int dist_params(struct kg_parse *x, const struct kg_arg *a, const char *fname, char *s, double *p, int *np,
                       int line)
{
    *np = 0;
    if (!*s) return 0;
    char *close = strchr(s, ')');
    if (!close) return kg_perr(x, line, "inputs: %s: expected ')' to close the parameters of %s", a->name, fname);
    if (close[1]) return kg_perr(x, line, "inputs: %s: unexpected '%s' after ')' of %s", a->name, close + 1, fname);
    *close = 0;
    char *cur = s + 1;
    for (;;) {
        char *comma = strchr(cur, ',');
        if (comma) *comma = 0;
        char *t = kg_trim(cur), *end;
        if (*np == 2) return kg_perr(x, line, "inputs: %s: %s takes at most 2 parameters", a->name, fname);
        errno = 0;
        p[*np] = strtod(t, &end);
        if (errno == ERANGE || end == t || *end)
            return kg_perr(x, line, "inputs: %s: %s: '%s' is not a number", a->name, fname, t);
        (*np)++;
        if (!comma) return 0;
        cur = comma + 1;
    }
}

/* The integers an element of dtype t holds exactly, as kgate draws them (float64 values):
 * floats up to 2^(mantissa bits), i64 only up to 2^53 too. */
static const struct exact {
    enum kg_dtype t;
    double lo, hi;
    const char *text; /* the range, as the message writes it */
} exact_ints[] = {
    {KG_F64, -0x1p53, 0x1p53, "-2^53 <= LO <= HI <= 2^53"},
    {KG_F32, -0x1p24, 0x1p24, "-16777216 <= LO <= HI <= 16777216"},
    {KG_F16, -0x1p11, 0x1p11, "-2048 <= LO <= HI <= 2048"},
    {KG_BF16, -0x1p8, 0x1p8, "-256 <= LO <= HI <= 256"},
    {KG_I32, -2147483648.0, 2147483647.0, "-2147483648 <= LO <= HI <= 2147483647"},
    {KG_I64, -0x1p53, 0x1p53, "-2^53 <= LO <= HI <= 2^53 (kgate draws integers as float64 values)"},
    {KG_U8, 0, 255, "0 <= LO <= HI <= 255"},
    {KG_BOOL, 0, 1, "0 <= LO <= HI <= 1"},
};

/* int(lo,hi) on a tensor of dtype t: every value drawn fits t exactly. */
static int int_fits(struct kg_parse *x, const struct kg_arg *a, enum kg_dtype t, int line)
{
    for (size_t i = 0; i < sizeof exact_ints / sizeof *exact_ints; i++) {
        const struct exact *r = &exact_ints[i];
        if (r->t != t) continue;
        if (a->dist_a < r->lo || a->dist_b > r->hi)
            return kg_perr(x, line, "inputs: %s: int(LO,HI) on %s needs %s, got int(%.17g,%.17g)", a->name,
                           kg_dtype_name(t), r->text, a->dist_a, a->dist_b);
    }
    return 0;
}

/* The parameters of a->dist (defaults filled in) against what that distribution takes. */
static int check_dist(struct kg_parse *x, const struct kg_arg *a, int line)
{
    const struct kg_contract *c = x->c;
    switch (a->dist) {
    case KG_AD_NORMAL:
        if (!isfinite(a->dist_a))
            return kg_perr(x, line, "inputs: %s: normal(MEAN,STD) needs a finite MEAN, got %g", a->name, a->dist_a);
        if (!(isfinite(a->dist_b) && a->dist_b > 0))
            return kg_perr(x, line, "inputs: %s: normal(MEAN,STD) needs a finite STD > 0, got %g", a->name, a->dist_b);
        return 0;
    case KG_AD_UNIFORM:
        if (!(isfinite(a->dist_a) && isfinite(a->dist_b) && a->dist_a < a->dist_b))
            return kg_perr(x, line, "inputs: %s: uniform(LO,HI) needs finite LO < HI, got uniform(%g,%g)", a->name,
                           a->dist_a, a->dist_b);
        return 0;
    case KG_AD_INT:
        if (!(isfinite(a->dist_a) && isfinite(a->dist_b) && a->dist_a == floor(a->dist_a) &&
              a->dist_b == floor(a->dist_b)))
            return kg_perr(x, line, "inputs: %s: int(LO,HI) needs integers, got int(%g,%g)", a->name, a->dist_a,
                           a->dist_b);
        if (!(a->dist_a <= a->dist_b))
            return kg_perr(x, line, "inputs: %s: int(LO,HI) needs LO <= HI, got int(%.17g,%.17g)", a->name, a->dist_a,
                           a->dist_b);
        if (a->dtype != KG_DTYPE_T) return int_fits(x, a, a->dtype, line);
        for (int i = 0; i < c->ndtypes; i++)
            if (int_fits(x, a, c->dtypes[i], line)) return -1;
        return 0;
    default: return 0;
    }
}

/* DIST of one `NAME=DIST` of inputs: normal(mean,std), uniform(lo,hi), int(lo,hi), unitrows;
 * missing parameters take the defaults. */
static int parse_dist(struct kg_parse *x, struct kg_arg *a, char *d, int line)
{
    static const struct {
        const char *name;
        enum kg_argdist dist;
        int nparams;
        double a, b; /* defaults */
    } dists[] = {
        {"normal", KG_AD_NORMAL, 2, 0, 1},
        {"uniform", KG_AD_UNIFORM, 2, -1, 1},
        {"int", KG_AD_INT, 2, 0, 10},
        {"unitrows", KG_AD_UNITROWS, 0, 0, 0},
    };
    size_t fl = strcspn(d, "(");
    size_t k;
    for (k = 0; k < sizeof dists / sizeof *dists; k++)
        if (strlen(dists[k].name) == fl && !strncmp(d, dists[k].name, fl)) break;
    if (k == sizeof dists / sizeof *dists)
        return kg_perr(x, line,
                       "inputs: %s: unknown distribution '%.*s' (normal(mean,std), uniform(lo,hi), int(lo,hi), "
                       "unitrows)",
                       a->name, (int)fl, d);
    double p[2];
    int np;
    if (dist_params(x, a, dists[k].name, d + fl, p, &np, line)) return -1;
    if (np > dists[k].nparams) return kg_perr(x, line, "inputs: %s: %s takes no parameters", a->name, dists[k].name);
    a->dist = dists[k].dist;
    a->dist_a = np >= 1 ? p[0] : dists[k].a;
    a->dist_b = np >= 2 ? p[1] : dists[k].b;
    return check_dist(x, a, line);
}

int kg_parse_inputs(struct kg_parse *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = kg_next_item(&cur, " \t;"))) {
        char *eq = strchr(item, '=');
        if (!eq) return kg_perr(x, line, "inputs: expected NAME=DIST, got '%s'", item);
        *eq = 0;
        char *name = kg_trim(item), *d = kg_trim(eq + 1);
        int i = kg_contract_arg(c, name);
        if (i < 0) return kg_perr(x, line, "inputs: no arg named '%s'", name);
        struct kg_arg *a = &c->args[i];
        if (!kg_arg_is_input(a)) return kg_perr(x, line, "inputs: '%s' is not an input tensor", name);
        if (a->dist != KG_AD_DEFAULT) return kg_perr(x, line, "inputs: '%s' given twice", name);
        if (parse_dist(x, a, d, line)) return -1;
    }
    return 0;
}

/* One `alias:` pair: an out tensor that shares its buffer with an in tensor of the same type. */
static int alias_pair(struct kg_parse *x, char *item, int line)
{
    struct kg_contract *c = x->c;
    char *eq = strchr(item, '=');
    if (!eq) return kg_perr(x, line, "alias: expected OUT=IN, got '%s'", item);
    *eq = 0;
    int o = kg_contract_arg(c, kg_trim(item)), i = kg_contract_arg(c, kg_trim(eq + 1));
    if (o < 0 || i < 0) return kg_perr(x, line, "alias: no arg named '%s'", o < 0 ? kg_trim(item) : kg_trim(eq + 1));
    const struct kg_arg *ao = &c->args[o], *ai = &c->args[i];
    if (ao->kind != KG_ARG_TENSOR || ao->io != KG_OUT || ai->kind != KG_ARG_TENSOR || ai->io != KG_IN)
        return kg_perr(x, line, "alias: %s=%s must name an out tensor and an in tensor", ao->name, ai->name);
    if (ao->dtype != ai->dtype || ao->rank != ai->rank)
        return kg_perr(x, line, "alias: %s and %s must have the same dtype and shape", ao->name, ai->name);
    for (int d = 0; d < ao->rank; d++)
        if (strcmp(kg_expr_text(ao->dims[d]), kg_expr_text(ai->dims[d])))
            return kg_perr(x, line, "alias: %s and %s must have the same dims", ao->name, ai->name);
    if (c->alias_of[o] >= 0) return kg_perr(x, line, "alias: %s is given twice (one OUT=IN per out tensor)", ao->name);
    for (int j = 0; j < c->nargs; j++)
        if (c->alias_of[j] == i)
            return kg_perr(x, line, "alias: %s is the buffer of both %s and %s: two outputs cannot share one buffer",
                           ai->name, c->args[j].name, ao->name);
    c->alias_of[o] = i;
    return 0;
}

int kg_parse_alias(struct kg_parse *x, char *v, int line)
{
    char *cur = v, *item;
    while ((item = kg_next_item(&cur, " \t,")))
        if (alias_pair(x, item, line)) return -1;
    return 0;
}
