/* case.c: evaluating a contract at concrete symbol values, and naming the result. */
#include "contract/case.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dist_names[KG_DIST_COUNT] = {
    "normal", "uniform", "unit", "binary", "large-mean", "mixed", "special",
};

const char *kg_dist_name(enum kg_dist d)
{
    return d < KG_DIST_COUNT ? dist_names[d] : "?";
}

int kg_dist_parse(const char *s, enum kg_dist *out)
{
    for (int i = 0; i < KG_DIST_COUNT; i++)
        if (!strcmp(s, dist_names[i])) {
            *out = (enum kg_dist)i;
            return 0;
        }
    return -1;
}

int kg_case_init(struct kg_case *k, const struct kg_contract *c, const int64_t *sym, enum kg_dtype dtype, uint64_t seed,
                 enum kg_dist dist, struct kg_err *e)
{
    memset(k, 0, sizeof *k);
    k->c = c;
    memcpy(k->sym, sym ? sym : c->nominal, sizeof k->sym);
    k->dtype = dtype;
    k->seed = seed;
    k->dist = dist;
    char shape[KG_SHAPE_STR_MAX];
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        if (a->kind == KG_ARG_TENSOR) {
            k->adtype[i] = kg_arg_dtype(a, dtype);
            k->shape[i].rank = a->rank;
            int64_t n = 1;
            for (int d = 0; d < a->rank; d++) {
                struct kg_err ee;
                int64_t v;
                if (kg_expr_eval(a->dims[d], k->sym, &v, &ee)) {
                    kg_case_shape_str(k, shape, sizeof shape);
                    return kg_errf(e, "%s: at %s: %s dim %d: %s", c->path, shape, a->name, d, ee.msg);
                }
                if (v < 0) {
                    kg_case_shape_str(k, shape, sizeof shape);
                    return kg_errf(e, "%s: at %s: %s dim %d (%s) is negative", c->path, shape, a->name, d,
                                   kg_expr_text(a->dims[d]));
                }
                k->shape[i].dims[d] = v;
                if (v && n > INT64_MAX / v) return kg_errf(e, "%s: %s: element count overflows", c->path, a->name);
                n *= v;
            }
            k->numel[i] = n;
        } else if (a->sym >= 0) {
            int64_t v = k->sym[a->sym];
            if (a->kind == KG_ARG_INT && (v > INT32_MAX || v < INT32_MIN)) {
                kg_case_shape_str(k, shape, sizeof shape);
                return kg_errf(e, "%s: at %s: %s=%lld does not fit the declared int", c->path, shape, a->name,
                               (long long)v);
            }
            k->scalar[i] = (double)v;
        } else {
            k->scalar[i] = a->value;
        }
    }
    if (c->has_launch) {
        for (int d = 0; d < 3; d++) {
            k->grid[d] = k->block[d] = 1;
            struct kg_err ee;
            if (c->grid[d] && kg_expr_eval(c->grid[d], k->sym, &k->grid[d], &ee))
                return kg_errf(e, "%s:%d: launch grid: %s", c->path, c->line_launch, ee.msg);
            if (c->block[d] && kg_expr_eval(c->block[d], k->sym, &k->block[d], &ee))
                return kg_errf(e, "%s:%d: launch block: %s", c->path, c->line_launch, ee.msg);
        }
        struct kg_err ee;
        k->smem = 0;
        if (c->smem && kg_expr_eval(c->smem, k->sym, &k->smem, &ee))
            return kg_errf(e, "%s:%d: launch smem: %s", c->path, c->line_launch, ee.msg);
    }
    return 0;
}

int64_t kg_case_max_numel(const struct kg_case *k)
{
    int64_t m = 0;
    for (int i = 0; i < k->c->nargs; i++)
        if (k->c->args[i].kind == KG_ARG_TENSOR && k->numel[i] > m) m = k->numel[i];
    return m;
}

void kg_case_shape_str(const struct kg_case *k, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < k->c->nsyms; i++)
        kg_appendf(buf, n, &len, "%s%s=%lld", i ? "," : "", k->c->sym[i], (long long)k->sym[i]);
}

void kg_case_id(const struct kg_case *k, char *buf, size_t n)
{
    char shape[KG_SHAPE_STR_MAX];
    kg_case_shape_str(k, shape, sizeof shape);
    snprintf(buf, n, "%s%sdtype=%s seed=%llu dist=%s", shape, *shape ? " " : "", kg_dtype_name(k->dtype),
             (unsigned long long)k->seed, kg_dist_name(k->dist));
}

int64_t kg_case_bytes(const struct kg_case *k)
{
    int64_t b = 0;
    for (int i = 0; i < k->c->nargs; i++)
        if (k->c->args[i].kind == KG_ARG_TENSOR) {
            int64_t s = k->numel[i] * (int64_t)kg_dtype_size(k->adtype[i]);
            if (b > INT64_MAX - s) return INT64_MAX;
            b += s;
        }
    return b;
}

/* ---- the inverse of kg_case_id --------------------------------------------------------------- */

static int parse_shape_tokens(const struct kg_contract *c, char *tok, int64_t *sym, struct kg_err *e)
{
    char *save = NULL;
    for (char *it = strtok_r(tok, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '='), *end;
        if (!eq) return kg_errf(e, "case id: expected SYM=VALUE, got '%s'", it);
        *eq = 0;
        int k = kg_contract_sym(c, it);
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (k < 0) return kg_errf(e, "case id: %s has no shape symbol '%s'", c->path, it);
        if (errno || *end || end == eq + 1 || v < 0) return kg_errf(e, "case id: %s=%s is not a size", it, eq + 1);
        sym[k] = v;
    }
    return 0;
}

int kg_case_from_id(const struct kg_contract *c, const char *id, struct kg_case *k, struct kg_err *e)
{
    int64_t sym[KG_MAX_SYMS];
    memcpy(sym, c->nominal, sizeof sym);
    enum kg_dtype dtype = kg_contract_default_dtype(c);
    enum kg_dist dist = KG_DIST_NORMAL;
    unsigned long long seed = 1;
    char buf[KG_CASE_ID_MAX], *save = NULL;
    kg_strlcpy(buf, id, sizeof buf);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *end;
        if (!strncmp(tok, "dtype=", 6)) {
            if (kg_dtype_parse(tok + 6, strlen(tok + 6), &dtype))
                return kg_errf(e, "case id: unknown dtype '%s'", tok + 6);
        } else if (!strncmp(tok, "seed=", 5)) {
            errno = 0;
            seed = strtoull(tok + 5, &end, 10);
            if (errno || *end) return kg_errf(e, "case id: bad seed '%s'", tok + 5);
        } else if (!strncmp(tok, "dist=", 5)) {
            if (kg_dist_parse(tok + 5, &dist)) return kg_errf(e, "case id: unknown distribution '%s'", tok + 5);
        } else if (parse_shape_tokens(c, tok, sym, e)) {
            return -1;
        }
    }
    return kg_case_init(k, c, sym, dtype, (uint64_t)seed, dist, e);
}

struct kg_tensor kg_case_tensor(const struct kg_case *k, int i, enum kg_dtype dtype, void *data)
{
    struct kg_tensor t = {.dtype = dtype, .rank = k->shape[i].rank, .numel = k->numel[i], .data = data};
    memcpy(t.dims, k->shape[i].dims, sizeof t.dims);
    return t;
}

bool kg_case_outputs_empty(const struct kg_case *k)
{
    bool any = false;
    for (int i = 0; i < k->c->nargs; i++) {
        if (!kg_arg_is_output(&k->c->args[i])) continue;
        any = true;
        if (k->numel[i] > 0) return false;
    }
    return any;
}
