/* contract.c: parser and checker of the `/\*@kgate ... *\/` header. Two passes: the header is
 * split into `key: value` entries with their line numbers (continuation lines start with
 * white space), then keys are interpreted in dependency order (shape symbols before the
 * dims and launch expressions that use them). Last, the entry's C signature is found in
 * the source, where it can be, and matched against `args:`. */
#include "contract/contract.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the header's raw entries ------------------------------------------------------------ */

enum key {
    K_NAME, K_OP, K_ORACLE, K_ENTRY, K_ARGS, K_LAUNCH, K_SHAPE, K_SWEEP, K_TOLERANCE,
    K_DETERMINISTIC, K_ALIAS, K_DTYPES, K_INPUTS, K_COUNT
};

static const char *const key_names[K_COUNT] = {
    "name", "op", "oracle", "entry", "args", "launch", "shape", "sweep", "tolerance",
    "deterministic", "alias", "dtypes", "inputs",
};

struct raw {
    char *value[K_COUNT];
    int line[K_COUNT];
};

struct ctx {
    struct kg_contract *c;
    struct kg_err *e;
};

static int perr(struct ctx *x, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int perr(struct ctx *x, int line, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0)
        return kg_errf(x->e, "%s:%d: %s", x->c->path, line, msg);
    return kg_errf(x->e, "%s: %s", x->c->path, msg);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) *--end = 0;
    return s;
}

/* Appends a continuation line t to a key's value, after one space. */
static int append_value(struct ctx *x, char **value, const char *t, int line)
{
    size_t a = strlen(*value), b = strlen(t);
    char *nv = realloc(*value, a + b + 2);
    if (!nv) return perr(x, line, "out of memory");
    nv[a] = ' ';
    memcpy(nv + a + 1, t, b + 1);
    *value = nv;
    return 0;
}

/* A `key: value` line (t, trimmed): the key must be known and not given yet; it becomes the
 * key that continuation lines extend (*cur). */
static int new_entry(struct ctx *x, char *t, int line, struct raw *r, int *cur)
{
    char *colon = strchr(t, ':');
    if (!colon) return perr(x, line, "expected 'key: value' (keys: name, op, oracle, entry, args, launch, shape, sweep, tolerance, deterministic, alias, dtypes, inputs)");
    *colon = 0;
    char *key = trim(t);
    int k;
    for (k = 0; k < K_COUNT; k++)
        if (strcmp(key, key_names[k]) == 0) break;
    if (k == K_COUNT)
        return perr(x, line, "unknown key '%s' (keys: name, op, oracle, entry, args, launch, shape, sweep, tolerance, deterministic, alias, dtypes, inputs)", key);
    if (r->value[k]) return perr(x, line, "'%s' given twice (first on line %d)", key, r->line[k]);
    r->value[k] = strdup(trim(colon + 1));
    if (!r->value[k]) return perr(x, line, "out of memory");
    r->line[k] = line;
    *cur = k;
    return 0;
}

/* Whether line s (t once trimmed) continues key cur: it is indented and has no ':', or cur's
 * values contain ':' themselves (args lists "x: in f32[N]"; an indented line continues them). */
static int continues(const char *s, const char *t, int cur)
{
    if (cur < 0 || !isspace((unsigned char)s[0])) return 0;
    return !strchr(t, ':') || cur == K_ARGS || cur == K_INPUTS;
}

/* Splits the header text into entries. `base_line` is the file line of the header's first
 * line (the one holding the opening marker). Blank lines are skipped: they do not end a
 * continuation (kgate-contract(5): "blank lines are ignored"). */
static int split_header(struct ctx *x, char *text, int base_line, struct raw *r)
{
    int cur = -1;
    for (int line = base_line;; line++) {
        char *nl = strchr(text, '\n');
        if (nl) *nl = 0;
        size_t len = strlen(text);
        if (len && text[len - 1] == '\r') text[--len] = 0;
        char *t = trim(text);
        int rc = 0;
        if (*t && continues(text, t, cur))
            rc = append_value(x, &r->value[cur], t, line);
        else if (*t)
            rc = new_entry(x, t, line, r, &cur);
        if (rc) return -1;
        if (!nl) break;
        text = nl + 1;
    }
    return 0;
}

/* ---- symbols ------------------------------------------------------------------------------ */

static int lookup_sym(void *ud, const char *name, size_t n)
{
    const struct kg_contract *c = ud;
    for (int i = 0; i < c->nsyms; i++)
        if (strlen(c->sym[i]) == n && memcmp(c->sym[i], name, n) == 0) return i;
    return -1;
}

int kg_contract_sym(const struct kg_contract *c, const char *name)
{
    return lookup_sym((void *)c, name, strlen(name));
}

int kg_contract_arg(const struct kg_contract *c, const char *name)
{
    for (int i = 0; i < c->nargs; i++)
        if (strcmp(c->args[i].name, name) == 0) return i;
    return -1;
}

static int valid_ident(const char *s, size_t n)
{
    if (n == 0 || n >= KG_NAME_MAX || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return 0;
    return 1;
}

static int parse_int64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s) return -1;
    while (isspace((unsigned char)*end)) end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

/* Iterates over items separated by any of `seps`, each trimmed, skipping empty ones. */
static char *next_item(char **cursor, const char *seps)
{
    char *s = *cursor;
    if (!s) return NULL;
    for (;;) {
        s += strspn(s, seps);
        if (!*s) {
            *cursor = NULL;
            return NULL;
        }
        char *end = s + strcspn(s, seps);
        if (*end) {
            *end = 0;
            *cursor = end + 1;
        } else
            *cursor = NULL;
        char *t = trim(s);
        if (*t) return t;
        if (!*cursor) return NULL;
        s = *cursor;
    }
}

static int parse_shape(struct ctx *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = next_item(&cur, " \t,"))) {
        char *eq = strchr(item, '=');
        if (!eq) return perr(x, line, "shape: expected SYMBOL=VALUE, got '%s'", item);
        *eq = 0;
        char *name = trim(item), *val = trim(eq + 1);
        if (!valid_ident(name, strlen(name))) return perr(x, line, "shape: '%s' is not a valid symbol name", name);
        if (lookup_sym(c, name, strlen(name)) >= 0) return perr(x, line, "shape: symbol '%s' given twice", name);
        if (c->nsyms == KG_MAX_SYMS) return perr(x, line, "shape: more than %d symbols", KG_MAX_SYMS);
        int64_t n;
        if (parse_int64(val, &n) || n < 0)
            return perr(x, line, "shape: %s=%s: expected a non-negative integer", name, val);
        kg_strlcpy(c->sym[c->nsyms], name, KG_NAME_MAX);
        c->nominal[c->nsyms++] = n;
    }
    return 0;
}

static int parse_sweep(struct ctx *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = next_item(&cur, " \t"))) {
        char *eq = strchr(item, '=');
        if (!eq) return perr(x, line, "sweep: expected SYMBOL=V1,V2,..., got '%s'", item);
        *eq = 0;
        char *name = trim(item);
        int k = lookup_sym(c, name, strlen(name));
        if (k < 0) return perr(x, line, "sweep: undefined symbol '%s' (declare it in shape:)", name);
        char *vc = eq + 1, *val;
        while ((val = next_item(&vc, ","))) {
            int64_t n;
            if (parse_int64(val, &n) || n < 0)
                return perr(x, line, "sweep: %s: '%s' is not a non-negative integer", name, val);
            if (c->nsweep[k] == KG_MAX_SWEEP) return perr(x, line, "sweep: more than %d values for %s", KG_MAX_SWEEP, name);
            c->sweep[k][c->nsweep[k]++] = n;
        }
    }
    return 0;
}

static const char *const dtype_list = "f64 f32 f16 bf16 i32 i64 u8 bool, or T with dtypes:";

/* A tensor's dims: expressions over the shape symbols, split on commas at paren depth 0. */
static int parse_dims(struct ctx *x, struct kg_arg *a, char *dims, int line)
{
    int depth = 0;
    char *start = dims;
    for (char *p = dims;; p++) {
        if (*p == '(') depth++;
        if (*p == ')') depth--;
        if ((*p == ',' && depth == 0) || *p == 0) {
            char save = *p;
            *p = 0;
            char *d = trim(start);
            if (!*d) return perr(x, line, "args: '%s': empty dim", a->name);
            if (a->rank == KG_MAX_RANK) return perr(x, line, "args: '%s': more than %d dims", a->name, KG_MAX_RANK);
            int col = 0;
            struct kg_err ee;
            a->dims[a->rank] = kg_expr_parse(d, strlen(d), lookup_sym, x->c, &col, &ee);
            if (!a->dims[a->rank])
                return perr(x, line, "args: '%s' dim %d '%s': %s%s", a->name, a->rank, d, ee.msg,
                            strstr(ee.msg, "undefined symbol") ? " (declare it in shape:)" : "");
            a->rank++;
            if (save == 0) break;
            start = p + 1;
        }
    }
    return 0;
}

static int parse_tensor(struct ctx *x, struct kg_arg *a, char *spec, int line)
{
    /* spec: "in f32[M,N]" */
    char *s = trim(spec);
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
        return perr(x, line, "args: '%s': expected in, out, inout or scratch before the dtype", a->name);
    s = trim(s + n);
    char *lb = strchr(s, '[');
    size_t tn = lb ? (size_t)(lb - s) : strlen(s);
    while (tn && isspace((unsigned char)s[tn - 1])) tn--;
    if (kg_dtype_parse(s, tn, &a->dtype))
        return perr(x, line, "args: '%s': unknown dtype '%.*s' (expected %s)", a->name, (int)tn, s, dtype_list);
    a->kind = KG_ARG_TENSOR;
    if (!lb) {
        a->rank = 0; /* a 0-d tensor: one element */
        return 0;
    }
    char *rb = strrchr(lb, ']');
    if (!rb || *trim(rb + 1)) return perr(x, line, "args: '%s': expected ']' to close the dims", a->name);
    *rb = 0;
    return parse_dims(x, a, lb + 1, line);
}

/* Whether the n-character word at spec is a scalar type; sets *kind when it is. */
static int scalar_kind(const char *spec, size_t n, enum kg_argkind *kind)
{
    static const struct { const char *w; enum kg_argkind k; } scalars[] = {
        {"int", KG_ARG_INT}, {"long", KG_ARG_LONG}, {"float", KG_ARG_FLOAT}, {"double", KG_ARG_DOUBLE}};
    for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++)
        if (strlen(scalars[i].w) == n && !strncmp(spec, scalars[i].w, n)) {
            *kind = scalars[i].k;
            return 1;
        }
    return 0;
}

/* A scalar after its n-character type: `= VALUE` is a constant; without it the scalar takes
 * the shape symbol of its own name. */
static int parse_scalar(struct ctx *x, struct kg_arg *a, char *spec, size_t n, int line)
{
    const char *name = a->name;
    char *rest = trim(spec + n);
    if (*rest == '=') {
        char *num = trim(rest + 1), *end;
        errno = 0;
        a->value = strtod(num, &end);
        if (errno || end == num || *trim(end)) return perr(x, line, "args: '%s': '%s' is not a number", name, num);
        if ((a->kind == KG_ARG_INT || a->kind == KG_ARG_LONG) && a->value != floor(a->value))
            return perr(x, line, "args: '%s' is an integer but its value %s is not", name, num);
        return 0;
    }
    if (*rest) return perr(x, line, "args: '%s': unexpected '%s' after the type", name, rest);
    a->sym = lookup_sym(x->c, name, strlen(name));
    if (a->sym < 0)
        return perr(x, line, "args: scalar '%s' has no shape symbol of that name and no '= value' (declare %s in shape:, or write '%s: %.*s = VALUE')",
                    name, name, name, (int)n, spec);
    return 0;
}

/* One `NAME: SPEC` item of args:, into the next free arg (the caller counts it). */
static int parse_arg(struct ctx *x, char *item, int line)
{
    struct kg_contract *c = x->c;
    char *colon = strchr(item, ':');
    if (!colon) return perr(x, line, "args: expected 'NAME: in|out|inout DTYPE[DIMS]' or 'NAME: int|long|float|double', got '%s'", item);
    *colon = 0;
    char *name = trim(item), *spec = trim(colon + 1);
    if (!valid_ident(name, strlen(name))) return perr(x, line, "args: '%s' is not a valid name", name);
    if (kg_contract_arg(c, name) >= 0) return perr(x, line, "args: '%s' declared twice", name);
    if (c->nargs == KG_MAX_ARGS) return perr(x, line, "args: more than %d args", KG_MAX_ARGS);
    struct kg_arg *a = &c->args[c->nargs];
    memset(a, 0, sizeof *a);
    kg_strlcpy(a->name, name, KG_NAME_MAX);
    a->sym = -1;
    size_t n = strcspn(spec, " \t=");
    if (scalar_kind(spec, n, &a->kind)) return parse_scalar(x, a, spec, n, line);
    return parse_tensor(x, a, spec, line);
}

static int parse_args(struct ctx *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = next_item(&cur, ";"))) {
        if (parse_arg(x, item, line)) return -1;
        c->nargs++;
    }
    if (c->nargs == 0) return perr(x, line, "args: no arguments declared");
    return 0;
}

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

/* Whether val (vl characters, in parens) is a tuple "(a, b)": it has a comma at depth 1 before
 * its first paren closes. "(a)+(b)" is not one. */
static int is_tuple(const char *val, size_t vl)
{
    int d = 0, tuple = 0;
    for (size_t i = 0; i < vl; i++) {
        if (val[i] == '(') d++;
        if (val[i] == ')') {
            d--;
            if (d == 0 && i != vl - 1) break;
        }
        if (val[i] == ',' && d == 1) tuple = 1;
    }
    return tuple;
}

/* Splits the tuple val (vl characters) on its depth-0 commas into at most 3 items. */
static int split_tuple(struct ctx *x, int k, char *val, size_t vl, char **items, int *nitems, int line)
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
            if (*nitems == 3) return perr(x, line, "launch: %s has more than 3 dims", launch_keys[k]);
            items[(*nitems)++] = st;
            if (!sv) break;
            st = q + 1;
        }
    }
    return 0;
}

/* The value of launch key k: one expression, or for grid and block a tuple of up to 3. */
static int launch_value(struct ctx *x, int k, char *val, int line)
{
    struct kg_contract *c = x->c;
    struct kg_expr **slots = k == 0 ? c->grid : k == 1 ? c->block : &c->smem;
    if (slots[0]) return perr(x, line, "launch: %s given twice", launch_keys[k]);
    char *items[3] = {val, NULL, NULL};
    int nitems = 1;
    size_t vl = strlen(val);
    if (k < 2 && val[0] == '(' && vl > 1 && val[vl - 1] == ')' && is_tuple(val, vl) &&
        split_tuple(x, k, val, vl, items, &nitems, line))
        return -1;
    for (int i = 0; i < nitems; i++) {
        int col = 0;
        struct kg_err ee;
        char *it = trim(items[i]);
        slots[i] = kg_expr_parse(it, strlen(it), lookup_sym, c, &col, &ee);
        if (!slots[i])
            return perr(x, line, "launch: %s '%s': %s%s", launch_keys[k], it, ee.msg,
                        strstr(ee.msg, "undefined symbol") ? " (declare it in shape:)" : "");
    }
    return 0;
}

/* Parses "grid=(cdiv(N,256),M) block=256 smem=0". */
static int parse_launch(struct ctx *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *p = v;
    while (*p) {
        while (isspace((unsigned char)*p) || *p == ',') p++;
        if (!*p) break;
        size_t n = strcspn(p, " \t=");
        int k = launch_key(p, n);
        if (k == 3) return perr(x, line, "launch: expected grid=, block= or smem=, got '%.*s'", (int)n, p);
        p += n;
        while (isspace((unsigned char)*p)) p++;
        if (*p != '=') return perr(x, line, "launch: expected '=' after %s", launch_keys[k]);
        p++;
        while (isspace((unsigned char)*p)) p++;
        char *start = p;
        p = launch_value_end(p);
        char save = *p;
        *p = 0;
        if (launch_value(x, k, trim(start), line)) return -1;
        *p = save;
    }
    if (!c->grid[0] || !c->block[0]) return perr(x, line, "launch: grid= and block= are both required");
    c->has_launch = true;
    return 0;
}

/* DIST of one `NAME=DIST` of inputs: normal(mean,std), uniform(lo,hi), int(lo,hi), unitrows;
 * missing parameters take the defaults. */
static int parse_dist(struct ctx *x, struct kg_arg *a, const char *d, int line)
{
    const char *name = a->name;
    double p1 = 0, p2 = 0;
    int np = 0;
    char fname[32];
    size_t fl = strcspn(d, "(");
    if (fl >= sizeof fname) fl = sizeof fname - 1;
    memcpy(fname, d, fl);
    fname[fl] = 0;
    if (d[fl] == '(') {
        np = sscanf(d + fl, "(%lf,%lf)", &p1, &p2);
        if (np < 1 || !strchr(d + fl, ')')) return perr(x, line, "inputs: %s: malformed parameters in '%s'", name, d);
    }
    if (!strcmp(fname, "normal")) {
        a->dist = KG_AD_NORMAL;
        a->dist_a = np >= 1 ? p1 : 0;
        a->dist_b = np >= 2 ? p2 : 1;
    } else if (!strcmp(fname, "uniform")) {
        a->dist = KG_AD_UNIFORM;
        a->dist_a = np >= 1 ? p1 : -1;
        a->dist_b = np >= 2 ? p2 : 1;
        if (!(a->dist_a < a->dist_b)) return perr(x, line, "inputs: %s: uniform(lo,hi) needs lo < hi", name);
    } else if (!strcmp(fname, "int")) {
        a->dist = KG_AD_INT;
        a->dist_a = np >= 1 ? p1 : 0;
        a->dist_b = np >= 2 ? p2 : 10;
        if (!(a->dist_a <= a->dist_b)) return perr(x, line, "inputs: %s: int(lo,hi) needs lo <= hi", name);
    } else if (!strcmp(fname, "unitrows")) {
        a->dist = KG_AD_UNITROWS;
    } else {
        return perr(x, line, "inputs: %s: unknown distribution '%s' (normal(mean,std), uniform(lo,hi), int(lo,hi), unitrows)", name, fname);
    }
    return 0;
}

static int parse_inputs(struct ctx *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = next_item(&cur, " \t;"))) {
        char *eq = strchr(item, '=');
        if (!eq) return perr(x, line, "inputs: expected NAME=DIST, got '%s'", item);
        *eq = 0;
        char *name = trim(item), *d = trim(eq + 1);
        int i = kg_contract_arg(c, name);
        if (i < 0) return perr(x, line, "inputs: no arg named '%s'", name);
        struct kg_arg *a = &c->args[i];
        if (!kg_arg_is_input(a)) return perr(x, line, "inputs: '%s' is not an input tensor", name);
        if (parse_dist(x, a, d, line)) return -1;
    }
    return 0;
}

/* ---- the entry's C signature ---------------------------------------------------------------- */

/* Blanks out comments and string literals (keeping newlines) so the scan below sees code. */
static void strip_comments(char *s)
{
    for (char *p = s; *p; p++) {
        if (p[0] == '/' && p[1] == '*') {
            char *q = strstr(p + 2, "*/");
            char *end = q ? q + 2 : p + strlen(p);
            for (; p < end; p++)
                if (*p != '\n') *p = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') *p++ = ' ';
            if (!*p) break;
        } else if (*p == '"') {
            p++;
            while (*p && *p != '"' && *p != '\n') {
                if (*p == '\\' && p[1]) *p++ = ' ';
                *p++ = ' ';
            }
            if (!*p) break;
        }
    }
}

static int line_of(const char *base, const char *p)
{
    int line = 1;
    for (const char *q = base; q < p; q++)
        if (*q == '\n') line++;
    return line;
}

static int is_word(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* The entry's definition in code (comments blanked): the name as a whole word, followed by its
 * parameter list and '{', preceded by a type, '*' or ')' (launch bounds) but not `return` (a
 * call). Cuts the list at its ')' and sets *params to its inside; *returns_int says whether the
 * word before the name is `int`. NULL when there is none. */
static char *find_definition(char *code, const char *entry, char **params, bool *returns_int)
{
    size_t n = strlen(entry);
    for (char *p = code; (p = strstr(p, entry)); p += n) {
        if (p > code && is_word(p[-1])) continue;
        char *q = p + n;
        if (is_word(*q)) continue;
        while (isspace((unsigned char)*q)) q++;
        if (*q != '(') continue;
        char *b = p - 1;
        while (b >= code && isspace((unsigned char)*b)) b--;
        if (b < code || !(is_word(*b) || *b == '*' || *b == ')')) continue;
        char *w = b;
        while (w > code && is_word(w[-1])) w--;
        if (b - w + 1 == 6 && !strncmp(w, "return", 6)) continue;
        int depth = 0;
        char *r = q;
        for (; *r; r++) {
            if (*r == '(') depth++;
            if (*r == ')' && --depth == 0) break;
        }
        if (!*r) continue;
        char *after = r + 1;
        while (isspace((unsigned char)*after)) after++;
        if (*after != '{') continue; /* only definitions */
        *returns_int = b - w + 1 == 3 && !strncmp(w, "int", 3);
        *r = 0;
        *params = q + 1;
        return p;
    }
    return NULL;
}

/* Splits a parameter list on depth-0 commas into items, leaving out `void`. Stops at
 * KG_MAX_ARGS + 1 items: one more than any args: can declare. */
static int split_params(char *params, char **items)
{
    int np = 0, depth = 0;
    char *st = params;
    for (char *p = params;; p++) {
        if (*p == '(' || *p == '[' || *p == '<') depth++;
        if (*p == ')' || *p == ']' || *p == '>') depth--;
        if ((*p == ',' && depth == 0) || !*p) {
            char sv = *p;
            *p = 0;
            char *t = trim(st);
            if (*t && strcmp(t, "void") != 0) {
                if (np > KG_MAX_ARGS) break;
                items[np++] = t;
            }
            if (!sv) break;
            st = p + 1;
        }
    }
    return np;
}

/* The parameters (items, np) of the definition on `line` against args: count, names (the last
 * identifier outside brackets) and kinds (a pointer or array is a tensor). */
static int match_params(struct ctx *x, char **items, int np, int line)
{
    struct kg_contract *c = x->c;
    if (np != c->nargs)
        return perr(x, c->line_args, "args: %d declared, but %s (line %d) takes %d parameter%s", c->nargs, c->entry,
                    line, np, np == 1 ? "" : "s");
    for (int i = 0; i < np; i++) {
        char *t = items[i];
        int is_ptr = strchr(t, '*') || strchr(t, '[');
        char *lb = strchr(t, '[');
        if (lb) *lb = 0;
        char *e = t + strlen(t);
        while (e > t && !is_word(e[-1])) e--;
        char *s = e;
        while (s > t && is_word(s[-1])) s--;
        const struct kg_arg *a = &c->args[i];
        if ((size_t)(e - s) != strlen(a->name) || strncmp(s, a->name, (size_t)(e - s)) != 0)
            return perr(x, c->line_args, "args: arg %d is '%s', but parameter %d of %s (line %d) is named '%.*s'",
                        i + 1, a->name, i + 1, c->entry, line, (int)(e - s), s);
        if (is_ptr != (a->kind == KG_ARG_TENSOR))
            return perr(x, c->line_args, "args: '%s' is declared a %s, but %s (line %d) takes it as a %s", a->name,
                        a->kind == KG_ARG_TENSOR ? "tensor" : "scalar", c->entry, line, is_ptr ? "pointer" : "scalar");
    }
    return 0;
}

/* Finds the definition of the entry and checks its parameter count, names and kinds. A
 * definition that cannot be found (generated by macros) is left for the compile step. */
static int check_signature(struct ctx *x)
{
    struct kg_contract *c = x->c;
    char *code = strdup(c->source);
    if (!code) return perr(x, 0, "out of memory");
    strip_comments(code);
    char *params, *items[KG_MAX_ARGS + 1];
    char *found = find_definition(code, c->entry, &params, &c->entry_returns_int);
    int rc = 0;
    if (found) {
        c->line_entry_def = line_of(code, found);
        rc = match_params(x, items, split_params(params, items), c->line_entry_def);
    }
    free(code);
    return rc;
}

/* ---- the keys read here ------------------------------------------------------------------ */

static int parse_entry(struct ctx *x, char *v, int line)
{
    if (!valid_ident(v, strlen(v))) return perr(x, line, "entry: '%s' is not a C identifier", v);
    kg_strlcpy(x->c->entry, v, sizeof x->c->entry);
    return 0;
}

static int need_entry(struct ctx *x)
{
    return perr(x, x->c->line_header, "missing 'entry:' (the kernel function to call)");
}

static int parse_name(struct ctx *x, char *v, int line)
{
    if (!*v || strlen(v) >= KG_NAME_MAX)
        return perr(x, line, "name: expected a name of 1 to %d characters", KG_NAME_MAX - 1);
    kg_strlcpy(x->c->name, v, sizeof x->c->name);
    return 0;
}

/* Without `name:` reports call the kernel by its entry. */
static int name_is_entry(struct ctx *x)
{
    kg_strlcpy(x->c->name, x->c->entry, sizeof x->c->name);
    return 0;
}

static int need_args(struct ctx *x)
{
    return perr(x, x->c->line_header, "missing 'args:' (the entry's parameters, in order)");
}

/* A host kernel is a plain call; a CUDA kernel cannot be launched without a grid and block. */
static int need_launch_if_cuda(struct ctx *x)
{
    if (x->c->lang != KG_LANG_CUDA) return 0;
    return perr(x, x->c->line_header, "missing 'launch:' (grid=..., block=..., smem=...): a .cu kernel needs it");
}

static int parse_op(struct ctx *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    struct kg_err ee;
    kg_strlcpy(c->op_text, v, sizeof c->op_text);
    if (kg_op_parse(v, &c->op, &ee)) return perr(x, line, "op: %s", ee.msg);
    c->has_op = true;
    return 0;
}

/* The oracle's file: `in FILE` relative to the kernel file's folder, else the kernel file. */
static char *oracle_path(const char *kernel, const char *f)
{
    if (!f) return strdup(kernel);
    if (f[0] == '/') return strdup(f);
    char *dup = strdup(kernel);
    if (!dup) return NULL;
    char *dir = dirname(dup);
    size_t need = strlen(dir) + strlen(f) + 2;
    char *p = malloc(need);
    if (p) snprintf(p, need, "%s/%s", dir, f);
    free(dup);
    return p;
}

/* `oracle: FUNC [in FILE.c]`: a user fp64 function instead of a built-in op. */
static int parse_oracle(struct ctx *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *in = strstr(v, " in ");
    if (in) *in = 0;
    c->oracle_file = oracle_path(c->path, in ? trim(in + 4) : NULL);
    if (!c->oracle_file) return perr(x, 0, "out of memory");
    v = trim(v);
    if (!valid_ident(v, strlen(v)))
        return perr(x, line, "oracle: '%s' is not a C function name (oracle: FUNC [in FILE.c])", v);
    kg_strlcpy(c->oracle_func, v, sizeof c->oracle_func);
    size_t ol = strlen(c->oracle_file);
    if (ol < 2 || strcmp(c->oracle_file + ol - 2, ".c"))
        return perr(x, line, "oracle: %s must be a host C file (.c)", c->oracle_file);
    snprintf(c->op_text, sizeof c->op_text, "oracle %s", c->oracle_func);
    return 0;
}

/* Runs when `oracle:` is absent: then `op:` must have been given. */
static int need_op_or_oracle(struct ctx *x)
{
    if (x->c->has_op) return 0;
    return perr(x, x->c->line_header, "missing 'op:' (a built-in oracle such as softmax(dim=1)) or 'oracle: FUNC'");
}

static int parse_tolerance(struct ctx *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *kk = strstr(v, "k="), *end;
    if (!kk) return perr(x, line, "tolerance: expected k=NUMBER (threshold = k x reference error + floor)");
    errno = 0;
    c->tol_k = strtod(kk + 2, &end);
    if (errno || end == kk + 2 || *trim(end) || !(c->tol_k >= 1))
        return perr(x, line, "tolerance: k must be a number >= 1, got '%s'", kk + 2);
    return 0;
}

static int parse_deterministic(struct ctx *x, char *v, int line)
{
    if (!strcmp(v, "yes") || !strcmp(v, "true"))
        x->c->deterministic = true;
    else if (!strcmp(v, "no") || !strcmp(v, "false"))
        x->c->deterministic = false;
    else
        return perr(x, line, "deterministic: expected yes or no, got '%s'", v);
    return 0;
}

static int parse_dtypes(struct ctx *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = next_item(&cur, " \t,"))) {
        enum kg_dtype t;
        if (kg_dtype_parse(item, strlen(item), &t) || t == KG_DTYPE_T || !kg_dtype_is_float(t))
            return perr(x, line, "dtypes: '%s' is not a floating dtype (f64 f32 f16 bf16)", item);
        if (c->ndtypes == KG_MAX_DTYPES) return perr(x, line, "dtypes: too many");
        c->dtypes[c->ndtypes++] = t;
    }
    if (!c->ndtypes) return perr(x, line, "dtypes: empty list");
    return 0;
}

/* One `alias:` pair: an out tensor that shares its buffer with an in tensor of the same type. */
static int alias_pair(struct ctx *x, char *item, int line)
{
    struct kg_contract *c = x->c;
    char *eq = strchr(item, '=');
    if (!eq) return perr(x, line, "alias: expected OUT=IN, got '%s'", item);
    *eq = 0;
    int o = kg_contract_arg(c, trim(item)), i = kg_contract_arg(c, trim(eq + 1));
    if (o < 0 || i < 0) return perr(x, line, "alias: no arg named '%s'", o < 0 ? trim(item) : trim(eq + 1));
    const struct kg_arg *ao = &c->args[o], *ai = &c->args[i];
    if (ao->kind != KG_ARG_TENSOR || ao->io != KG_OUT || ai->kind != KG_ARG_TENSOR || ai->io != KG_IN)
        return perr(x, line, "alias: %s=%s must name an out tensor and an in tensor", ao->name, ai->name);
    if (ao->dtype != ai->dtype || ao->rank != ai->rank)
        return perr(x, line, "alias: %s and %s must have the same dtype and shape", ao->name, ai->name);
    for (int d = 0; d < ao->rank; d++)
        if (strcmp(kg_expr_text(ao->dims[d]), kg_expr_text(ai->dims[d])))
            return perr(x, line, "alias: %s and %s must have the same dims", ao->name, ai->name);
    c->alias_of[o] = i;
    return 0;
}

static int parse_alias(struct ctx *x, char *v, int line)
{
    char *cur = v, *item;
    while ((item = next_item(&cur, " \t,")))
        if (alias_pair(x, item, line)) return -1;
    return 0;
}

/* ---- checks across keys ------------------------------------------------------------------ */

/* `op:` and `oracle:` are two ways of naming one oracle. */
static int check_one_oracle(struct ctx *x, const struct raw *r)
{
    if (r->value[K_OP] && r->value[K_ORACLE])
        return perr(x, r->line[K_ORACLE], "give either 'op:' (built-in oracle) or 'oracle:' (your fp64 function), not both");
    return 0;
}

/* `dtypes:` lists the instances of dtype T: one without the other means nothing. */
static int check_dtypes_vs_t(struct ctx *x, const struct raw *r)
{
    struct kg_contract *c = x->c;
    int uses_t = 0;
    for (int i = 0; i < c->nargs; i++)
        if (c->args[i].kind == KG_ARG_TENSOR && c->args[i].dtype == KG_DTYPE_T) uses_t = 1;
    if (uses_t && !c->ndtypes) return perr(x, c->line_args, "args: dtype T needs a 'dtypes:' line listing the instances");
    if (c->ndtypes && !uses_t) return perr(x, c->line_dtypes, "dtypes: given, but no arg has dtype T");
    return 0;
}

static int nominal_shape(const struct kg_contract *c, const struct kg_arg *a, struct kg_shape *s,
                         struct kg_err *e)
{
    s->rank = a->rank;
    for (int d = 0; d < a->rank; d++)
        if (kg_expr_eval(a->dims[d], c->nominal, &s->dims[d], e)) return -1;
    return 0;
}

/* The args' nominal shapes against what the op takes; also that something is judged. */
static int check_op(struct ctx *x)
{
    struct kg_contract *c = x->c;
    struct kg_shape in[KG_OP_MAX_IO], out[KG_OP_MAX_IO];
    int nin = 0, nout = 0;
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        struct kg_err ee;
        if (kg_arg_is_input(a)) {
            if (nin == KG_OP_MAX_IO) return perr(x, c->line_args, "more than %d input tensors", KG_OP_MAX_IO);
            if (nominal_shape(c, a, &in[nin++], &ee)) return perr(x, c->line_args, "args: %s: %s", a->name, ee.msg);
        }
        if (kg_arg_is_output(a)) {
            if (nout == KG_OP_MAX_IO) return perr(x, c->line_args, "more than %d output tensors", KG_OP_MAX_IO);
            if (nominal_shape(c, a, &out[nout++], &ee)) return perr(x, c->line_args, "args: %s: %s", a->name, ee.msg);
        }
    }
    if (nout == 0) return perr(x, c->line_args, "args: no out or inout tensor: nothing to check");
    if (!c->has_op) return 0;
    struct kg_err ee;
    if (kg_op_check(&c->op, nin, in, nout, out, &ee)) return perr(x, c->line_op, "op %s: %s", c->op_text, ee.msg);
    return 0;
}

/* ---- the key table ----------------------------------------------------------------------- */

/* One step of interpreting the header: a key (its parser when given, else `absent`, NULL for
 * an optional key), or a check across the keys read so far. */
struct step {
    enum key key;
    int (*parse)(struct ctx *x, char *value, int line);
    int (*absent)(struct ctx *x);
    int (*check)(struct ctx *x, const struct raw *r);
};

#define KEY(k, parse, absent) {k, parse, absent, NULL}
#define CHECK(fn) {K_COUNT, NULL, NULL, fn}

/* In dependency order, which is also the order errors are reported in: the entry names the
 * kernel, shape: declares the symbols that args: dims, sweep: and launch: use; alias: and
 * inputs: refer to args. Reordering changes which of several errors a user sees first. */
static const struct step steps[] = {
    KEY(K_ENTRY, parse_entry, need_entry),
    KEY(K_NAME, parse_name, name_is_entry),
    KEY(K_SHAPE, parse_shape, NULL),
    KEY(K_ARGS, parse_args, need_args),
    KEY(K_SWEEP, parse_sweep, NULL),
    KEY(K_LAUNCH, parse_launch, need_launch_if_cuda),
    CHECK(check_one_oracle),
    KEY(K_OP, parse_op, NULL),
    KEY(K_ORACLE, parse_oracle, need_op_or_oracle),
    KEY(K_TOLERANCE, parse_tolerance, NULL),
    KEY(K_DETERMINISTIC, parse_deterministic, NULL),
    KEY(K_DTYPES, parse_dtypes, NULL),
    CHECK(check_dtypes_vs_t),
    KEY(K_ALIAS, parse_alias, NULL),
    KEY(K_INPUTS, parse_inputs, NULL),
};

static int run_steps(struct ctx *x, const struct raw *r)
{
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        const struct step *s = &steps[i];
        int rc;
        if (s->check)
            rc = s->check(x, r);
        else if (r->value[s->key])
            rc = s->parse(x, r->value[s->key], r->line[s->key]);
        else
            rc = s->absent ? s->absent(x) : 0;
        if (rc) return -1;
    }
    return 0;
}

/* ---- load ----------------------------------------------------------------------------------- */

/* The file's bytes, hash and language (by extension). */
static int read_source(struct ctx *x)
{
    struct kg_contract *c = x->c;
    c->source = kg_read_file(c->path, &c->source_len, x->e);
    if (!c->source) return -1;
    if (memchr(c->source, 0, c->source_len)) return perr(x, 0, "not a text file");
    c->hash = kg_hash64(c->source, c->source_len, 0);
    size_t pl = strlen(c->path);
    if (pl > 3 && !strcmp(c->path + pl - 3, ".cu"))
        c->lang = KG_LANG_CUDA;
    else if (pl > 2 && !strcmp(c->path + pl - 2, ".c"))
        c->lang = KG_LANG_C;
    else
        return perr(x, 0, "unknown kernel language: expected a .c (host C) or .cu (CUDA C) file");
    return 0;
}

/* Finds the `/\*@kgate` comment and splits its text into r. */
static int read_header(struct ctx *x, struct raw *r)
{
    struct kg_contract *c = x->c;
    char *hdr = strstr(c->source, "/*@kgate");
    if (!hdr)
        return perr(x, 1, "no contract: the file must start with a '/*@kgate ... */' comment (see kgate-contract(5))");
    c->line_header = line_of(c->source, hdr);
    char *end = strstr(hdr, "*/");
    if (!end) return perr(x, c->line_header, "the '/*@kgate' comment is never closed with '*/'");
    size_t hl = (size_t)(end - hdr) - 8;
    char *text = malloc(hl + 1);
    if (!text) return perr(x, 0, "out of memory");
    memcpy(text, hdr + 8, hl);
    text[hl] = 0;
    int rc = split_header(x, text, c->line_header, r);
    free(text);
    return rc;
}

/* Every key's line, for messages about it (also those of later checks). */
static void set_lines(struct kg_contract *c, const struct raw *r)
{
    c->line_name = r->line[K_NAME];
    c->line_op = r->line[K_OP] ? r->line[K_OP] : r->line[K_ORACLE];
    c->line_entry = r->line[K_ENTRY];
    c->line_args = r->line[K_ARGS];
    c->line_launch = r->line[K_LAUNCH];
    c->line_shape = r->line[K_SHAPE];
    c->line_sweep = r->line[K_SWEEP];
    c->line_tolerance = r->line[K_TOLERANCE];
    c->line_alias = r->line[K_ALIAS];
    c->line_dtypes = r->line[K_DTYPES];
    c->line_inputs = r->line[K_INPUTS];
}

/* Reads and checks the file; then, with every key read, the whole contract against the op and
 * against the entry's definition in the source. */
static int load(struct ctx *x, struct raw *r)
{
    if (read_source(x) || read_header(x, r)) return -1;
    set_lines(x->c, r);
    if (run_steps(x, r) || check_op(x) || check_signature(x)) return -1;
    return 0;
}

int kg_contract_load(const char *path, struct kg_contract **out, struct kg_err *e)
{
    *out = NULL;
    struct kg_contract *c = calloc(1, sizeof *c);
    if (!c) return kg_errf(e, "%s: out of memory", path);
    struct raw r = {0};
    struct ctx x = {c, e};
    c->path = strdup(path);
    c->tol_k = 2;
    c->deterministic = true;
    for (int i = 0; i < KG_MAX_ARGS; i++) c->alias_of[i] = -1;
    int rc = c->path ? load(&x, &r) : perr(&x, 0, "out of memory");
    for (int k = 0; k < K_COUNT; k++) free(r.value[k]);
    if (rc) {
        kg_contract_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

void kg_contract_free(struct kg_contract *c)
{
    if (!c) return;
    for (int i = 0; i < c->nargs; i++)
        for (int d = 0; d < c->args[i].rank; d++) kg_expr_free(c->args[i].dims[d]);
    for (int i = 0; i < 3; i++) {
        kg_expr_free(c->grid[i]);
        kg_expr_free(c->block[i]);
    }
    kg_expr_free(c->smem);
    free(c->oracle_file);
    free(c->problem_path);
    free(c->source);
    free(c->path);
    free(c);
}

enum kg_dtype kg_arg_dtype(const struct kg_arg *a, enum kg_dtype inst)
{
    return a->dtype == KG_DTYPE_T ? inst : a->dtype;
}

enum kg_dtype kg_contract_default_dtype(const struct kg_contract *c)
{
    if (c->ndtypes) return c->dtypes[0];
    for (int i = 0; i < c->nargs; i++)
        if (c->args[i].kind == KG_ARG_TENSOR && kg_dtype_is_float(c->args[i].dtype)) return c->args[i].dtype;
    return KG_F32;
}
