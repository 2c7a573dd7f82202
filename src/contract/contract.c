/* contract.c: loading a kernel file's `/\*@kgate ... *\/` header. Two passes: the header is
 * split into `key: value` entries with their line numbers (continuation lines start with
 * white space), then one table interprets the keys in dependency order (shape symbols before
 * the dims and launch expressions that use them). Last, the whole contract is checked against
 * its op and against the entry's C signature in the source (signature.c). */
#include "contract/contract.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/parse.h"

/* ---- the header's raw entries ------------------------------------------------------------ */

enum key {
    K_NAME,
    K_OP,
    K_ORACLE,
    K_ENTRY,
    K_ARGS,
    K_LAUNCH,
    K_SHAPE,
    K_SWEEP,
    K_TOLERANCE,
    K_DETERMINISTIC,
    K_ALIAS,
    K_DTYPES,
    K_INPUTS,
    K_ALLOW,
    K_COUNT
};

static const char *const key_names[K_COUNT] = {
    "name",  "op",        "oracle",        "entry", "args",   "launch", "shape",
    "sweep", "tolerance", "deterministic", "alias", "dtypes", "inputs", "allow",
};

struct raw {
    char *value[K_COUNT];
    int line[K_COUNT];
};

/* Appends a continuation line t to a key's value, after one space. */
static int append_value(struct kg_parse *x, char **value, const char *t, int line)
{
    size_t a = strlen(*value), b = strlen(t);
    char *nv = realloc(*value, a + b + 2);
    if (!nv) return kg_perr(x, line, "out of memory");
    nv[a] = ' ';
    memcpy(nv + a + 1, t, b + 1);
    *value = nv;
    return 0;
}

/* A `key: value` line (t, trimmed): the key must be known and not given yet; it becomes the
 * key that continuation lines extend (*cur). */
static int new_entry(struct kg_parse *x, char *t, int line, struct raw *r, int *cur)
{
    char *colon = strchr(t, ':');
    if (!colon)
        return kg_perr(x, line,
                       "expected 'key: value' (keys: name, op, oracle, entry, args, launch, shape, sweep, tolerance, "
                       "deterministic, alias, dtypes, inputs)");
    *colon = 0;
    char *key = kg_trim(t);
    int k;
    for (k = 0; k < K_COUNT; k++)
        if (strcmp(key, key_names[k]) == 0) break;
    if (k == K_COUNT)
        return kg_perr(x, line,
                       "unknown key '%s' (keys: name, op, oracle, entry, args, launch, shape, sweep, tolerance, "
                       "deterministic, alias, dtypes, inputs)",
                       key);
    if (r->value[k]) return kg_perr(x, line, "'%s' given twice (first on line %d)", key, r->line[k]);
    r->value[k] = strdup(kg_trim(colon + 1));
    if (!r->value[k]) return kg_perr(x, line, "out of memory");
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
static int split_header(struct kg_parse *x, char *text, int base_line, struct raw *r)
{
    int cur = -1;
    for (int line = base_line;; line++) {
        char *nl = strchr(text, '\n');
        if (nl) *nl = 0;
        size_t len = strlen(text);
        if (len && text[len - 1] == '\r') text[--len] = 0;
        char *t = kg_trim(text);
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

/* ---- the keys read here ------------------------------------------------------------------ */

static int parse_entry(struct kg_parse *x, char *v, int line)
{
    if (!kg_valid_ident(v, strlen(v))) return kg_perr(x, line, "entry: '%s' is not a C identifier", v);
    kg_strlcpy(x->c->entry, v, sizeof x->c->entry);
    return 0;
}

static int need_entry(struct kg_parse *x)
{
    return kg_perr(x, x->c->line_header, "missing 'entry:' (the kernel function to call)");
}

static int parse_name(struct kg_parse *x, char *v, int line)
{
    if (!*v || strlen(v) >= KG_NAME_MAX)
        return kg_perr(x, line, "name: expected a name of 1 to %d characters", KG_NAME_MAX - 1);
    kg_strlcpy(x->c->name, v, sizeof x->c->name);
    return 0;
}

/* Without `name:` reports call the kernel by its entry. */
static int name_is_entry(struct kg_parse *x)
{
    kg_strlcpy(x->c->name, x->c->entry, sizeof x->c->name);
    return 0;
}

static int need_args(struct kg_parse *x)
{
    return kg_perr(x, x->c->line_header, "missing 'args:' (the entry's parameters, in order)");
}

/* A host kernel is a plain call; a CUDA kernel cannot be launched without a grid and block. */
static int need_launch_if_cuda(struct kg_parse *x)
{
    if (x->c->lang != KG_LANG_CUDA) return 0;
    return kg_perr(x, x->c->line_header, "missing 'launch:' (grid=..., block=..., smem=...): a .cu kernel needs it");
}

/* What to write for an op that is not built in. */
static const char *const not_built_in =
    "an op that is not built in is 'oracle: FUNC' instead, your own fp64 C function (see kgate-contract(5))";

/* Whether v is an expression ("y = x*2+1") rather than NAME or NAME(KEY=VALUE, ...): an
 * operator outside the parentheses. */
static int is_expression(const char *v)
{
    int depth = 0;
    for (const char *p = v; *p; p++) {
        if (*p == '(') depth++;
        if (*p == ')') depth--;
        if (depth == 0 && strchr("=+-*/%^<>?", *p)) return 1;
    }
    return 0;
}

/* Whether v starts with a name that is no built-in op. */
static int names_no_op(const char *v)
{
    char name[KG_NAME_MAX];
    size_t n = 0;
    while (n + 1 < sizeof name && (isalnum((unsigned char)v[n]) || v[n] == '_')) n++;
    memcpy(name, v, n);
    name[n] = 0;
    return n && !kg_op_find(name);
}

static int parse_op(struct kg_parse *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    struct kg_err ee;
    kg_strlcpy(c->op_text, v, sizeof c->op_text);
    if (is_expression(v))
        return kg_perr(x, line, "op: '%s' is an expression, not a built-in op (such as relu or softmax(dim=1)); %s", v,
                       not_built_in);
    if (kg_op_parse(v, &c->op, &ee))
        return kg_perr(x, line, "op: %s%s%s", ee.msg, names_no_op(v) ? "; " : "", names_no_op(v) ? not_built_in : "");
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
static int parse_oracle(struct kg_parse *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *in = strstr(v, " in ");
    if (in) *in = 0;
    c->oracle_file = oracle_path(c->path, in ? kg_trim(in + 4) : NULL);
    if (!c->oracle_file) return kg_perr(x, 0, "out of memory");
    v = kg_trim(v);
    if (!kg_valid_ident(v, strlen(v)))
        return kg_perr(x, line, "oracle: '%s' is not a C function name (oracle: FUNC [in FILE.c])", v);
    kg_strlcpy(c->oracle_func, v, sizeof c->oracle_func);
    size_t ol = strlen(c->oracle_file);
    if (ol < 2 || strcmp(c->oracle_file + ol - 2, ".c"))
        return kg_perr(x, line, "oracle: %s must be a host C file (.c)", c->oracle_file);
    snprintf(c->op_text, sizeof c->op_text, "oracle %s", c->oracle_func);
    return 0;
}

/* Runs when `oracle:` is absent: then `op:` must have been given. */
static int need_op_or_oracle(struct kg_parse *x)
{
    if (x->c->has_op) return 0;
    return kg_perr(x, x->c->line_header, "missing 'op:' (a built-in oracle such as softmax(dim=1)) or 'oracle: FUNC'");
}

/* `tolerance: k=K`, the whole value: k finite, in [1, KG_TOL_K_MAX] (contract.h says why). */
static int parse_tolerance(struct kg_parse *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *end;
    if (strncmp(v, "k=", 2))
        return kg_perr(x, line, "tolerance: expected k=NUMBER, got '%s' (threshold = k x reference error + floor)", v);
    errno = 0;
    c->tol_k = strtod(v + 2, &end);
    /* k=inf would make every calibrated threshold infinite: a kernel that passes anything */
    if (errno || end == v + 2 || *kg_trim(end) || !(c->tol_k >= 1 && c->tol_k <= KG_TOL_K_MAX))
        return kg_perr(x, line, "tolerance: k must be a number from 1 to 1e6, got '%s' (the default is k=2)", v + 2);
    return 0;
}

/* `allow: tf32`: what the kernel does on purpose that the fp32 contract would fail. */
static int parse_allow(struct kg_parse *x, char *v, int line)
{
    if (strcmp(v, "tf32")) return kg_perr(x, line, "allow: expected tf32, got '%s'", v);
    x->c->allow_tf32 = true;
    return 0;
}

static int parse_deterministic(struct kg_parse *x, char *v, int line)
{
    if (!strcmp(v, "yes") || !strcmp(v, "true"))
        x->c->deterministic = true;
    else if (!strcmp(v, "no") || !strcmp(v, "false"))
        x->c->deterministic = false;
    else
        return kg_perr(x, line, "deterministic: expected yes or no, got '%s'", v);
    return 0;
}

static int parse_dtypes(struct kg_parse *x, char *v, int line)
{
    struct kg_contract *c = x->c;
    char *cur = v, *item;
    while ((item = kg_next_item(&cur, " \t,"))) {
        enum kg_dtype t;
        if (kg_dtype_parse(item, strlen(item), &t) || t == KG_DTYPE_T || !kg_dtype_is_float(t))
            return kg_perr(x, line, "dtypes: '%s' is not a floating dtype (f64 f32 f16 bf16)", item);
        for (int i = 0; i < c->ndtypes; i++)
            if (c->dtypes[i] == t) return kg_perr(x, line, "dtypes: %s listed twice (each instance once)", item);
        if (c->ndtypes == KG_MAX_DTYPES) return kg_perr(x, line, "dtypes: too many");
        c->dtypes[c->ndtypes++] = t;
    }
    if (!c->ndtypes) return kg_perr(x, line, "dtypes: empty list");
    return 0;
}

/* ---- checks across keys ------------------------------------------------------------------ */

/* `op:` and `oracle:` are two ways of naming one oracle. */
static int check_one_oracle(struct kg_parse *x, const struct raw *r)
{
    if (r->value[K_OP] && r->value[K_ORACLE])
        return kg_perr(x, r->line[K_ORACLE],
                       "give either 'op:' (built-in oracle) or 'oracle:' (your fp64 function), not both");
    return 0;
}

/* Whether shape symbol k is used by a dim, a scalar or a launch expression. */
static int symbol_used(const struct kg_contract *c, int k)
{
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        if (a->sym == k) return 1;
        for (int d = 0; d < a->rank; d++)
            if (kg_expr_uses(a->dims[d], k)) return 1;
    }
    for (int i = 0; i < 3; i++)
        if ((c->grid[i] && kg_expr_uses(c->grid[i], k)) || (c->block[i] && kg_expr_uses(c->block[i], k))) return 1;
    return c->smem && kg_expr_uses(c->smem, k);
}

/* A symbol nothing uses is a mistake (a dim written with another name, a forgotten scalar): the
 * shapes gate would sweep it and run the same case again and again. */
static int check_symbols_used(struct kg_parse *x, const struct raw *r)
{
    (void)r;
    const struct kg_contract *c = x->c;
    for (int k = 0; k < c->nsyms; k++)
        if (!symbol_used(c, k))
            return kg_perr(x, c->line_shape,
                           "shape: symbol '%s' is unused: no dim, scalar or launch expression uses it (remove it, or "
                           "use it in args:)",
                           c->sym[k]);
    return 0;
}

/* `dtypes:` lists the instances of dtype T: one without the other means nothing. */
static int check_dtypes_vs_t(struct kg_parse *x, const struct raw *r)
{
    struct kg_contract *c = x->c;
    int uses_t = 0;
    for (int i = 0; i < c->nargs; i++)
        if (c->args[i].kind == KG_ARG_TENSOR && c->args[i].dtype == KG_DTYPE_T) uses_t = 1;
    if (uses_t && !c->ndtypes)
        return kg_perr(x, c->line_args, "args: dtype T needs a 'dtypes:' line listing the instances");
    if (c->ndtypes && !uses_t) return kg_perr(x, c->line_dtypes, "dtypes: given, but no arg has dtype T");
    return 0;
}

static int nominal_shape(const struct kg_contract *c, const struct kg_arg *a, struct kg_shape *s, struct kg_err *e)
{
    s->rank = a->rank;
    for (int d = 0; d < a->rank; d++)
        if (kg_expr_eval(a->dims[d], c->nominal, &s->dims[d], e)) return -1;
    return 0;
}

/* The args' nominal shapes against what the op takes; also that something is judged. */
static int check_op(struct kg_parse *x)
{
    struct kg_contract *c = x->c;
    struct kg_shape in[KG_OP_MAX_IO], out[KG_OP_MAX_IO];
    int nin = 0, nout = 0;
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        struct kg_err ee;
        if (kg_arg_is_input(a)) {
            if (nin == KG_OP_MAX_IO) return kg_perr(x, c->line_args, "more than %d input tensors", KG_OP_MAX_IO);
            if (nominal_shape(c, a, &in[nin++], &ee)) return kg_perr(x, c->line_args, "args: %s: %s", a->name, ee.msg);
        }
        if (kg_arg_is_output(a)) {
            if (nout == KG_OP_MAX_IO) return kg_perr(x, c->line_args, "more than %d output tensors", KG_OP_MAX_IO);
            if (nominal_shape(c, a, &out[nout++], &ee))
                return kg_perr(x, c->line_args, "args: %s: %s", a->name, ee.msg);
        }
    }
    if (nout == 0) return kg_perr(x, c->line_args, "args: no out or inout tensor: nothing to check");
    if (!c->has_op) return 0;
    struct kg_err ee;
    if (kg_op_check(&c->op, nin, in, nout, out, &ee)) return kg_perr(x, c->line_op, "op %s: %s", c->op_text, ee.msg);
    return 0;
}

/* ---- the key table ----------------------------------------------------------------------- */

/* One step of interpreting the header: a key (its parser when given, else `absent`, NULL for
 * an optional key), or a check across the keys read so far. */
struct step {
    enum key key;
    int (*parse)(struct kg_parse *x, char *value, int line);
    int (*absent)(struct kg_parse *x);
    int (*check)(struct kg_parse *x, const struct raw *r);
};

#define KEY(k, parse, absent)                                                                                          \
    {                                                                                                                  \
        k, parse, absent, NULL                                                                                         \
    }
#define CHECK(fn)                                                                                                      \
    {                                                                                                                  \
        K_COUNT, NULL, NULL, fn                                                                                        \
    }

/* In dependency order, which is also the order errors are reported in: the entry names the
 * kernel, shape: declares the symbols that args: dims, sweep: and launch: use; alias: and
 * inputs: refer to args. Reordering changes which of several errors a user sees first. */
static const struct step steps[] = {
    KEY(K_ENTRY, parse_entry, need_entry),
    KEY(K_NAME, parse_name, name_is_entry),
    KEY(K_SHAPE, kg_parse_shape, NULL),
    KEY(K_ARGS, kg_parse_args, need_args),
    KEY(K_SWEEP, kg_parse_sweep, NULL),
    KEY(K_LAUNCH, kg_parse_launch, need_launch_if_cuda),
    CHECK(check_symbols_used),
    CHECK(check_one_oracle),
    KEY(K_OP, parse_op, NULL),
    KEY(K_ORACLE, parse_oracle, need_op_or_oracle),
    KEY(K_TOLERANCE, parse_tolerance, NULL),
    KEY(K_DETERMINISTIC, parse_deterministic, NULL),
    KEY(K_DTYPES, parse_dtypes, NULL),
    CHECK(check_dtypes_vs_t),
    KEY(K_ALIAS, kg_parse_alias, NULL),
    KEY(K_INPUTS, kg_parse_inputs, NULL),
    KEY(K_ALLOW, parse_allow, NULL),
};

static int run_steps(struct kg_parse *x, const struct raw *r)
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

/* ---- load -------------------------------------------------------------------------------- */

/* The source's hash and language (by the path's extension); c->source holds its bytes. */
static int check_source(struct kg_parse *x)
{
    struct kg_contract *c = x->c;
    const char *nul = memchr(c->source, 0, c->source_len);
    if (nul) {
        const char *bol = nul;
        while (bol > c->source && bol[-1] != '\n') bol--;
        return kg_perr(x, kg_line_of(c->source, nul), "NUL byte at column %d: not a text file (C or CUDA C source)",
                       (int)(nul - bol) + 1);
    }
    c->hash = kg_hash64(c->source, c->source_len, 0);
    size_t pl = strlen(c->path);
    if (pl > 3 && !strcmp(c->path + pl - 3, ".cu"))
        c->lang = KG_LANG_CUDA;
    else if (pl > 2 && !strcmp(c->path + pl - 2, ".c"))
        c->lang = KG_LANG_C;
    else
        return kg_perr(x, 0, "unknown kernel language: expected a .c (host C) or .cu (CUDA C) file");
    return 0;
}

/* Finds the `/\*@kgate` comment and splits its text into r. */
static int read_header(struct kg_parse *x, struct raw *r)
{
    struct kg_contract *c = x->c;
    char *hdr = strstr(c->source, "/*@kgate");
    if (!hdr)
        return kg_perr(x, 1,
                       "no contract: the file must start with a '/*@kgate ... */' comment (see kgate-contract(5))");
    c->line_header = kg_line_of(c->source, hdr);
    char *end = strstr(hdr, "*/");
    if (!end) return kg_perr(x, c->line_header, "the '/*@kgate' comment is never closed with '*/'");
    size_t hl = (size_t)(end - hdr) - 8;
    char *text = malloc(hl + 1);
    if (!text) return kg_perr(x, 0, "out of memory");
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

/* Checks the source and reads its header; then, with every key read, the whole contract
 * against the op and against the entry's definition in the source. */
static int load(struct kg_parse *x, struct raw *r)
{
    if (check_source(x) || read_header(x, r)) return -1;
    set_lines(x->c, r);
    if (run_steps(x, r) || check_op(x) || kg_check_signature(x)) return -1;
    return 0;
}

/* The contract of source (len bytes, NUL-terminated, owned from here on) named path. */
static int load_source(const char *path, char *source, size_t len, struct kg_contract **out, struct kg_err *e)
{
    *out = NULL;
    struct kg_contract *c = calloc(1, sizeof *c);
    if (!c) {
        free(source);
        return kg_errf(e, "%s: out of memory", path);
    }
    struct raw r = {0};
    struct kg_parse x = {c, e};
    c->source = source;
    c->source_len = len;
    c->path = strdup(path);
    c->tol_k = 2;
    c->deterministic = true;
    for (int i = 0; i < KG_MAX_ARGS; i++) c->alias_of[i] = -1;
    /* without a copy of the path, kg_perr would print "(null)" */
    int rc = c->path ? load(&x, &r) : kg_errf(e, "%s: out of memory", path);
    for (int k = 0; k < K_COUNT; k++) free(r.value[k]);
    if (rc) {
        kg_contract_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

int kg_contract_load(const char *path, struct kg_contract **out, struct kg_err *e)
{
    *out = NULL;
    size_t len = 0;
    char *source = kg_read_file(path, KG_SOURCE_MAX, &len, e);
    if (!source) return -1;
    return load_source(path, source, len, out, e);
}

int kg_contract_load_text(const char *path, const char *text, size_t len, struct kg_contract **out, struct kg_err *e)
{
    *out = NULL;
    char *source = malloc(len + 1);
    if (!source) return kg_errf(e, "%s: out of memory", path);
    memcpy(source, text, len);
    source[len] = 0;
    return load_source(path, source, len, out, e);
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
