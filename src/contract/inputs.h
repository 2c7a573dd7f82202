/* inputs.h: the seeded input values of a case. Each input tensor is drawn element by element
 * from the counter-based generator (stream = arg index), so the same case always gives the
 * same bits. Values are rounded to the tensor's dtype when stored; special values (NaN,
 * +-Inf, -0, subnormals) are placed at positions that are recorded for the evidence. */
#ifndef KG_INPUTS_H
#define KG_INPUTS_H

#include "contract/case.h"

#define KG_MAX_SPECIAL 64

struct kg_special {
    int arg;
    int64_t index;
    double value;
};

struct kg_inputs {
    struct kg_tensor t[KG_MAX_ARGS]; /* input tensors (in, inout), dtype storage; others empty */
    int nspecial;
    struct kg_special special[KG_MAX_SPECIAL];
    /* set when the tensors are another's (the session memo's): read only, and kg_inputs_free
     * gives them back (counts *holds down) instead of freeing them */
    int *holds;
    /* nonzero: these bits under a name unique in this process (the memo's inputs, which are read
     * only): a worker that kept a copy of inputs of this id on its device may run from it instead
     * of copying them again. 0 (copies, inputs of a caller's own): not to be recognised. */
    uint64_t id;
};

/* Allocates and fills every input tensor of the case. */
int kg_inputs_generate(const struct kg_case *k, struct kg_inputs *in, struct kg_err *e);
void kg_inputs_free(struct kg_inputs *in);
/* dst as a copy of src that dst owns (the special values' list too); -1 out of memory. */
int kg_inputs_copy(struct kg_inputs *dst, const struct kg_inputs *src);

/* Fills one tensor (arg i of the case) into data, which holds numel elements of its dtype.
 * Records special values into in (may be NULL). */
void kg_inputs_fill(const struct kg_case *k, int i, void *data, struct kg_inputs *in);

/* Injects the special values (one NaN, +Inf, -Inf, two -0, two subnormals, at seeded places)
 * into tensor i and records them in in (may be NULL). kg_inputs_fill does it for the special
 * distribution; the torch path calls it on the problem's own values. */
void kg_inputs_inject(const struct kg_case *k, int i, void *data, struct kg_inputs *in);

/* Copies of inputs as float64 tensors (for the oracle); out[j] for the j-th oracle input. */
int kg_inputs_to_f64(const struct kg_case *k, const struct kg_inputs *in, struct kg_tensor *out, int *n,
                     struct kg_err *e);

#endif
