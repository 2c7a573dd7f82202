/* inspect.c: the engine side of the inspector's views, and the memory they may take: every
 * case the inspector is about to build (a `set`, a heatmap, each value of a sweep) is sized
 * first and refused when it would not fit, so a typo'd size cannot take the machine down. */
#include "engine/inspect.h"

#include "engine/session.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kg_inspect_current_case(struct kg_session *s, struct kg_case *k, struct kg_err *e)
{
    enum kg_dtype t = s->o.dtype >= 0 ? (enum kg_dtype)s->o.dtype : kg_contract_default_dtype(s->c);
    return kg_nominal_case(s, t, 0, KG_DIST_NORMAL, k, e);
}

/* ---- what a case costs ---------------------------------------------------------------------- */

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t kg_inspect_case_bytes(const struct kg_case *k)
{
    uint64_t b = 0;
    for (int i = 0; i < k->c->nargs; i++) {
        const struct kg_arg *a = &k->c->args[i];
        if (a->kind != KG_ARG_TENSOR) continue;
        uint64_t n = (uint64_t)k->numel[i], t = sat_mul(n, kg_dtype_size(k->adtype[i]));
        b = sat_add(b, sat_mul(t, 3)); /* a run: shared memory, the copy sent, the copy read back */
        if (kg_arg_is_input(a))        /* the memoised inputs, the caller's copy, the oracle's float64 copy */
            b = sat_add(b, sat_add(sat_mul(t, 2), sat_mul(n, 8)));
        if (kg_arg_is_output(a)) /* float64: exact, reference, alternative, memoised and copied; the heatmap's 3 */
            b = sat_add(b, sat_mul(n, 9 * 8));
    }
    return b;
}

uint64_t kg_inspect_budget(void)
{
    return kg_mem_available() / 2;
}

static const char *size_text(uint64_t b, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    snprintf(buf, n, u ? "%.3g %s" : "%.0f %s", v, unit[u]);
    return buf;
}

static bool fits_at(const struct kg_case *k, int sym, int64_t v, uint64_t budget)
{
    int64_t sv[KG_MAX_SYMS];
    memcpy(sv, k->sym, sizeof sv);
    sv[sym] = v;
    struct kg_case c;
    struct kg_err e;
    return kg_case_init(&c, k->c, sv, k->dtype, k->seed, k->dist, &e) == 0 && kg_inspect_case_bytes(&c) <= budget;
}

/* The largest value below hi of symbol sym at which k fits (the other symbols as they are), by
 * bisection (sizes grow with a symbol); -1 when not even 1 fits. */
static int64_t largest_fitting(const struct kg_case *k, int sym, int64_t hi, uint64_t budget)
{
    int64_t lo = fits_at(k, sym, 1, budget) ? 1 : fits_at(k, sym, 0, budget) ? 0 : -1;
    if (lo < 0 || hi <= lo) return -1;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (fits_at(k, sym, mid, budget))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int kg_inspect_fits(const struct kg_case *k, int sym, struct kg_err *e)
{
    uint64_t need = kg_inspect_case_bytes(k), budget = kg_inspect_budget();
    if (need <= budget) return 0;
    if (!e) return -1;
    char shape[KG_SHAPE_STR_MAX], a[32], b[32];
    kg_case_shape_str(k, shape, sizeof shape);
    kg_errf(e,
            "%s (%s) needs %s %s for one case (inputs, outputs, their copies and the oracle's float64 values), "
            "over the inspector's budget of %s (half the memory available to kgate)",
            shape, kg_dtype_name(k->dtype), need == UINT64_MAX ? "more than" : "about", size_text(need, a, sizeof a),
            size_text(budget, b, sizeof b));
    size_t len = strlen(e->msg);
    int64_t fit = sym >= 0 ? largest_fitting(k, sym, k->sym[sym], budget) : -1;
    if (fit >= 0)
        kg_appendf(e->msg, sizeof e->msg, &len, "; use a smaller value: %s <= %lld fits", k->c->sym[sym],
                   (long long)fit);
    else
        kg_appendf(e->msg, sizeof e->msg, &len, "; use smaller shapes (set SYM=VALUE)");
    return -1;
}

int kg_inspect_current_fits(struct kg_session *s, int sym, struct kg_err *e)
{
    enum kg_dtype dts[KG_MAX_DTYPES];
    int nd = kg_instance_dtypes(s, dts);
    for (int d = 0; d < nd; d++) {
        struct kg_case c;
        if (kg_nominal_case(s, dts[d], 0, KG_DIST_NORMAL, &c, e) || kg_inspect_fits(&c, sym, e)) return -1;
    }
    return 0;
}

int kg_inspect_set(struct kg_session *s, const char *sym, int64_t value, struct kg_err *e)
{
    int k = kg_contract_sym(s->c, sym);
    if (k < 0) return kg_errf(e, "%s has no shape symbol '%s'", s->c->path, sym);
    if (value < 0) return kg_errf(e, "%s must be >= 0", sym);
    bool was_pinned = s->o.pin_shape;
    if (!s->o.pin_shape) {
        memcpy(s->o.sym, s->c->nominal, sizeof s->o.sym);
        s->o.pin_shape = true;
    }
    int64_t old = s->o.sym[k];
    s->o.sym[k] = value;
    struct kg_case c;
    struct kg_err fe;
    int rc = kg_inspect_current_case(s, &c, e);
    if (!rc && kg_inspect_current_fits(s, k, &fe))
        rc = kg_errf(e, "set %s=%lld refused: %s; %s stays %lld", sym, (long long)value, fe.msg, sym, (long long)old);
    if (rc) {
        s->o.sym[k] = old;
        s->o.pin_shape = was_pinned;
    }
    return rc;
}

int kg_inspect_dtype(struct kg_session *s, enum kg_dtype t, struct kg_err *e)
{
    const struct kg_contract *c = s->c;
    bool ok = false;
    for (int i = 0; i < c->ndtypes; i++) ok |= c->dtypes[i] == t;
    if (!c->ndtypes) ok = t == kg_contract_default_dtype(c);
    if (!ok) return kg_errf(e, "%s does not instantiate %s (dtypes: line)", c->path, kg_dtype_name(t));
    int old = s->o.dtype;
    s->o.dtype = t;
    struct kg_err fe;
    if (kg_inspect_current_fits(s, -1, &fe)) {
        s->o.dtype = old;
        return kg_errf(e, "dtype %s refused: %s", kg_dtype_name(t), fe.msg);
    }
    return 0;
}

void kg_inspect_seed(struct kg_session *s, uint64_t seed)
{
    s->o.seed = seed;
}

void kg_inspect_dist(struct kg_session *s, int dist)
{
    s->o.dist = dist;
}

void kg_inspection_free(struct kg_inspection *r)
{
    for (int j = 0; j < KG_OP_MAX_IO; j++) {
        free(r->out[j].got);
        free(r->out[j].expected);
        free(r->out[j].err);
        r->out[j].got = r->out[j].expected = r->out[j].err = NULL;
    }
}

int kg_inspect_run(struct kg_session *s, const struct kg_case *k, struct kg_inspection *r, struct kg_err *e)
{
    memset(r, 0, sizeof *r);
    r->k = *k;
    struct kg_err fe;
    if (kg_inspect_fits(k, -1, &fe)) return kg_errf(e, "heatmap refused: %s", fe.msg);
    struct kg_inputs in;
    if (kg_session_inputs(s, k, &in, e)) return -1;
    struct kg_exec x;
    struct kg_exec_opts o = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5};
    kg_exec(s, k, &in, &o, &x);
    r->status = x.status;
    kg_strlcpy(r->msg, x.msg, sizeof r->msg);
    if (x.status != KG_WS_OK) {
        kg_exec_free(&x);
        kg_inputs_free(&in);
        return 0;
    }
    struct kg_expect ex;
    if (kg_session_expect(s, k, &ex, e) || kg_expect_values(s, &ex, e)) { /* the map is drawn from the values */
        kg_expect_free(&ex);
        kg_exec_free(&x);
        kg_inputs_free(&in);
        return -1;
    }
    struct kg_judgement j;
    kg_judge(k, &x, false, &ex, &j);
    r->nout = ex.nout;
    int rc = 0;
    for (int q = 0; q < ex.nout; q++) {
        struct kg_inspect_out *o2 = &r->out[q];
        const struct kg_tensor *got = &x.after[ex.arg[q]];
        kg_strlcpy(o2->name, k->c->args[ex.arg[q]].name, sizeof o2->name);
        o2->dtype = got->dtype;
        o2->rank = got->rank;
        memcpy(o2->dims, got->dims, sizeof o2->dims);
        o2->numel = got->numel;
        size_t n = (size_t)(got->numel ? got->numel : 1);
        o2->got = malloc(n * sizeof(double));
        o2->expected = malloc(n * sizeof(double));
        o2->err = malloc(n * sizeof(double));
        if (!o2->got || !o2->expected || !o2->err) {
            rc = kg_errf(e, "out of memory for the heatmap of %s", o2->name);
            break;
        }
        for (int64_t i = 0; i < got->numel; i++) o2->got[i] = kg_load(got->dtype, got->data, i);
        memcpy(o2->expected, ex.exact[q].data, (size_t)got->numel * sizeof(double));
        kg_errmap(got, &ex.exact[q], ex.scale[q], o2->err);
        o2->scale = ex.scale[q];
        o2->ref_err = ex.ref_err[q];
        o2->threshold = ex.threshold[q];
        o2->worst = j.cmp[q].worst;
        o2->nonfinite_mismatch = j.cmp[q].nonfinite_mismatch;
        double err = j.cmp[q].max_err;
        o2->pass = err == 0 || (ex.threshold[q] > 0 && err / ex.threshold[q] <= 1);
    }
    if (rc) kg_inspection_free(r);
    kg_expect_free(&ex);
    kg_exec_free(&x);
    kg_inputs_free(&in);
    return rc;
}

void kg_diffmap_free(struct kg_diffmap *d)
{
    free(d->differs);
    free(d->a);
    free(d->b);
    d->differs = NULL;
    d->a = d->b = NULL;
}

int kg_inspect_replay(struct kg_session *s, int a, int b, int output, struct kg_diffmap *d, struct kg_err *e)
{
    memset(d, 0, sizeof *d);
    if (s->nrec == 0) return kg_errf(e, "no recorded runs: run the determinism gate first (run determinism)");
    if (a < 1 || b < 1 || a > s->nrec || b > s->nrec) return kg_errf(e, "runs are numbered 1..%d", s->nrec);
    const struct kg_tensor *ta = &s->rec[a - 1].out[output], *tb = &s->rec[b - 1].out[output];
    if (output < 0 || output >= KG_OP_MAX_IO || !ta->data || !tb->data) return kg_errf(e, "no output %d", output);
    int arg = -1, seen = 0;
    for (int i = 0; i < s->c->nargs; i++)
        if (kg_arg_is_output(&s->c->args[i]) && seen++ == output) arg = i;
    kg_strlcpy(d->name, arg >= 0 ? s->c->args[arg].name : "?", sizeof d->name);
    d->rank = ta->rank;
    memcpy(d->dims, ta->dims, sizeof d->dims);
    d->numel = ta->numel;
    size_t n = (size_t)(ta->numel ? ta->numel : 1), es = kg_dtype_size(ta->dtype);
    d->differs = calloc(n, 1);
    d->a = malloc(n * sizeof(double));
    d->b = malloc(n * sizeof(double));
    if (!d->differs || !d->a || !d->b) {
        kg_diffmap_free(d);
        return kg_errf(e, "out of memory");
    }
    d->first = d->largest_at = -1;
    const uint8_t *pa = ta->data, *pb = tb->data;
    for (int64_t i = 0; i < ta->numel; i++) {
        d->a[i] = kg_load(ta->dtype, pa, i);
        d->b[i] = kg_load(tb->dtype, pb, i);
        if (!memcmp(pa + i * es, pb + i * es, es)) continue;
        d->differs[i] = 1;
        d->count++;
        if (d->first < 0) d->first = i;
        double diff = fabs(d->a[i] - d->b[i]);
        if (isnan(diff)) diff = INFINITY;
        if (d->largest_at < 0 || diff > d->largest) {
            d->largest = diff;
            d->largest_at = i;
        }
    }
    return 0;
}

/* The next value of a range after v, or false at its bound b: no step may overflow. */
static bool range_next(long long *v, char op, long long step, long long b)
{
    if (op == '*' ? *v > b / step : *v > b - step) return false;
    *v = op == '*' ? *v * step : *v + step;
    return true;
}

int kg_sweep_parse(const char *text, int64_t *values, int n, struct kg_err *e)
{
    int count = 0;
    if (n < 1) return 0;
    const char *dots = strstr(text, "..");
    if (dots) {
        char *end;
        errno = 0;
        long long a = strtoll(text, &end, 10);
        if (end != dots) return kg_errf(e, "sweep: expected A..B*F or A..B+S, got '%s'", text);
        long long b = strtoll(dots + 2, &end, 10);
        char op = *end;
        long long step = op ? strtoll(end + 1, &end, 10) : 1;
        if (errno || *end || (op && op != '*' && op != '+') || a < 1 || b < a || step < 1 || (op == '*' && step < 2))
            return kg_errf(e, "sweep: expected A..B*F (F >= 2) or A..B+S with 1 <= A <= B <= %lld, got '%s'", LLONG_MAX,
                           text);
        if (!op) op = '+';
        for (long long v = a;;) {
            values[count++] = v;
            if (count == n || !range_next(&v, op, step, b)) return count;
        }
    }
    char *dup = strdup(text), *save = NULL;
    if (!dup) return kg_errf(e, "out of memory");
    for (char *it = strtok_r(dup, ", ", &save); it && count < n; it = strtok_r(NULL, ", ", &save)) {
        char *end;
        errno = 0;
        long long v = strtoll(it, &end, 10);
        if (errno || *end || end == it || v < 0) {
            kg_errf(e, "sweep: '%s' is not a non-negative integer (at most %lld)", it, LLONG_MAX);
            free(dup);
            return -1;
        }
        values[count++] = v;
    }
    free(dup);
    if (!count) return kg_errf(e, "sweep: no values");
    return count;
}

/* The case of one sweep row: the base symbols with symbol k at value. */
static int sweep_case(struct kg_session *s, const int64_t *base, int k, int64_t value, enum kg_dtype t,
                      struct kg_case *c, struct kg_err *e)
{
    int64_t sv[KG_MAX_SYMS];
    memcpy(sv, base, sizeof sv);
    sv[k] = value;
    return kg_case_init(c, s->c, sv, t, s->o.seed, s->o.dist >= 0 ? (enum kg_dist)s->o.dist : KG_DIST_NORMAL, e);
}

/* When the face asked to stop: the row says so, and the sweep ends with it. */
static bool sweep_stopped(struct kg_session *s, struct kg_sweep_row *row)
{
    if (!kg_session_interrupted(s)) return false;
    row->status = KG_ERROR;
    kg_strlcpy(row->summary, "interrupted: this value and the ones after it were not run", sizeof row->summary);
    return true;
}

/* Before anything is allocated: every value of the sweep must fit the budget. */
static int sweep_fits(struct kg_session *s, const int64_t *base, int k, const int64_t *values, int nvalues,
                      const enum kg_dtype *dts, int nd, struct kg_err *e)
{
    int over = 0;
    struct kg_err first, ce;
    for (int i = 0; i < nvalues; i++) {
        bool too_big = false;
        for (int d = 0; d < nd && !too_big; d++) {
            struct kg_case c;
            if (sweep_case(s, base, k, values[i], dts[d], &c, &ce)) continue; /* its row says why */
            too_big = kg_inspect_fits(&c, k, over ? &ce : &first) != 0;
        }
        over += too_big;
    }
    if (!over) return 0;
    return kg_errf(e, "sweep refused, nothing was run: %d of its %d values %s too large: %s", over, nvalues,
                   over == 1 ? "is" : "are", first.msg);
}

int kg_inspect_sweep(struct kg_session *s, const char *sym, const int64_t *values, int nvalues,
                     struct kg_sweep_row *rows, int n, struct kg_err *e)
{
    int k = kg_contract_sym(s->c, sym);
    if (k < 0) return kg_errf(e, "%s has no shape symbol '%s'", s->c->path, sym);
    enum kg_dtype dts[KG_MAX_DTYPES];
    int nd = kg_instance_dtypes(s, dts), nr = 0;
    int64_t base[KG_MAX_SYMS];
    memcpy(base, s->o.pin_shape ? s->o.sym : s->c->nominal, sizeof base);
    if (sweep_fits(s, base, k, values, nvalues, dts, nd, e)) return -1;
    for (int d = 0; d < nd; d++)
        for (int i = 0; i < nvalues && nr < n; i++) {
            struct kg_sweep_row *row = &rows[nr++];
            memset(row, 0, sizeof *row);
            row->value = values[i];
            row->dtype = dts[d];
            if (sweep_stopped(s, row)) goto out;
            struct kg_case c;
            struct kg_err ce;
            if (sweep_case(s, base, k, values[i], dts[d], &c, &ce)) {
                row->status = KG_SKIP;
                kg_strlcpy(row->summary, ce.msg, sizeof row->summary);
                continue;
            }
            /* each case is used once: memoising four of them would hold four budgets' worth */
            kg_memo_free(s);
            struct kg_judgement j;
            struct kg_expect ex;
            struct kg_verdict v;
            kg_verdict_init(&v, NULL); /* rows keep status and summary, not a replay command */
            if (kg_check_case(s, &c, NULL, &j, &ex, NULL, &v)) {
                row->status = v.status;
                kg_strlcpy(row->summary, v.summary, sizeof row->summary);
                kg_verdict_clear(&v);
                if (sweep_stopped(s, row)) goto out;
                continue;
            }
            row->status = j.pass ? KG_PASS : KG_FAIL;
            row->err = j.cmp[j.worst].max_err;
            row->ref_err = ex.ref_err[j.worst];
            row->threshold = ex.threshold[j.worst];
            row->ratio = j.ratio;
            row->margin = j.margin;
            kg_describe_worst(&c, &ex, &j, row->summary, sizeof row->summary);
            kg_expect_free(&ex);
            kg_verdict_clear(&v);
        }
out:
    kg_memo_free(s);
    return nr;
}
