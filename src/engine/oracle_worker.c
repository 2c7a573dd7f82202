/* oracle_worker.c: the ORACLE request (oracle_worker.h), laid out once for every oracle that
 * runs in a worker: inputs then outputs as float64 at 64-byte-padded offsets of the oracle
 * worker's shared memory, outputs zeroed before the call. */
#include "engine/oracle_worker.h"

#include <stdio.h>
#include <string.h>

#include "engine/session.h"

int kg_oracle_worker_call(struct kg_session *s, const struct kg_case *k, int working, bool raw, bool again,
                          const struct kg_oracle_arg *in, int nin, struct kg_tensor *const *out,
                          const enum kg_dtype *out_dtype, int nout, int *code, struct kg_err *e)
{
    static struct kg_req rq;
    memset(&rq, 0, sizeof rq);
    rq.magic = KG_PROTO_MAGIC;
    rq.cmd = KG_CMD_ORACLE;
    struct kg_req_oracle *o = &rq.u.oracle;
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
    /* a region that grew is a new memfd (likely with the old descriptor's number: its size says
     * it), where nothing is placed yet */
    const uint64_t size0 = s->oshm.size;
    if (kg_session_oshm(s, o->shm_size, e)) return -1;
    bool placed = again && raw && size0 && s->oshm.size == size0;
    for (int j = 0; j < nin && !placed; j++) {
        if (in[j].kind != KG_ARG_TENSOR) continue;
        double *d = (double *)(s->oshm.mem + o->in[j].off);
        if (in[j].data_dtype == (enum kg_dtype)o->in[j].data_dtype)
            memcpy(d, in[j].data, (size_t)in[j].numel * kg_dtype_size(in[j].data_dtype));
        else
            for (int64_t x = 0; x < in[j].numel; x++) d[x] = kg_load(in[j].data_dtype, in[j].data, x);
    }
    /* the torch worker writes every output whole or fails the request (at real sizes this was
     * GBs of zeros per call); a contract's oracle finds zeros where it writes nothing */
    for (int j = 0; j < nout && !raw; j++) memset(s->oshm.mem + o->out[j].off, 0, (size_t)out[j]->numel * 8);
    struct kg_reply rp;
    if (kg_session_call(s, &s->oracle, &rq, &rp) || rp.status != KG_WS_OK) return kg_errf(e, "%s", rp.msg);
    for (int j = 0; j < nout; j++) memcpy(out[j]->data, s->oshm.mem + o->out[j].off, (size_t)out[j]->numel * 8);
    if (code) *code = rp.code;
    return 0;
}
