/* expr.c: a recursive-descent parser and evaluator for launch and dim expressions.
 * Expressions are tiny (a handful of nodes), so nodes live in one malloc'd array. */
#include "base/expr.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum node_kind { N_NUM, N_SYM, N_NEG, N_ADD, N_SUB, N_MUL, N_DIV, N_MOD, N_CDIV, N_MIN, N_MAX };

struct node {
    enum node_kind kind;
    int64_t value; /* N_NUM: the number; N_SYM: the symbol index */
    int a, b;      /* operand node indices */
};

struct kg_expr {
    int n, cap, root;
    struct node *nodes;
    char *text;
};

struct parser {
    const char *s;
    size_t n, pos;
    kg_sym_lookup lookup;
    void *ud;
    struct kg_expr *x;
    struct kg_err *e;
    int failed;
    int depth;
};

static void skip_ws(struct parser *p)
{
    while (p->pos < p->n && isspace((unsigned char)p->s[p->pos])) p->pos++;
}

static int fail(struct parser *p, const char *fmt, const char *arg)
{
    if (!p->failed) kg_errf(p->e, fmt, arg);
    p->failed = 1;
    return -1;
}

static int add_node(struct parser *p, enum node_kind k, int64_t v, int a, int b)
{
    if (p->failed) return -1;
    if (p->x->n == p->x->cap) {
        int cap = p->x->cap ? p->x->cap * 2 : 16;
        struct node *nn = realloc(p->x->nodes, (size_t)cap * sizeof *nn);
        if (!nn) return fail(p, "out of memory%s", "");
        p->x->nodes = nn;
        p->x->cap = cap;
    }
    p->x->nodes[p->x->n] = (struct node){k, v, a, b};
    return p->x->n++;
}

static int parse_sum(struct parser *p);

static int expect(struct parser *p, char c)
{
    skip_ws(p);
    if (p->pos < p->n && p->s[p->pos] == c) {
        p->pos++;
        return 0;
    }
    char what[2] = {c, 0};
    return fail(p, "expected '%s'", what);
}

static int parse_call(struct parser *p, enum node_kind k)
{
    if (expect(p, '(')) return -1;
    int a = parse_sum(p);
    if (a < 0 || expect(p, ',')) return -1;
    int b = parse_sum(p);
    if (b < 0 || expect(p, ')')) return -1;
    return add_node(p, k, 0, a, b);
}

static int parse_atom(struct parser *p)
{
    skip_ws(p);
    if (p->pos >= p->n) return fail(p, "expected a number or a symbol%s", "");
    if (++p->depth > 64) return fail(p, "expression nested too deeply%s", "");
    char c = p->s[p->pos];
    int r;
    if (c == '(') {
        p->pos++;
        r = parse_sum(p);
        if (r >= 0 && expect(p, ')')) r = -1;
    } else if (c == '-') {
        p->pos++;
        int a = parse_atom(p);
        r = a < 0 ? -1 : add_node(p, N_NEG, 0, a, -1);
    } else if (isdigit((unsigned char)c)) {
        char *end;
        const char *start = p->s + p->pos;
        errno = 0;
        long long v = strtoll(start, &end, 10);
        if (errno == ERANGE) return fail(p, "number too large (at most 2^63-1)%s", "");
        if ((size_t)(end - p->s) > p->n) end = (char *)p->s + p->n;
        p->pos = (size_t)(end - p->s);
        /* allow 1e6-style and k/M suffixes? no: contracts use plain integers */
        if (p->pos < p->n && (isalpha((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_'))
            return fail(p, "malformed number%s", "");
        r = add_node(p, N_NUM, v, -1, -1);
    } else if (isalpha((unsigned char)c) || c == '_') {
        size_t st = p->pos;
        while (p->pos < p->n && (isalnum((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_')) p->pos++;
        size_t len = p->pos - st;
        char name[64];
        if (len >= sizeof name) return fail(p, "symbol name too long%s", "");
        memcpy(name, p->s + st, len);
        name[len] = 0;
        skip_ws(p);
        int is_call = p->pos < p->n && p->s[p->pos] == '(';
        if (is_call && strcmp(name, "cdiv") == 0)
            r = parse_call(p, N_CDIV);
        else if (is_call && strcmp(name, "min") == 0)
            r = parse_call(p, N_MIN);
        else if (is_call && strcmp(name, "max") == 0)
            r = parse_call(p, N_MAX);
        else if (is_call) {
            p->pos = st;
            r = fail(p, "unknown function '%s' (known: cdiv, min, max)", name);
        } else {
            int k = p->lookup ? p->lookup(p->ud, name, len) : -1;
            if (k < 0) {
                p->pos = st;
                r = fail(p, "undefined symbol '%s'", name);
            } else
                r = add_node(p, N_SYM, k, -1, -1);
        }
    } else {
        char what[2] = {c, 0};
        r = fail(p, "unexpected '%s'", what);
    }
    p->depth--;
    return r;
}

static int parse_product(struct parser *p)
{
    int a = parse_atom(p);
    for (;;) {
        if (a < 0) return -1;
        skip_ws(p);
        if (p->pos >= p->n) return a;
        char c = p->s[p->pos];
        enum node_kind k = c == '*' ? N_MUL : c == '/' ? N_DIV : c == '%' ? N_MOD : N_NUM;
        if (k == N_NUM) return a;
        p->pos++;
        int b = parse_atom(p);
        if (b < 0) return -1;
        a = add_node(p, k, 0, a, b);
    }
}

static int parse_sum(struct parser *p)
{
    int a = parse_product(p);
    for (;;) {
        if (a < 0) return -1;
        skip_ws(p);
        if (p->pos >= p->n) return a;
        char c = p->s[p->pos];
        if (c != '+' && c != '-') return a;
        p->pos++;
        int b = parse_product(p);
        if (b < 0) return -1;
        a = add_node(p, c == '+' ? N_ADD : N_SUB, 0, a, b);
    }
}

struct kg_expr *kg_expr_parse(const char *s, size_t n, kg_sym_lookup lookup, void *ud, int *col, struct kg_err *e)
{
    struct kg_expr *x = calloc(1, sizeof *x);
    if (!x) {
        kg_errf(e, "out of memory");
        return NULL;
    }
    struct parser p = {s, n, 0, lookup, ud, x, e, 0, 0};
    x->root = parse_sum(&p);
    skip_ws(&p);
    if (!p.failed && p.pos < p.n) fail(&p, "unexpected '%s' after the expression", (char[2]){s[p.pos], 0});
    if (p.failed) {
        if (col) *col = (int)p.pos;
        kg_expr_free(x);
        return NULL;
    }
    x->text = malloc(n + 1);
    if (!x->text) {
        kg_expr_free(x);
        kg_errf(e, "out of memory");
        return NULL;
    }
    /* keep the text with surrounding whitespace trimmed */
    size_t a = 0, b = n;
    while (a < b && isspace((unsigned char)s[a])) a++;
    while (b > a && isspace((unsigned char)s[b - 1])) b--;
    memcpy(x->text, s + a, b - a);
    x->text[b - a] = 0;
    return x;
}

void kg_expr_free(struct kg_expr *x)
{
    if (!x) return;
    free(x->nodes);
    free(x->text);
    free(x);
}

static int eval_node(const struct kg_expr *x, int i, const int64_t *sym, int64_t *out, struct kg_err *e)
{
    const struct node *nd = &x->nodes[i];
    int64_t a = 0, b = 0;
    if (nd->kind == N_NUM) {
        *out = nd->value;
        return 0;
    }
    if (nd->kind == N_SYM) {
        *out = sym[nd->value];
        return 0;
    }
    if (eval_node(x, nd->a, sym, &a, e)) return -1;
    if (nd->kind == N_NEG) {
        if (a == INT64_MIN) return kg_errf(e, "'%s': integer overflow", x->text);
        *out = -a;
        return 0;
    }
    if (eval_node(x, nd->b, sym, &b, e)) return -1;
    int64_t r;
    switch (nd->kind) {
    case N_ADD:
        if (__builtin_add_overflow(a, b, &r)) return kg_errf(e, "'%s': integer overflow", x->text);
        break;
    case N_SUB:
        if (__builtin_sub_overflow(a, b, &r)) return kg_errf(e, "'%s': integer overflow", x->text);
        break;
    case N_MUL:
        if (__builtin_mul_overflow(a, b, &r)) return kg_errf(e, "'%s': integer overflow", x->text);
        break;
    case N_DIV:
    case N_MOD:
    case N_CDIV:
        if (b == 0) return kg_errf(e, "'%s': division by zero", x->text);
        if (a == INT64_MIN && b == -1) return kg_errf(e, "'%s': integer overflow", x->text);
        if (nd->kind == N_DIV)
            r = a / b;
        else if (nd->kind == N_MOD)
            r = a % b;
        else
            r = a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
        break;
    case N_MIN: r = a < b ? a : b; break;
    case N_MAX: r = a > b ? a : b; break;
    default: return kg_errf(e, "internal: bad expression node");
    }
    *out = r;
    return 0;
}

int kg_expr_eval(const struct kg_expr *x, const int64_t *sym, int64_t *out, struct kg_err *e)
{
    return eval_node(x, x->root, sym, out, e);
}

const char *kg_expr_text(const struct kg_expr *x)
{
    return x->text;
}

int kg_expr_symbol(const struct kg_expr *x)
{
    const struct node *nd = &x->nodes[x->root];
    return nd->kind == N_SYM ? (int)nd->value : -1;
}

int kg_expr_uses(const struct kg_expr *x, int k)
{
    for (int i = 0; i < x->n; i++)
        if (x->nodes[i].kind == N_SYM && x->nodes[i].value == k) return 1;
    return 0;
}
