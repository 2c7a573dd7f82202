/* case.c: evaluating a contract at concrete symbol values, and naming the result. */
#include "case.h"

#include <stdio.h>
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

int kg_case_init(struct kg_case *k, const struct kg_contract *c, const int64_t *sym, enum kg_dtype dtype,
                 uint64_t seed, enum kg_dist dist, struct kg_err *e)
{
    memset(k, 0, sizeof *k);
    k->c = c;
    memcpy(k->sym, sym ? sym : c->nominal, sizeof k->sym);
    k->dtype = dtype;
    k->seed = seed;
    k->dist = dist;
    char shape[256];
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

void kg_case_shape_str(const struct kg_case *k, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < k->c->nsyms; i++)
        kg_appendf(buf, n, &len, "%s%s=%lld", i ? "," : "", k->c->sym[i], (long long)k->sym[i]);
}

void kg_case_id(const struct kg_case *k, char *buf, size_t n)
{
    char shape[512];
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
