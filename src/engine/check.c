/* check.c: the one-shot case most calibrated gates use: inputs, one run, the oracle, a
 * judgement; a run that fails sets the verdict instead. */
#include <string.h>

#include "engine/session.h"

int kg_check_case(struct kg_session *s, const struct kg_case *k, const struct kg_exec_opts *o, struct kg_judgement *j,
                  struct kg_expect *ex_out, struct kg_exec *x_out, struct kg_verdict *v)
{
    struct kg_err e;
    struct kg_inputs in; /* the memo's, lent */
    if (kg_session_inputs(s, k, &in, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        return -1;
    }
    struct kg_exec x;
    struct kg_exec_opts def = {.fill = KG_FILL_SENTINEL_A, .guard_byte = 0xA5};
    kg_exec(s, k, &in, o ? o : &def, &x);
    kg_inputs_free(&in);
    if (x.status == KG_WS_OK && kg_case_outputs_empty(k)) { /* it ran (no crash), but there is nothing to judge */
        kg_verdict_empty(v, k);
        kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
        kg_exec_free(&x);
        return -1;
    }
    if (x.status != KG_WS_OK) {
        kg_verdict_from_exec(v, k, &x);
        kg_replay(s, v->gate, k, v->replay, sizeof v->replay);
        kg_exec_free(&x);
        return -1;
    }
    struct kg_expect ex;
    if (kg_session_expect(s, k, &ex, &e)) {
        kg_verdict_set(v, KG_ERROR, "%s", e.msg);
        kg_exec_free(&x);
        return -1;
    }
    kg_judge(k, &x, false, &ex, j);
    if (s->judge_broken[0]) { /* no comparison: no verdict on the kernel */
        kg_verdict_set(v, KG_ERROR, "%s", s->judge_broken);
        v->not_kernel = true;
        kg_expect_free(&ex);
        kg_exec_free(&x);
        return -1;
    }
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
