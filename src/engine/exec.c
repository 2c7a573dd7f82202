/* exec.c: one run of the kernel in its worker (kg_exec). The judge lays out every tensor in a
 * shared memory segment of the run's own as [guard | data | guard] so the bounds gate sees any
 * byte written outside; the run's values are read in that segment, and what it sent is kept
 * where it differs from them, so the aliasing gate sees inputs that changed. */
#include <stdio.h>
#include <string.h>
#include <sys/file.h>

#include "base/cache.h"
#include "base/parallel.h"
#include "engine/backend.h"
#include "engine/session.h"

#define ALIGN 4096u

static uint64_t align_up(uint64_t v)
{
    return (v + ALIGN - 1) / ALIGN * ALIGN;
}

/* Garbage prefills larger than this are drawn again for every run, not kept (memory). */
#define GARBAGE_KEPT_MAX ((uint64_t)1 << 30)

static void prefill(struct kg_session *s, const struct kg_case *k, int i, enum kg_fill f, void *data, uint64_t bytes)
{
    switch (f) {
    case KG_FILL_SENTINEL_A: memset(data, 0xFF, bytes); break;
    case KG_FILL_SENTINEL_B: memset(data, 0x7F, bytes); break;
    case KG_FILL_ZERO: memset(data, 0, bytes); break;
    case KG_FILL_GARBAGE: {
        struct kg_case g = *k;
        g.dist = KG_DIST_NORMAL;
        g.seed = k->seed ^ 0x9e3779b97f4a7c15ull;
        struct kg_garbage *kept = &s->garbage[i];
        if (kept->t.data && kept->seed == g.seed && kept->t.dtype == k->adtype[i] &&
            kg_tensor_bytes(&kept->t) == bytes) {
            memcpy(data, kept->t.data, bytes);
            break;
        }
        struct kg_contract tmp = *k->c; /* draw as if it were an input, ignoring `inputs:` */
        tmp.args[i].dist = KG_AD_DEFAULT;
        g.c = &tmp;
        kg_inputs_fill(&g, i, data, NULL);
        kg_tensor_free(&kept->t);
        if (bytes <= GARBAGE_KEPT_MAX &&
            kg_tensor_copy_from(&kept->t, k->adtype[i], k->shape[i].rank, k->shape[i].dims, data) == 0)
            kept->seed = g.seed;
        break;
    }
    }
}

static int copy_tensor(struct kg_tensor *dst, const struct kg_case *k, int i, const void *src)
{
    return kg_tensor_copy_from(dst, k->adtype[i], k->shape[i].rank, k->shape[i].dims, src);
}

/* Counts the changed guard bytes of tensor i of x, and keeps the first few (offset, value). */
static void check_guards(const uint8_t *region, uint64_t guard, uint64_t bytes, uint8_t gb, struct kg_exec *x, int i)
{
    int64_t *bad = &x->guard_bad[i];
    *bad = 0;
    x->guard_first[i] = x->guard_last[i] = 0;
    for (int side = 0; side < 2; side++) {
        const uint8_t *p = side ? region + guard + bytes : region;
        for (uint64_t j = 0; j < guard; j++) {
            if (p[j] == gb) continue;
            int64_t off = side ? (int64_t)(bytes + j) : (int64_t)j - (int64_t)guard;
            if (!*bad) x->guard_first[i] = off;
            x->guard_last[i] = off;
            if (*bad < KG_GUARD_SHOWN) {
                x->guard_off[i][*bad] = off;
                x->guard_val[i][*bad] = p[j];
            }
            (*bad)++;
        }
    }
}

/* The RUN request of case k: every tensor's place in shared memory (both launches' for a pair),
 * scalars, symbols and the launch configuration. Returns the shared memory it needs. */
static uint64_t run_request(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                            const struct kg_exec_opts *o, struct kg_req *rq)
{
    const struct kg_contract *c = k->c;
    bool pair = (o->flags & KG_RUN_PAIR) != 0;
    memset(rq, 0, sizeof *rq);
    rq->magic = KG_PROTO_MAGIC;
    rq->cmd = KG_CMD_RUN;
    struct kg_req_run *r = &rq->u.run;
    r->flags = o->flags;
    /* Once a gate found that the kernel leaves work on a stream of its own (wrong-stream), every
     * later run but the placed ones (side stream, concurrent pair: that is placement's question)
     * waits for the whole device, as KernelBench's harness does: the other gates then judge their
     * own questions, not the same race again (seen on the H200 under load: freshness called it a
     * stale result, aliasing an unwritten output). */
    if ((kg_session_saw_cause(s, KG_CAUSE_WRONG_STREAM) || s->late_writes) && kg_session_can(s, KG_CAP_SYNC_DEVICE) &&
        !(o->flags & (KG_RUN_SIDE_STREAM | KG_RUN_PAIR)))
        r->flags |= KG_RUN_SYNC_DEVICE;
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
            if (ca->kind != KG_ARG_TENSOR) {
                a->ival = (int64_t)k->scalar[i];
                a->fval = k->scalar[i];
                continue;
            }
            a->dtype = k->adtype[i];
            a->rank = k->shape[i].rank;
            memcpy(a->dims, k->shape[i].dims, sizeof a->dims);
            if (c->alias_of[i] >= 0) {
                a->alias = c->alias_of[i];
                continue;
            }
            a->bytes = (uint64_t)k->numel[i] * kg_dtype_size(k->adtype[i]);
            a->guard = s->be->guard;
            if (set == 0) {
                a->off = off;
                a->tag = kg_arg_is_input(ca) ? in->id : 0;
            } else {
                a->off2 = off;
            }
            off = align_up(off + a->bytes + 2 * a->guard);
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
    return off;
}

/* Whether the segment may keep a run's inputs for the next run on the same ones: where the worker
 * reads them, never lets the kernel write there, and says when it wrote none back
 * (KG_RUN_INPUTS_AS_SENT: the torch worker; the host runner's kernel works in the segment). */
static bool inputs_stay(const struct kg_session *s)
{
    return (s->be->found & KG_RUN_INPUTS_AS_SENT) != 0;
}

/* Writes guards, inputs and prefills (not where the worker prefills its own outputs) into the
 * run's segment; keeps a copy of a garbage prefill in x->before (the inputs as sent are in,
 * until read_back). An input the segment still holds from its last run (kg_seg_holds: the
 * same memo inputs, left as sent) is not written again: at real sizes a gigabyte's copy. */
static int lay_out(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                   const struct kg_exec_opts *o, const struct kg_req_run *r, struct kg_exec *x)
{
    const struct kg_contract *c = k->c;
    kg_seg_touch(x->seg, r->shm_size); /* a new segment's pages, on several threads */
    bool in_place = false;
    for (int set = 0; set <= (int)((o->flags & KG_RUN_PAIR) != 0); set++) {
        const struct kg_inputs *src = set ? o->in2 : in;
        for (int i = 0; i < c->nargs; i++) {
            const struct kg_req_arg *a = &r->args[i];
            if (a->kind != KG_ARG_TENSOR || a->alias >= 0) continue;
            const uint64_t off = set ? a->off2 : a->off;
            uint8_t *region = x->seg->mem + off;
            memset(region, o->guard_byte, a->guard);
            memset(region + a->guard + a->bytes, o->guard_byte, a->guard);
            if (kg_arg_is_input(&c->args[i])) {
                if (!a->bytes) continue;
                /* (the layout's regions are disjoint: no write here voids another's note) */
                if (inputs_stay(s) && kg_seg_holds(x->seg, off + a->guard, a->bytes, src->id))
                    in_place = true;
                else
                    kg_memcpy_parallel(region + a->guard, src->t[i].data, a->bytes);
                continue;
            }
            /* a prefill here would be overwritten whole, and a garbage one (drawn, and copied to
             * before) is not the worker's: kg_exec_kept_prefill cannot tell it, nor need to */
            if (s->be->worker_fills_outputs) continue;
            prefill(s, k, i, o->fill, region + a->guard, a->bytes);
            if (set == 0 && o->fill == KG_FILL_GARBAGE) { /* a constant one is known without a copy */
                kg_tensor_free(&x->before[i]);            /* a rerun lays out again */
                if (copy_tensor(&x->before[i], k, i, region + a->guard)) {
                    kg_seg_forget(x->seg);
                    return -1;
                }
            }
        }
    }
    kg_seg_forget(x->seg); /* this run's writes, and the worker's, void the notes */
    if (in_place) s->memo_stats.inputs_in_place++;
    return 0;
}

/* Notes in the segment which of its input regions still hold what lay_out sent, once the worker
 * said it wrote none of them back, for the next run on the same inputs. */
static void note_held(const struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in,
                      const struct kg_exec_opts *o, const struct kg_req_run *r, struct kg_exec *x)
{
    if (!inputs_stay(s) || !(x->found & KG_RUN_INPUTS_AS_SENT)) return; /* found: the reply was OK */
    for (int set = 0; set <= (int)((o->flags & KG_RUN_PAIR) != 0); set++)
        for (int i = 0; i < k->c->nargs; i++) {
            const struct kg_req_arg *a = &r->args[i];
            if (a->kind != KG_ARG_TENSOR || a->alias >= 0 || !kg_arg_is_input(&k->c->args[i]) || !a->bytes) continue;
            kg_seg_hold(x->seg, (set ? a->off2 : a->off) + a->guard, a->bytes, (set ? o->in2 : in)->id);
        }
}

/* Every tensor after the call, read where the worker left it, and the guards around it checked;
 * an input is its own before when the call left it as sent (a copy of what was sent otherwise). */
static int read_back(const struct kg_case *k, const struct kg_inputs *in, const struct kg_exec_opts *o,
                     const struct kg_req_run *r, struct kg_exec *x)
{
    const struct kg_contract *c = k->c;
    for (int set = 0; set <= (int)((o->flags & KG_RUN_PAIR) != 0); set++)
        for (int i = 0; i < c->nargs; i++) {
            const struct kg_req_arg *a = &r->args[i];
            if (a->kind != KG_ARG_TENSOR) continue;
            int src = a->alias >= 0 ? a->alias : i;
            const struct kg_req_arg *sa = &r->args[src];
            uint8_t *region = x->seg->mem + (set ? sa->off2 : sa->off);
            *(set ? &x->after2[i] : &x->after[i]) = kg_case_tensor(k, i, k->adtype[i], region + sa->guard);
            if (set || a->alias >= 0) continue;
            check_guards(region, sa->guard, sa->bytes, o->guard_byte, x, i);
            if (!kg_arg_is_input(&c->args[i])) continue;
            if (!a->bytes || (x->found & KG_RUN_INPUTS_AS_SENT) ||
                !memcmp(region + a->guard, in->t[i].data, a->bytes)) {
                x->before[i] = kg_case_tensor(k, i, k->adtype[i], region + a->guard);
                x->views |= 1u << i;
            } else if (copy_tensor(&x->before[i], k, i, in->t[i].data)) {
                return -1;
            }
        }
    return 0;
}

static int fail(struct kg_exec *x, int status, const char *msg)
{
    x->status = status;
    snprintf(x->msg, sizeof x->msg, "%s", msg);
    return x->status;
}

static const char *fault_words(int status)
{
    switch (status) {
    case KG_WS_TIMEOUT: return "hung (timed out)";
    case KG_WS_OOM: return "ran out of memory";
    case KG_WS_CUDA: return "hit a CUDA error";
    default: return "crashed";
    }
}

const struct kg_fault *kg_case_fault(const struct kg_session *s, const struct kg_case *k)
{
    for (int i = 0; i < s->nfault; i++) {
        const struct kg_fault *f = &s->fault[i];
        if (f->dtype == k->dtype && (f->any_shape || !memcmp(f->sym, k->sym, sizeof f->sym))) return f;
    }
    return NULL;
}

static void note_fault(struct kg_session *s, const struct kg_case *k, int status)
{
    if (s->nfault >= KG_MAX_FAULTS || kg_case_fault(s, k)) return;
    struct kg_fault *f = &s->fault[s->nfault++];
    f->status = status;
    f->dtype = k->dtype;
    f->any_shape = status != KG_WS_CRASH && status != KG_WS_CUDA;
    memcpy(f->sym, k->sym, sizeof f->sym);
    kg_strlcpy(f->gate, s->current_gate ? s->current_gate->id : "", sizeof f->gate);
    kg_case_id(k, f->case_id, sizeof f->case_id);
}

/* One run request to the candidate's worker, counted and timed in the session; its seconds. */
static double timed_call(struct kg_session *s, struct kg_client *cl, struct kg_req *rq, int fd, struct kg_reply *rp)
{
    double t0 = kg_now();
    kg_session_call_fd(s, cl, rq, fd, rp);
    double secs = kg_now() - t0;
    s->t_run += secs;
    s->nruns++;
    return secs;
}

int kg_exec(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, const struct kg_exec_opts *o,
            struct kg_exec *x)
{
    memset(x, 0, sizeof *x);
    x->fill = o->fill;
    x->guard_byte = o->guard_byte;
    if (kg_session_interrupted(s)) return fail(x, KG_WS_INTERRUPTED, "interrupted: not run");
    const struct kg_fault *f = kg_case_fault(s, k);
    if (f) {
        x->not_rerun = true;
        x->status = f->status;
        snprintf(x->msg, sizeof x->msg, "not run again: the kernel %s at %s%s%s", fault_words(f->status), f->case_id,
                 f->gate[0] ? " in gate " : "", f->gate);
        return x->status;
    }
    static struct kg_req rq;
    uint64_t need = run_request(s, k, in, o, &rq);
    struct kg_err e;
    x->seg = kg_seg_get(KG_SEG_RUN, need, inputs_stay(s) ? in->id : 0, &e);
    if (!x->seg) return fail(x, KG_WS_UNAVAILABLE, e.msg);
    if (lay_out(s, k, in, o, &rq.u.run, x)) goto oom;
    struct kg_reply rp;
    struct kg_client *cl = kg_session_client(s, k->dtype, &rp);
    if (cl && o->fresh_worker) {
        kg_session_restart(s, cl);
        cl = kg_session_client(s, k->dtype, &rp);
    } else if (cl && o->spare_worker) {
        kg_client_spare(s, cl);
    }
    if (!cl) return fail(x, rp.status, rp.msg);
    timed_call(s, cl, &rq, x->seg->fd, &rp);
    if (rp.status == KG_WS_TIMEOUT && !kg_session_interrupted(s) && !kg_session_no_gpu(s)) {
        /* A GPU is shared with whatever else runs on the host (other checks, other users, a
         * context torn down after another hang), and a run can wait on it for longer than the
         * limit without hanging (seen: a 4096x256 elementwise launch under a full `make check
         * -j16` on the H200). So a GPU run that times out runs once more in a fresh worker on
         * pristine buffers; only a second timeout is a hang. A host run's time is its own: no
         * second chance there (a hang costs one limit). */
        if (lay_out(s, k, in, o, &rq.u.run, x)) goto oom;
        cl = kg_session_client(s, k->dtype, &rp);
        if (!cl) return fail(x, rp.status, rp.msg);
        const double secs = timed_call(s, cl, &rq, x->seg->fd, &rp);
        if (rp.status == KG_WS_TIMEOUT) {
            size_t n = strlen(rp.msg);
            snprintf(rp.msg + n, sizeof rp.msg - n, "%s", " (twice: the second time in a fresh worker)");
        } else if (rp.status == KG_WS_OK) {
            s->nstalls++;
            s->stall_seconds = secs;
            kg_case_id(k, s->stall_case, sizeof s->stall_case);
        }
    }
    x->status = rp.status;
    x->code = rp.code;
    x->seconds = rp.seconds;
    if (rp.status == KG_WS_OK && rp.seconds > 0) { /* the fastest run at the largest case, for projections */
        const int64_t elems = kg_case_max_numel(k);
        if (elems > s->run_elems || (elems == s->run_elems && rp.seconds < s->run_secs)) {
            s->run_elems = elems;
            s->run_secs = rp.seconds;
        }
    }
    x->pair_overlap = rp.pair_overlap;
    x->pair_shorter = rp.pair_shorter;
    x->pair_clock = rp.pair_clock;
    snprintf(x->msg, sizeof x->msg, "%s", rp.msg);
    s->last_run = rp;
    s->has_last_run = true;
    if (rp.status == KG_WS_CRASH || rp.status == KG_WS_TIMEOUT || rp.status == KG_WS_OOM || rp.status == KG_WS_CUDA)
        note_fault(s, k, rp.status);
    if (rp.status == KG_WS_HOST_OOM) { /* kg_session_call_fd's words, with the case */
        char id[KG_CASE_ID_MAX];
        kg_case_id(k, id, sizeof id);
        kg_session_note_host_oom(s, "kernel's", id);
    }
    if (rp.status != KG_WS_OK && rp.status != KG_WS_REFUSED) return x->status;
    if (rp.status == KG_WS_OK) x->found = (uint32_t)rp.code & s->be->found;
    if (x->found & KG_RUN_OUT_LATE_WRITE) s->late_writes++;
    if (x->found & KG_RUN_INPUTS_KEPT) s->memo_stats.inputs_kept++;
    if (read_back(k, in, o, &rq.u.run, x)) goto oom;
    note_held(s, k, in, o, &rq.u.run, x);
    if (o->flags & (KG_RUN_DIGEST | KG_RUN_DIGEST_ALSO)) {
        x->has_digest = true;
        x->digested = (o->flags & KG_RUN_DIGEST) != 0; /* the outputs are not in the segment: nothing may read them */
        for (int i = 0; i < k->c->nargs; i++) {
            x->digest[i] = rp.digest[i];
            x->prefilled[i] = rp.prefilled[i];
            if (x->digested && kg_arg_is_output(&k->c->args[i]) && !kg_arg_is_input(&k->c->args[i]))
                x->after[i].data = NULL;
        }
    }
    return x->status;
oom:
    kg_exec_free(x);
    return fail(x, KG_WS_UNAVAILABLE, "out of memory copying tensors");
}

bool kg_exec_digests_equal(const struct kg_case *k, const struct kg_exec *a, const struct kg_exec *b)
{
    for (int i = 0; i < k->c->nargs; i++)
        if (kg_arg_is_output(&k->c->args[i]) && a->digest[i] != b->digest[i]) return false;
    return a->has_digest && b->has_digest;
}

int kg_session_sample(struct kg_session *s, bool candidate, const struct kg_case *k, const int64_t *idx, int n,
                      int nout, double *vals, struct kg_reply *rp, struct kg_err *e)
{
    if (!s->be->sample) {
        memset(rp, 0, sizeof *rp);
        return kg_errf(e, "the %s runner cannot sample a case too large to ship", s->be->title);
    }
    return s->be->sample(s, candidate, k, idx, n, nout, vals, rp, e);
}

static bool turn_interrupted(void *ud)
{
    return kg_session_interrupted(ud);
}

int kg_session_sample_turn(struct kg_session *s, bool candidate, const struct kg_case *k, const int64_t *idx, int n,
                           int nout, double *vals, int turn_fd, double lock_limit, struct kg_reply *rp,
                           struct kg_err *e)
{
    for (int tries = 0;; tries++) {
        s->devwait_off = turn_fd >= 0;
        int rc = kg_session_sample(s, candidate, k, idx, n, nout, vals, rp, e);
        s->devwait_off = false;
        if (rc == 0 || turn_fd < 0 || !kg_reply_device_full(rp)) return rc;
        flock(turn_fd, LOCK_UN);
        if (!kg_session_wait_full(s, KG_CMD_SAMPLE, rp, tries)) return rc; /* judge_broken says why, if not its own */
        double waited;
        if (kg_gpu_lock_take(turn_fd, lock_limit, turn_interrupted, s, &waited)) {
            snprintf(s->judge_broken, sizeof s->judge_broken,
                     "after the device was full at a case past 2^31 elements, another check held this GPU's turn "
                     "at that size for %.0f s (KGATE_LOCK_WAIT); this says nothing about the kernel",
                     waited);
            return kg_errf(e, "%s", s->judge_broken);
        }
    }
}
