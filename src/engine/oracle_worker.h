/* custom.h: contracts that say `oracle: FUNC [in FILE.c]` instead of a built-in op. The
 * function is compiled like a host kernel and called in its own worker process (never in
 * the judge, never beside the candidate), through the kg_oracle_io ABI of kgate.h. */
#ifndef KG_CUSTOM_H
#define KG_CUSTOM_H

#include "contract/case.h"

struct kg_session;

/* Evaluates the custom oracle on float64 inputs; working: 0 exact, 1 fp32, 2 fp64 sequential. */
int kg_custom_oracle(struct kg_session *s, const struct kg_case *k, const struct kg_tensor *const *in, int nin,
                     struct kg_tensor *const *out, int nout, int working, struct kg_err *e);

#endif
