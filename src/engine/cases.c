/* cases.c: the cases gates start from (the pinned or nominal shape, the contract's dtype
 * instances), what a case may cost, and the command that replays one. */
#include <stdint.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/session.h"

int kg_nominal_case(struct kg_session *s, enum kg_dtype dtype, uint64_t seed_offset, enum kg_dist dist,
                    struct kg_case *k, struct kg_err *e)
{
    enum kg_dist d = s->o.dist >= 0 ? (enum kg_dist)s->o.dist : dist;
    if (kg_case_init(k, s->c, s->o.pin_shape ? s->o.sym : NULL, dtype, s->o.seed + seed_offset, d, e)) return -1;
    k->nominal = true;
    return 0;
}

int kg_nominal_inputs(struct kg_session *s, struct kg_case *k, struct kg_inputs *in, struct kg_verdict *v)
{
    struct kg_err e;
    if (kg_nominal_case(s, kg_contract_default_dtype(s->c), 0, KG_DIST_NORMAL, k, &e) ||
        kg_session_inputs(s, k, in, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return -1;
    }
    return 0;
}

int kg_instance_dtypes(struct kg_session *s, enum kg_dtype *out)
{
    if (s->o.dtype >= 0) {
        out[0] = (enum kg_dtype)s->o.dtype;
        return 1;
    }
    if (!s->c->ndtypes) {
        out[0] = kg_contract_default_dtype(s->c);
        return 1;
    }
    memcpy(out, s->c->dtypes, (size_t)s->c->ndtypes * sizeof *out);
    return s->c->ndtypes;
}

static int64_t case_budget(const struct kg_session *s)
{
    return s->o.max_elems > 0 ? s->o.max_elems : s->be->budget;
}

static bool affordable_within(const struct kg_case *k, int64_t budget)
{
    int64_t elems = 0, work = 0;
    const struct kg_contract *c = k->c;
    int axis = -1;
    unsigned flags = 0;
    struct kg_shape in0 = {0};
    int first_in = -1;
    for (int i = 0; i < c->nargs; i++)
        if (kg_arg_is_input(&c->args[i])) {
            first_in = i;
            break;
        }
    if (c->has_op && first_in >= 0) {
        in0 = k->shape[first_in];
        axis = kg_op_reduce_axis(&c->op, &in0);
        flags = c->op.def->flags;
    }
    for (int i = 0; i < c->nargs; i++) {
        if (c->args[i].kind != KG_ARG_TENSOR) continue;
        if (elems > INT64_MAX / 2 - k->numel[i]) return false;
        elems += k->numel[i];
        if (kg_arg_is_output(&c->args[i])) {
            int64_t len = axis >= 0 && !(flags & (KG_OP_ROWWISE | KG_OP_ELEMENTWISE)) ? in0.dims[axis] : 1;
            if (len && k->numel[i] > INT64_MAX / 4 / len) return false;
            work += k->numel[i] * (len ? len : 1);
        }
    }
    return elems <= budget && work <= 64 * budget;
}

bool kg_case_affordable(struct kg_session *s, const struct kg_case *k)
{
    return affordable_within(k, case_budget(s));
}

/* Below this a symbol is a window, a stride, a small count: it stays as it is. */
#define SHRINK_FLOOR 32

int kg_case_shrink(struct kg_session *s, const int64_t *sym, int keep, int64_t frac, enum kg_dtype dtype, uint64_t seed,
                   enum kg_dist dist, struct kg_case *k)
{
    const struct kg_contract *c = s->c;
    int64_t budget = case_budget(s), want = frac > 1 ? budget / frac : budget, v[KG_MAX_SYMS];
    memcpy(v, sym, sizeof v);
    struct kg_err e;
    if (kg_case_init(k, c, v, dtype, seed, dist, &e)) return -1;
    if (affordable_within(k, want)) return 0;
    bool fits = affordable_within(k, budget);
    for (;;) {
        int big = -1; /* the largest other free symbol, halved next */
        for (int i = 0; i < c->nsyms; i++)
            if (i != keep && !c->fixed[i] && v[i] >= 2 * SHRINK_FLOOR && (big < 0 || v[i] > v[big])) big = i;
        if (big < 0) break;
        v[big] /= 2;
        struct kg_case t;
        if (kg_case_init(&t, c, v, dtype, seed, dist, &e)) break; /* the contract's dims reject it */
        *k = t;
        fits = affordable_within(k, budget);
        if (affordable_within(k, want)) return 0;
    }
    return fits ? 0 : -1;
}

void kg_lean_words(const struct kg_session *s, const struct kg_case *k, char *buf, size_t n)
{
    const int64_t *nominal = s->o.pin_shape ? s->o.sym : s->c->nominal;
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < s->c->nsyms; i++)
        if (k->sym[i] != nominal[i])
            kg_appendf(buf, n, &len, "%s%s=%lld (nominal %lld)", len ? ", " : " at ", s->c->sym[i],
                       (long long)k->sym[i], (long long)nominal[i]);
}

void kg_replay(struct kg_session *s, const struct kg_gate *g, const struct kg_case *k, char *buf, size_t n)
{
    char shape[KG_SHAPE_STR_MAX];
    kg_case_shape_str(k, shape, sizeof shape);
    size_t len = 0;
    buf[0] = 0;
    if (s->c->problem_path)
        kg_appendf(buf, n, &len, "kgate check --ref %s %s --gates %s --seed %llu", s->c->problem_path, s->c->path,
                   g ? g->id : "all", (unsigned long long)k->seed);
    else
        kg_appendf(buf, n, &len, "kgate check %s --gates %s --seed %llu", s->c->path, g ? g->id : "all",
                   (unsigned long long)k->seed);
    if (*shape) kg_appendf(buf, n, &len, " --shape %s", shape);
    if (s->c->ndtypes) kg_appendf(buf, n, &len, " --dtype %s", kg_dtype_name(k->dtype));
}
