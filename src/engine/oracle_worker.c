/* custom.c: calling a user-supplied fp64 oracle through the oracle worker. Inputs and outputs
 * travel as float64 through the session's shared memory. */
#include "engine/oracle_worker.h"

#include <stdio.h>
#include <string.h>

#include "engine/session.h"

int kg_custom_oracle(struct kg_session *s, const struct kg_case *k, const struct kg_tensor *const *in, int nin,
                     struct kg_tensor *const *out, int nout, int working, struct kg_err *e)
{
    static struct kg_req rq;
    memset(&rq, 0, sizeof rq);
    rq.magic = KG_PROTO_MAGIC;
    rq.cmd = KG_CMD_ORACLE;
    struct kg_req_oracle *o = &rq.u.oracle;
    o->working = working;
    o->n_in = nin;
    o->n_out = nout;
    uint64_t off = 0;
    for (int j = 0; j < nin; j++) {
        o->in[j].rank = in[j]->rank;
        memcpy(o->in[j].dims, in[j]->dims, sizeof o->in[j].dims);
        o->in[j].off = off;
        off += (uint64_t)in[j]->numel * 8 + 64;
    }
    for (int j = 0; j < nout; j++) {
        o->out[j].rank = out[j]->rank;
        memcpy(o->out[j].dims, out[j]->dims, sizeof o->out[j].dims);
        o->out[j].off = off;
        off += (uint64_t)out[j]->numel * 8 + 64;
    }
    o->shm_size = off ? off : 8;
    o->nsym = k->c->nsyms;
    for (int i = 0; i < k->c->nsyms; i++) {
        kg_strlcpy(o->sym_names[i], k->c->sym[i], KG_NAME_MAX);
        o->sym_values[i] = k->sym[i];
    }
    if (kg_session_oshm(s, o->shm_size, e)) return -1;
    for (int j = 0; j < nin; j++) memcpy(s->oshm + o->in[j].off, in[j]->data, (size_t)in[j]->numel * 8);
    for (int j = 0; j < nout; j++) memset(s->oshm + o->out[j].off, 0, (size_t)out[j]->numel * 8);
    struct kg_reply rp;
    if (kg_session_call(s, &s->oracle, &rq, &rp) || rp.status != KG_WS_OK)
        return kg_errf(e, "%s:%d: oracle %s: %s", k->c->path, k->c->line_op, k->c->oracle_func, rp.msg);
    for (int j = 0; j < nout; j++) memcpy(out[j]->data, s->oshm + o->out[j].off, (size_t)out[j]->numel * 8);
    return 0;
}
