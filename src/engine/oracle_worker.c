/* oracle_worker.c: the ORACLE request (oracle_worker.h), laid out once for every oracle that
 * runs in a worker: inputs then outputs as float64 at 64-byte-padded offsets of the oracle
 * worker's shared memory (outputs zeroed before the call), or of a case's own segment whose
 * outputs the judge reads in place. */
#include "engine/oracle_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "engine/session.h"

/* The ORACLE request of case k: inputs at 64-byte-padded offsets, then the outputs of
 * evaluation `set` (after `set` sets of outputs); returns the bytes of one set of outputs in
 * *set_bytes, the inputs' in *in_bytes. */
static int oracle_request(const struct kg_case *k, int working, bool raw, const struct kg_oracle_arg *in, int nin,
                          struct kg_tensor *const *out, const enum kg_dtype *out_dtype, int nout, int set,
                          struct kg_req *rq, uint64_t *in_bytes, uint64_t *set_bytes, struct kg_err *e)
{
    memset(rq, 0, sizeof *rq);
    rq->magic = KG_PROTO_MAGIC;
    rq->cmd = KG_CMD_ORACLE;
    struct kg_req_oracle *o = &rq->u.oracle;
    if (nin > KG_OP_MAX_IO || nout > KG_OP_MAX_IO) return kg_errf(e, "more than %d inputs or outputs", KG_OP_MAX_IO);
    o->working = working;
    o->n_in = nin;
    o->n_out = nout;
    uint64_t off = 0;
    for (int j = 0; j < nin; j++) {
        struct kg_req_tensor *t = &o->in[j];
        t->kind = in[j].kind;
        if (in[j].kind != KG_ARG_TENSOR) {
            t->value = in[j].value;
            continue;
        }
        t->dtype = in[j].dtype;
        t->data_dtype = raw ? in[j].data_dtype : KG_F64;
        t->rank = in[j].rank;
        memcpy(t->dims, in[j].dims, (size_t)in[j].rank * sizeof *t->dims);
        t->off = off;
        off += ((uint64_t)in[j].numel * kg_dtype_size(t->data_dtype) + 63) / 64 * 64 + 64;
    }
    *in_bytes = off;
    uint64_t each = 0;
    for (int j = 0; j < nout; j++) each += (uint64_t)out[j]->numel * 8 + 64;
    *set_bytes = each;
    off += (uint64_t)set * each;
    for (int j = 0; j < nout; j++) {
        struct kg_req_tensor *t = &o->out[j];
        t->kind = KG_ARG_TENSOR;
        t->dtype = out_dtype[j];
        t->rank = out[j]->rank;
        memcpy(t->dims, out[j]->dims, sizeof t->dims);
        t->off = off;
        off += (uint64_t)out[j]->numel * 8 + 64;
    }
    o->shm_size = off ? off : 8;
    o->nsym = k->c->nsyms;
    for (int i = 0; i < k->c->nsyms; i++) {
        kg_strlcpy(o->sym_names[i], k->c->sym[i], KG_NAME_MAX);
        o->sym_values[i] = k->sym[i];
    }
    return 0;
}

/* The inputs into mem at the request's offsets (float64 unless they go as stored). */
static void place_inputs(uint8_t *mem, const struct kg_req_oracle *o, const struct kg_oracle_arg *in, int nin)
{
    for (int j = 0; j < nin; j++) {
        if (in[j].kind != KG_ARG_TENSOR) continue;
        double *d = (double *)(mem + o->in[j].off);
        if (in[j].data_dtype == (enum kg_dtype)o->in[j].data_dtype)
            kg_memcpy_parallel(d, in[j].data, (size_t)in[j].numel * kg_dtype_size(in[j].data_dtype));
        else
            for (int64_t x = 0; x < in[j].numel; x++) d[x] = kg_load(in[j].data_dtype, in[j].data, x);
    }
}

int kg_oracle_worker_call(struct kg_session *s, const struct kg_case *k, int working, bool raw, bool again,
                          const struct kg_oracle_arg *in, int nin, struct kg_tensor *const *out,
                          const enum kg_dtype *out_dtype, int nout, int *code, struct kg_err *e)
{
    static struct kg_req rq;
    uint64_t in_bytes, set_bytes;
    if (oracle_request(k, working, raw, in, nin, out, out_dtype, nout, 0, &rq, &in_bytes, &set_bytes, e)) return -1;
    const struct kg_req_oracle *o = &rq.u.oracle;
    /* a region that grew is a new memfd (likely with the old descriptor's number: its size says
     * it), where nothing is placed yet */
    const uint64_t size0 = s->oshm.size;
    if (kg_session_oshm(s, o->shm_size, e)) return -1;
    bool placed = again && raw && size0 && s->oshm.size == size0;
    if (!placed) place_inputs(s->oshm.mem, o, in, nin);
    /* the torch worker writes every output whole or fails the request (at real sizes this was
     * GBs of zeros per call); a contract's oracle finds zeros where it writes nothing */
    for (int j = 0; j < nout && !raw; j++) memset(s->oshm.mem + o->out[j].off, 0, (size_t)out[j]->numel * 8);
    struct kg_reply rp;
    if (kg_session_call(s, &s->oracle, &rq, &rp) || rp.status != KG_WS_OK) return kg_errf(e, "%s", rp.msg);
    for (int j = 0; j < nout; j++) memcpy(out[j]->data, s->oshm.mem + o->out[j].off, (size_t)out[j]->numel * 8);
    if (code) *code = rp.code;
    return 0;
}

int kg_oracle_worker_lend(struct kg_session *s, const struct kg_case *k, int working, struct kg_oracle_case *oc,
                          int set, uint64_t resident, const struct kg_oracle_arg *in, int nin,
                          struct kg_tensor *const *out, const enum kg_dtype *out_dtype, int nout, int *code,
                          struct kg_err *e)
{
    static struct kg_req rq;
    if (set < 0 || set >= KG_ORACLE_SETS) return kg_errf(e, "evaluation %d of a case: at most %d", set, KG_ORACLE_SETS);
    if (oracle_request(k, working, true, in, nin, out, out_dtype, nout, set, &rq, &oc->in_bytes, &oc->set_bytes, e))
        return -1;
    struct kg_req_oracle *o = &rq.u.oracle;
    o->resident = resident;
    o->resident_set = set;
    if (resident) o->shm_size = oc->in_bytes ? oc->in_bytes : 8; /* the outputs stay in the worker */
    if (!oc->g) {
        oc->g =
            kg_seg_get(KG_SEG_ORACLE, resident ? o->shm_size : oc->in_bytes + KG_ORACLE_SETS * oc->set_bytes + 8, 0, e);
        if (!oc->g) return -1;
        place_inputs(oc->g->mem, o, in, nin);
    }
    struct kg_reply rp;
    if (kg_session_call_fd(s, &s->oracle, &rq, oc->g->fd, &rp) || rp.status != KG_WS_OK)
        return kg_errf(e, "%s", rp.msg);
    if (!resident) {
        for (int j = 0; j < nout; j++) out[j]->data = oc->g->mem + o->out[j].off;
        if (nout) kg_seg_map_in(oc->g, o->out[0].off, oc->set_bytes);
    }
    if (code) *code = rp.code;
    return 0;
}

/* ---- resident cases ------------------------------------------------------------------------ */

/* A RESIDENT request of case id: operation op (KG_RES_*) on its nout outputs. */
static void resident_request(struct kg_req *rq, uint64_t id, int op, int nout)
{
    memset(rq, 0, sizeof *rq);
    rq->magic = KG_PROTO_MAGIC;
    rq->cmd = KG_CMD_RESIDENT;
    rq->u.oracle.working = op;
    rq->u.oracle.resident = id;
    rq->u.oracle.n_out = nout;
}

/* The reply's nout lines of nf numbers each (hex floats, integers) into v[j * nf + f]. */
static int reply_numbers(const char *msg, int nout, int nf, double *v, struct kg_err *e)
{
    const char *p = msg;
    for (int i = 0; i < nout * nf; i++) {
        char *end;
        v[i] = strtod(p, &end);
        if (end == p)
            return kg_errf(e, "the oracle worker's reply has %d numbers, not %d: \"%.200s\"", i, nout * nf, msg);
        p = end;
    }
    return 0;
}

static int resident_call(struct kg_session *s, struct kg_req *rq, int fd, struct kg_reply *rp, struct kg_err *e)
{
    if (kg_session_call_fd(s, &s->oracle, rq, fd, rp) || rp->status != KG_WS_OK)
        return kg_errf(e, "the oracle worker: %s", rp->msg[0] ? rp->msg : kg_wstatus_name((enum kg_wstatus)rp->status));
    return 0;
}

int kg_oracle_resident_calibrate(struct kg_session *s, uint64_t id, const enum kg_dtype *dt, int nout, double *scale,
                                 double *ref_err, struct kg_err *e)
{
    static struct kg_req rq;
    resident_request(&rq, id, KG_RES_CALIBRATE, nout);
    for (int j = 0; j < nout; j++) rq.u.oracle.out[j].dtype = dt[j];
    struct kg_reply rp;
    double v[2 * KG_OP_MAX_IO];
    if (resident_call(s, &rq, -1, &rp, e) || reply_numbers(rp.msg, nout, 2, v, e)) return -1;
    for (int j = 0; j < nout; j++) {
        scale[j] = v[2 * j];
        ref_err[j] = v[2 * j + 1];
    }
    return 0;
}

/* A run's outputs got[j], where they lie in its segment seg, as the request's out[j]. */
static int place_run_outputs(struct kg_req *rq, const struct kg_tensor *const *got, const struct kg_seg *seg, int nout,
                             struct kg_err *e)
{
    uint64_t end = 8;
    for (int j = 0; j < nout; j++) {
        const uint8_t *p = got[j]->data;
        size_t bytes = (size_t)kg_tensor_bytes(got[j]);
        if (got[j]->numel && (!p || p < seg->mem || p + bytes > seg->mem + seg->size))
            return kg_errf(e, "output %d is not in the run's shared memory", j);
        struct kg_req_tensor *t = &rq->u.oracle.out[j];
        t->kind = KG_ARG_TENSOR;
        t->dtype = t->data_dtype = got[j]->dtype;
        t->rank = got[j]->rank;
        memcpy(t->dims, got[j]->dims, sizeof t->dims);
        t->off = got[j]->numel ? (uint64_t)(p - seg->mem) : 0;
        if (t->off + bytes > end) end = t->off + bytes;
    }
    rq->u.oracle.shm_size = end;
    return 0;
}

int kg_oracle_resident_judge(struct kg_session *s, uint64_t id, const struct kg_tensor *const *got,
                             const struct kg_seg *seg, int nout, struct kg_cmp *cmp, struct kg_err *e)
{
    static struct kg_req rq;
    resident_request(&rq, id, KG_RES_JUDGE, nout);
    if (place_run_outputs(&rq, got, seg, nout, e)) return -1;
    struct kg_reply rp;
    enum { NF = 12 };
    double v[NF * KG_OP_MAX_IO];
    if (resident_call(s, &rq, seg->fd, &rp, e) || reply_numbers(rp.msg, nout, NF, v, e)) return -1;
    for (int j = 0; j < nout; j++) {
        const double *f = &v[NF * j];
        cmp[j] = (struct kg_cmp){.n = (int64_t)f[0],
                                 .scale = f[1],
                                 .max_err = f[2],
                                 .worst = (int64_t)f[3],
                                 .got = f[4],
                                 .exp = f[5],
                                 .rms_rel = f[6],
                                 .nonfinite_mismatch = (int64_t)f[7],
                                 .first_nonfinite_mismatch = (int64_t)f[8],
                                 .mismatches = (int64_t)f[9],
                                 .excused = (int64_t)f[10],
                                 .first_excused = (int64_t)f[11]};
    }
    return 0;
}

int kg_oracle_resident_classes(struct kg_session *s, uint64_t id, const struct kg_tensor *const *got,
                               const struct kg_seg *seg, int nout, bool exact, struct kg_classes *c, struct kg_err *e)
{
    static struct kg_req rq;
    resident_request(&rq, id, KG_RES_CLASSES, nout);
    rq.u.oracle.resident_set = exact;
    if (place_run_outputs(&rq, got, seg, nout, e)) return -1;
    struct kg_reply rp;
    enum { NF = 3 };
    double v[NF * KG_OP_MAX_IO];
    if (resident_call(s, &rq, seg->fd, &rp, e) || reply_numbers(rp.msg, nout, NF, v, e)) return -1;
    for (int j = 0; j < nout; j++)
        c[j] = (struct kg_classes){.mismatches = (int64_t)v[NF * j],
                                   .first = (int64_t)v[NF * j + 1],
                                   .oracle_nonfinite = (int64_t)v[NF * j + 2]};
    return 0;
}

int kg_oracle_resident_fetch(struct kg_session *s, uint64_t id, struct kg_tensor *exact, struct kg_tensor *ref,
                             int nout, struct kg_seg **seg, struct kg_err *e)
{
    static struct kg_req rq;
    resident_request(&rq, id, KG_RES_FETCH, nout);
    uint64_t off = 0;
    for (int j = 0; j < nout; j++) {
        rq.u.oracle.out[j].off = off;
        off += (uint64_t)exact[j].numel * 8 + 64;
        rq.u.oracle.in[j].off = off;
        off += (uint64_t)ref[j].numel * 8 + 64;
    }
    rq.u.oracle.shm_size = off ? off : 8;
    *seg = kg_seg_get(KG_SEG_ORACLE, rq.u.oracle.shm_size, 0, e);
    if (!*seg) return -1;
    struct kg_reply rp;
    if (resident_call(s, &rq, (*seg)->fd, &rp, e)) {
        kg_seg_put(*seg);
        *seg = NULL;
        return -1;
    }
    kg_seg_map_in(*seg, 0, rq.u.oracle.shm_size);
    for (int j = 0; j < nout; j++) {
        exact[j].data = (*seg)->mem + rq.u.oracle.out[j].off;
        ref[j].data = (*seg)->mem + rq.u.oracle.in[j].off;
    }
    return 0;
}

bool kg_oracle_resident_here(const struct kg_session *s, int gen)
{
    return s->oracle.restarts == gen && kg_worker_alive(&s->oracle.w);
}

void kg_oracle_resident_drop(struct kg_session *s, uint64_t id)
{
    static struct kg_req rq;
    resident_request(&rq, id, KG_RES_DROP, 0);
    struct kg_reply rp;
    struct kg_err e;
    /* a worker that is gone holds nothing: no new one is started for this */
    if (kg_worker_alive(&s->oracle.w)) resident_call(s, &rq, -1, &rp, &e);
}

void kg_oracle_worker_settle(struct kg_oracle_case *oc, int keep)
{
    if (!oc->g) return;
    kg_seg_discard(oc->g, 0, oc->in_bytes);
    uint64_t from = oc->in_bytes + (uint64_t)keep * oc->set_bytes;
    if (from < oc->g->size) kg_seg_discard(oc->g, from, oc->g->size - from);
}
