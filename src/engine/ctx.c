/* ctx.c: the engine calls gates use: run a case in the worker (kg_exec), compute what it
 * should have produced (kg_expect_compute), and compare (kg_judge). The judge lays out
 * every tensor in shared memory as [guard | data | guard] so the bounds gate sees any byte
 * written outside, and keeps a copy of what it sent so the aliasing gate sees inputs that
 * changed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/oracle_worker.h"
#include "engine/session.h"
#include "engine/torch.h"

#define HOST_GUARD 4096u
#define CUDA_GUARD 65536u
#define ALIGN 4096u

static uint64_t align_up(uint64_t v)
{
    return (v + ALIGN - 1) / ALIGN * ALIGN;
}

static void prefill(const struct kg_case *k, int i, enum kg_fill f, void *data, uint64_t bytes)
{
    switch (f) {
    case KG_FILL_SENTINEL_A: memset(data, 0xFF, bytes); break;
    case KG_FILL_SENTINEL_B: memset(data, 0x7F, bytes); break;
    case KG_FILL_ZERO: memset(data, 0, bytes); break;
    case KG_FILL_GARBAGE: {
        struct kg_case g = *k;
        g.dist = KG_DIST_NORMAL;
        g.seed = k->seed ^ 0x9e3779b97f4a7c15ull;
        struct kg_contract tmp = *k->c; /* draw as if it were an input, ignoring `inputs:` */
        tmp.args[i].dist = KG_AD_DEFAULT;
        g.c = &tmp;
        kg_inputs_fill(&g, i, data, NULL);
        break;
    }
    }
}

void kg_exec_free(struct kg_exec *x)
{
    for (int i = 0; i < KG_MAX_ARGS; i++) {
        kg_tensor_free(&x->before[i]);
        kg_tensor_free(&x->after[i]);
        kg_tensor_free(&x->after2[i]);
    }
}

static int copy_tensor(struct kg_tensor *dst, const struct kg_case *k, int i, const void *src)
{
    if (kg_tensor_alloc(dst, k->adtype[i], k->shape[i].rank, k->shape[i].dims)) return -1;
    memcpy(dst->data, src, kg_tensor_bytes(dst));
    return 0;
}

static void check_guards(const uint8_t *region, uint64_t guard, uint64_t bytes, uint8_t gb, int64_t *bad,
                         int64_t *first, int64_t *last)
{
    *bad = 0;
    *first = *last = 0;
    for (uint64_t j = 0; j < guard; j++)
        if (region[j] != gb) {
            int64_t off = (int64_t)j - (int64_t)guard;
            if (!*bad) *first = off;
            *last = off;
            (*bad)++;
        }
    const uint8_t *after = region + guard + bytes;
    for (uint64_t j = 0; j < guard; j++)
        if (after[j] != gb) {
            int64_t off = (int64_t)(bytes + j);
            if (!*bad) *first = off;
            *last = off;
            (*bad)++;
        }
}

int kg_exec(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, const struct kg_exec_opts *o,
            struct kg_exec *x)
{
    memset(x, 0, sizeof *x);
    const struct kg_contract *c = k->c;
    bool pair = (o->flags & KG_RUN_PAIR) != 0;
    uint64_t guard = s->runner == KG_RUNNER_CUDA ? CUDA_GUARD : HOST_GUARD;
    static struct kg_req rq;
    memset(&rq, 0, sizeof rq);
    rq.magic = KG_PROTO_MAGIC;
    rq.cmd = KG_CMD_RUN;
    struct kg_req_run *r = &rq.u.run;
    r->flags = o->flags;
    r->nargs = c->nargs;
    r->fill = o->fill;
    r->fill_byte = o->fill == KG_FILL_SENTINEL_A ? 0xFF : o->fill == KG_FILL_SENTINEL_B ? 0x7F : 0;
    r->fill_seed = k->seed ^ 0x9e3779b97f4a7c15ull;
    uint64_t off = 0;
    for (int set = 0; set <= (int)pair; set++)
        for (int i = 0; i < c->nargs; i++) {
            struct kg_req_arg *a = &r->args[i];
            const struct kg_arg *ca = &c->args[i];
            a->kind = ca->kind;
            a->alias = -1;
            a->io = ca->io;
            if (ca->kind == KG_ARG_TENSOR) {
                a->dtype = k->adtype[i];
                a->rank = k->shape[i].rank;
                memcpy(a->dims, k->shape[i].dims, sizeof a->dims);
            }
            if (ca->kind != KG_ARG_TENSOR) {
                a->ival = (int64_t)k->scalar[i];
                a->fval = k->scalar[i];
                continue;
            }
            if (c->alias_of[i] >= 0) {
                a->alias = c->alias_of[i];
                continue;
            }
            a->bytes = (uint64_t)k->numel[i] * kg_dtype_size(k->adtype[i]);
            a->guard = guard;
            if (set == 0)
                a->off = off;
            else
                a->off2 = off;
            off = align_up(off + a->bytes + 2 * guard);
        }
    r->shm_size = off;
    r->nsym = c->nsyms;
    for (int i = 0; i < c->nsyms; i++) {
        kg_strlcpy(r->sym_names[i], c->sym[i], KG_NAME_MAX);
        r->sym_values[i] = k->sym[i];
    }
    if (c->has_launch) {
        memcpy(r->grid, k->grid, sizeof r->grid);
        memcpy(r->block, k->block, sizeof r->block);
        r->smem = k->smem;
    }
    struct kg_err e;
    if (kg_session_shm(s, off ? off : 1, &e)) {
        x->status = KG_WS_UNAVAILABLE;
        snprintf(x->msg, sizeof x->msg, "%s", e.msg);
        return x->status;
    }
    for (int set = 0; set <= (int)pair; set++) {
        const struct kg_inputs *src = set ? o->in2 : in;
        for (int i = 0; i < c->nargs; i++) {
            const struct kg_req_arg *a = &r->args[i];
            if (a->kind != KG_ARG_TENSOR || a->alias >= 0) continue;
            uint8_t *region = s->shm + (set ? a->off2 : a->off);
            memset(region, o->guard_byte, a->guard);
            memset(region + a->guard + a->bytes, o->guard_byte, a->guard);
            if (kg_arg_is_input(&c->args[i]))
                memcpy(region + a->guard, src->t[i].data, a->bytes);
            else
                prefill(k, i, o->fill, region + a->guard, a->bytes);
            if (set == 0 && copy_tensor(&x->before[i], k, i, region + a->guard)) goto oom;
        }
    }
    struct kg_reply rp;
    struct kg_client *cl = kg_session_client(s, k->dtype, &rp);
    if (cl && o->fresh_worker) {
        kg_session_restart(s, cl);
        cl = kg_session_client(s, k->dtype, &rp);
    }
    if (!cl) {
        x->status = rp.status;
        snprintf(x->msg, sizeof x->msg, "%s", rp.msg);
        return x->status;
    }
    double t0 = kg_now();
    kg_session_call(s, cl, &rq, &rp);
    s->t_run += kg_now() - t0;
    s->nruns++;
    x->status = rp.status;
    x->code = rp.code;
    x->seconds = rp.seconds;
    snprintf(x->msg, sizeof x->msg, "%s", rp.msg);
    s->last_run = rp;
    s->has_last_run = true;
    if (rp.status != KG_WS_OK && rp.status != KG_WS_REFUSED) return x->status;
    for (int set = 0; set <= (int)pair; set++)
        for (int i = 0; i < c->nargs; i++) {
            const struct kg_req_arg *a = &r->args[i];
            if (a->kind != KG_ARG_TENSOR) continue;
            int src = a->alias >= 0 ? a->alias : i;
            const struct kg_req_arg *sa = &r->args[src];
            uint8_t *region = s->shm + (set ? sa->off2 : sa->off);
            if (copy_tensor(set ? &x->after2[i] : &x->after[i], k, i, region + sa->guard)) goto oom;
            if (set == 0 && a->alias < 0)
                check_guards(region, sa->guard, sa->bytes, o->guard_byte, &x->guard_bad[i], &x->guard_first[i],
                             &x->guard_last[i]);
        }
    return x->status;
oom:
    kg_exec_free(x);
    x->status = KG_WS_UNAVAILABLE;
    snprintf(x->msg, sizeof x->msg, "out of memory copying tensors");
    return x->status;
}

void kg_expect_free(struct kg_expect *x)
{
    for (int j = 0; j < KG_OP_MAX_IO; j++) {
        kg_tensor_free(&x->exact[j]);
        kg_tensor_free(&x->ref[j]);
        kg_tensor_free(&x->alt[j]);
    }
}

int kg_expect_compute(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                      struct kg_err *e)
{
    memset(x, 0, sizeof *x);
    const struct kg_contract *c = k->c;
    double t0 = kg_now();
    struct kg_tensor in64[KG_OP_MAX_IO];
    int nin = 0, rc = -1;
    if (s->runner != KG_RUNNER_TORCH && kg_inputs_to_f64(k, in, in64, &nin, e)) return -1;
    for (int i = 0; i < c->nargs; i++) {
        if (!kg_arg_is_output(&c->args[i])) continue;
        int j = x->nout++;
        x->arg[j] = i;
        if (kg_tensor_alloc(&x->exact[j], KG_F64, k->shape[i].rank, k->shape[i].dims) ||
            kg_tensor_alloc(&x->ref[j], KG_F64, k->shape[i].rank, k->shape[i].dims)) {
            kg_errf(e, "out of memory for the oracle's %s", c->args[i].name);
            goto out;
        }
    }
    const struct kg_tensor *ins[KG_OP_MAX_IO];
    struct kg_tensor *ex[KG_OP_MAX_IO], *rf[KG_OP_MAX_IO];
    for (int j = 0; j < nin; j++) ins[j] = &in64[j];
    for (int j = 0; j < x->nout; j++) {
        ex[j] = &x->exact[j];
        rf[j] = &x->ref[j];
    }
    enum kg_arith work = k->dtype == KG_F64 ? KG_W64 : KG_W32;
    if (s->runner == KG_RUNNER_TORCH) {
        if (kg_torch_oracle(s, k, in, ex, x->nout, 0, NULL, e)) goto out;
        /* PyTorch's own reductions are pairwise or blocked: the reference with sequential fp32
         * accumulation too, and the worse of the two legitimate evaluations per element. When the
         * sequential mode changed no op (no reduction in the model), it is the plain fp32
         * reference already, and that call is saved. */
        struct kg_tensor seq[KG_OP_MAX_IO], *sq[KG_OP_MAX_IO];
        memset(seq, 0, sizeof seq);
        int ok = 1, unchanged = 0;
        for (int j = 0; j < x->nout && ok; j++) {
            ok = !kg_tensor_alloc(&seq[j], KG_F64, k->shape[x->arg[j]].rank, k->shape[x->arg[j]].dims);
            sq[j] = &seq[j];
        }
        bool have_seq = ok && !kg_torch_oracle(s, k, in, sq, x->nout, 4, &unchanged, e);
        if (have_seq && unchanged) {
            for (int j = 0; j < x->nout; j++) memcpy(x->ref[j].data, seq[j].data, (size_t)x->ref[j].numel * 8);
        } else if (kg_torch_oracle(s, k, in, rf, x->nout, 1, NULL, e)) {
            for (int j = 0; j < KG_OP_MAX_IO; j++) kg_tensor_free(&seq[j]);
            goto out;
        } else if (have_seq) {
            for (int j = 0; j < x->nout; j++) {
                const double *xe = x->exact[j].data, *b = seq[j].data;
                double *a = x->ref[j].data;
                for (int64_t i = 0; i < x->ref[j].numel; i++)
                    if (fabs(b[i] - xe[i]) > fabs(a[i] - xe[i])) a[i] = b[i];
            }
        }
        for (int j = 0; j < KG_OP_MAX_IO; j++) kg_tensor_free(&seq[j]);
        if (!ok) {
            kg_errf(e, "out of memory for the sequential reference");
            goto out;
        }
    } else if (c->has_op) {
        struct kg_err oe;
        if (kg_op_eval(&c->op, KG_EXACT, ins, ex, &oe) || kg_op_eval(&c->op, work, ins, rf, &oe)) {
            kg_errf(e, "%s:%d: oracle %s: %s", c->path, c->line_op, c->op_text, oe.msg);
            goto out;
        }
        x->int_out = (c->op.def->flags & KG_OP_INT_OUT) != 0;
        if (c->op.def->flags & KG_OP_HAS_ALT) {
            struct kg_tensor *al[KG_OP_MAX_IO];
            for (int j = 0; j < x->nout; j++) {
                if (kg_tensor_alloc(&x->alt[j], KG_F64, k->shape[x->arg[j]].rank, k->shape[x->arg[j]].dims)) {
                    kg_errf(e, "out of memory for the oracle's alternative");
                    goto out;
                }
                al[j] = &x->alt[j];
            }
            if (kg_op_eval(&c->op, KG_EXACT_ALT, ins, al, &oe)) {
                kg_errf(e, "%s:%d: oracle %s (alternative algorithm): %s", c->path, c->line_op, c->op_text, oe.msg);
                goto out;
            }
        }
    } else {
        if (kg_custom_oracle(s, k, ins, nin, ex, x->nout, 0, e) ||
            kg_custom_oracle(s, k, ins, nin, rf, x->nout, work == KG_W64 ? 2 : 1, e))
            goto out;
    }
    for (int j = 0; j < x->nout; j++) {
        enum kg_dtype t = k->adtype[x->arg[j]];
        double *r = x->ref[j].data;
        for (int64_t i = 0; i < x->ref[j].numel; i++) r[i] = kg_round(t, r[i]);
        x->scale[j] = kg_scale_of(&x->exact[j]);
        struct kg_cmp cmp;
        kg_compare(&x->ref[j], &x->exact[j], x->scale[j], &cmp);
        x->ref_err[j] = cmp.max_err;
        x->floor[j] = !kg_dtype_is_float(t) || x->int_out ? 0 : kg_floor(t);
        x->threshold[j] = x->floor[j] == 0 ? 0 : c->tol_k * (isfinite(cmp.max_err) ? cmp.max_err : 0) + x->floor[j];
    }
    rc = 0;
out:
    for (int j = 0; j < nin; j++) kg_tensor_free(&in64[j]);
    if (rc) kg_expect_free(x);
    s->t_oracle += kg_now() - t0;
    return rc;
}

void kg_judge(const struct kg_case *k, const struct kg_exec *x, bool second, const struct kg_expect *ex,
              struct kg_judgement *j)
{
    memset(j, 0, sizeof *j);
    j->pass = true;
    j->worst = 0;
    double worst = -1;
    for (int o = 0; o < ex->nout; o++) {
        const struct kg_tensor *got = second ? &x->after2[ex->arg[o]] : &x->after[ex->arg[o]];
        kg_compare(got, &ex->exact[o], ex->scale[o], &j->cmp[o]);
        double err = j->cmp[o].max_err, thr = ex->threshold[o];
        double m = err == 0 ? 0 : thr > 0 ? err / thr : INFINITY;
        if (isnan(m)) m = INFINITY;
        if (!(m <= 1)) j->pass = false;
        if (m > worst) {
            worst = m;
            j->worst = o;
        }
    }
    j->margin = worst < 0 ? 0 : worst;
    double err = j->cmp[j->worst].max_err, ref = ex->ref_err[j->worst];
    j->ratio = err == 0 ? 0 : ref > 0 ? err / ref : INFINITY;
    (void)k;
}

void kg_judgement_evidence(struct kg_session *s, const struct kg_case *k, const struct kg_expect *ex,
                           const struct kg_judgement *j, struct kg_verdict *v)
{
    const struct kg_cmp *c = &j->cmp[j->worst];
    int arg = ex->arg[j->worst];
    struct kg_evidence *ev = &v->ev;
    memset(ev, 0, sizeof *ev);
    ev->valid = c->worst >= 0;
    kg_strlcpy(ev->output, k->c->args[arg].name, sizeof ev->output);
    struct kg_tensor shape = {.rank = k->shape[arg].rank, .numel = k->numel[arg]};
    memcpy(shape.dims, k->shape[arg].dims, sizeof shape.dims);
    if (c->worst >= 0) kg_tensor_index_str(&shape, c->worst, ev->index, sizeof ev->index);
    ev->flat = c->worst;
    ev->got = c->got;
    ev->expected = c->exp;
    ev->err = c->max_err;
    ev->ref_err = ex->ref_err[j->worst];
    ev->threshold = ex->threshold[j->worst];
    kg_case_id(k, ev->case_id, sizeof ev->case_id);
    v->ratio = j->ratio;
    kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
}

int kg_nominal_case(struct kg_session *s, enum kg_dtype dtype, uint64_t seed_offset, enum kg_dist dist,
                    struct kg_case *k, struct kg_err *e)
{
    enum kg_dist d = s->o.dist >= 0 ? (enum kg_dist)s->o.dist : dist;
    return kg_case_init(k, s->c, s->o.pin_shape ? s->o.sym : NULL, dtype, s->o.seed + seed_offset, d, e);
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

int kg_prepare_cases(struct kg_session *s, int n, struct kg_case *k, struct kg_inputs *in, struct kg_expect *ex,
                     struct kg_err *e)
{
    enum kg_dtype dt = kg_contract_default_dtype(s->c);
    for (int i = 0; i < n; i++) {
        if (kg_nominal_case(s, dt, (uint64_t)i, KG_DIST_NORMAL, &k[i], e) || kg_session_inputs(s, &k[i], &in[i], e))
            return i;
        if (kg_session_expect(s, &k[i], &ex[i], e)) {
            kg_inputs_free(&in[i]);
            return i;
        }
    }
    return n;
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

void kg_replay(struct kg_session *s, const struct kg_gate *g, const struct kg_case *k, char *buf, size_t n)
{
    char shape[512];
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

void kg_verdict_from_exec(struct kg_verdict *v, const struct kg_case *k, const struct kg_exec *x)
{
    char id[384];
    kg_case_id(k, id, sizeof id);
    v->wstatus = x->status;
    if (x->status == KG_WS_REFUSED) {
        kg_verdict_set(v, KG_REFUSED, "the kernel refused %s (returned %d)", id, x->code);
    } else if (x->status == KG_WS_MISMATCH) {
        kg_verdict_set(v, KG_FAIL, "outputs differ from the reference's in shape, dtype or device at %s", id);
        kg_verdict_detail(v, "%s", x->msg);
    } else if (x->status == KG_WS_LAUNCH) {
        /* the contract claims this case; a launch that cannot happen is the kernel's failure */
        kg_verdict_set(v, KG_FAIL, "the kernel cannot launch at %s", id);
        kg_verdict_detail(v, "%s", x->msg);
    } else {
        kg_verdict_set(v, KG_ERROR, "%s at %s", kg_wstatus_name((enum kg_wstatus)x->status), id);
        kg_verdict_detail(v, "%s", x->msg);
    }
}

int kg_check_case(struct kg_session *s, const struct kg_case *k, const struct kg_exec_opts *o, struct kg_judgement *j,
                  struct kg_expect *ex_out, struct kg_exec *x_out, struct kg_verdict *v)
{
    struct kg_inputs in;
    struct kg_err e;
    if (kg_session_inputs(s, k, &in, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return -1;
    }
    struct kg_exec x;
    struct kg_exec_opts def = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5};
    kg_exec(s, k, &in, o ? o : &def, &x);
    if (x.status != KG_WS_OK) {
        kg_verdict_from_exec(v, k, &x);
        kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
        kg_exec_free(&x);
        kg_inputs_free(&in);
        return -1;
    }
    struct kg_expect ex;
    if (kg_session_expect(s, k, &ex, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        kg_exec_free(&x);
        kg_inputs_free(&in);
        return -1;
    }
    kg_judge(k, &x, false, &ex, j);
    kg_inputs_free(&in);
    if (ex_out)
        *ex_out = ex;
    else
        kg_expect_free(&ex);
    if (x_out)
        *x_out = x;
    else
        kg_exec_free(&x);
    return 0;
}

bool kg_case_affordable(struct kg_session *s, const struct kg_case *k)
{
    int64_t elems = 0, work = 0;
    const struct kg_contract *c = k->c;
    int64_t budget = s->o.max_elems > 0 ? s->o.max_elems : s->runner == KG_RUNNER_CUDA ? (1 << 26) : (1 << 22);
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

/* ---- memoised inputs and oracle values ------------------------------------------------------ */

static int copy_tensor_full(struct kg_tensor *dst, const struct kg_tensor *src)
{
    memset(dst, 0, sizeof *dst);
    if (!src->data) return 0;
    if (kg_tensor_alloc(dst, src->dtype, src->rank, src->dims)) return -1;
    memcpy(dst->data, src->data, kg_tensor_bytes(src));
    return 0;
}

static struct kg_case_memo *memo_slot(struct kg_session *s, const struct kg_case *k)
{
    char id[512];
    kg_case_id(k, id, sizeof id);
    struct kg_case_memo *victim = &s->memo[0];
    for (int i = 0; i < KG_CASE_CACHE; i++) {
        struct kg_case_memo *m = &s->memo[i];
        if ((m->has_in || m->has_ex) && !strcmp(m->id, id)) {
            m->used = ++s->memo_clock;
            return m;
        }
        if (m->used < victim->used) victim = m;
    }
    if (victim->has_in) kg_inputs_free(&victim->in);
    if (victim->has_ex) kg_expect_free(&victim->ex);
    memset(victim, 0, sizeof *victim);
    kg_strlcpy(victim->id, id, sizeof victim->id);
    victim->used = ++s->memo_clock;
    return victim;
}

int kg_session_inputs(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_err *e)
{
    struct kg_case_memo *m = memo_slot(s, k);
    if (!m->has_in) {
        double t0 = kg_now();
        if (s->runner == KG_RUNNER_TORCH ? kg_torch_inputs(s, k, &m->in, e) : kg_inputs_generate(k, &m->in, e))
            return -1;
        m->has_in = true;
        s->t_inputs += kg_now() - t0;
    }
    memset(in, 0, sizeof *in);
    in->nspecial = m->in.nspecial;
    memcpy(in->special, m->in.special, sizeof in->special);
    for (int i = 0; i < KG_MAX_ARGS; i++)
        if (copy_tensor_full(&in->t[i], &m->in.t[i])) {
            kg_inputs_free(in);
            return kg_errf(e, "out of memory copying inputs");
        }
    return 0;
}

int kg_session_expect(struct kg_session *s, const struct kg_case *k, struct kg_expect *x, struct kg_err *e)
{
    struct kg_inputs in;
    if (kg_session_inputs(s, k, &in, e)) return -1;
    struct kg_case_memo *m = memo_slot(s, k);
    int rc = 0;
    if (!m->has_ex) {
        rc = kg_expect_compute(s, k, &in, &m->ex, e);
        m->has_ex = rc == 0;
    }
    kg_inputs_free(&in);
    if (rc) return -1;
    *x = m->ex;
    for (int j = 0; j < KG_OP_MAX_IO; j++)
        if (copy_tensor_full(&x->exact[j], &m->ex.exact[j]) || copy_tensor_full(&x->ref[j], &m->ex.ref[j]) ||
            copy_tensor_full(&x->alt[j], &m->ex.alt[j])) {
            for (int q = 0; q <= j; q++) {
                kg_tensor_free(&x->exact[q]);
                kg_tensor_free(&x->ref[q]);
                kg_tensor_free(&x->alt[q]);
            }
            return kg_errf(e, "out of memory copying oracle values");
        }
    return 0;
}
