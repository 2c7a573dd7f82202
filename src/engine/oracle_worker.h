/* oracle_worker.h: evaluating an oracle that is code (a contract's `oracle: FUNC`, a KernelBench
 * problem's Model) in the session's oracle worker, never in the judge and never beside the
 * candidate. The tensors travel through the oracle worker's own shared memory: the outputs as
 * float64, the inputs as float64 too or (raw, the torch runner) in the dtype they are stored in,
 * which the worker casts on its device: no conversion loop here, and half the bytes of fp32. */
#ifndef KG_ORACLE_WORKER_H
#define KG_ORACLE_WORKER_H

#include <stdbool.h>

#include "base/segment.h"
#include "contract/case.h"
#include "worker/proto.h"

struct kg_session;

/* One input of an ORACLE request: a tensor (its values in data, stored as data_dtype) or a
 * scalar (kind other than KG_ARG_TENSOR, its value in value). */
struct kg_oracle_arg {
    enum kg_argkind kind;
    enum kg_dtype dtype; /* the tensor's own dtype (the worker may rebuild it) */
    int rank;
    const int64_t *dims;
    int64_t numel;
    const void *data;
    enum kg_dtype data_dtype;
    double value;
};

/* Evaluates the loaded oracle on case k's symbols with `working` (kg_req_oracle's modes): the
 * nout float64 tensors out[j] (allocated by the caller; out_dtype[j] their own dtypes). Returns
 * 0 with *code the reply's code, or -1 with e holding the worker's message. again (raw only):
 * the inputs are the previous call's, for the same case; they lie in the worker's shared memory
 * still (the torch worker copies them out and never writes there) and are not copied in again. */
int kg_oracle_worker_call(struct kg_session *s, const struct kg_case *k, int working, bool raw, bool again,
                          const struct kg_oracle_arg *in, int nin, struct kg_tensor *const *out,
                          const enum kg_dtype *out_dtype, int nout, int *code, struct kg_err *e);

/* The evaluations of one case in a segment of their own (raw only), read where the worker wrote
 * them: the inputs are placed once (*g NULL: the first call makes the segment, with room for
 * KG_ORACLE_SETS evaluations), and evaluation `set` writes its float64 outputs into its own part;
 * out[j] (shape set by the caller, no data) become views of that part, valid until the segment
 * is given back (kg_seg_put). With resident nonzero (the torch runner) the outputs stay in the
 * worker instead, as evaluation `set` of the resident case of that id, and out[j] get no data.
 * Otherwise as kg_oracle_worker_call. */
#define KG_ORACLE_SETS 3
struct kg_oracle_case {
    struct kg_seg *g;
    uint64_t in_bytes, set_bytes; /* the inputs' part, and each evaluation's */
};
int kg_oracle_worker_lend(struct kg_session *s, const struct kg_case *k, int working, struct kg_oracle_case *oc,
                          int set, uint64_t resident, const struct kg_oracle_arg *in, int nin,
                          struct kg_tensor *const *out, const enum kg_dtype *out_dtype, int nout, int *code,
                          struct kg_err *e);
/* The case's evaluations done: the memory of its inputs' part and of every evaluation after the
 * first keep ones is given back to the system (the segment keeps its size, those pages go). */
void kg_oracle_worker_settle(struct kg_oracle_case *oc, int keep);

/* Resident cases (KG_CMD_RESIDENT): the oracle's values of a case stay in the oracle worker, on
 * its device, and only numbers cross. calibrate: evaluations 1 and 2 become the reference in
 * dtypes dt, and each output's scale and reference error come back (kg_expect_eval's, computed
 * there). judge: the run's outputs got[j] (in its segment seg) compared there as kg_judge's
 * kg_compare_calibrated would (classes: kg_compare_classes's test). fetch: the values into a segment of their own (*seg), exact[j]
 * and ref[j] (shapes set by the caller) its views. drop: the case forgotten. 0 or -1 (e). */
struct kg_cmp;
int kg_oracle_resident_calibrate(struct kg_session *s, uint64_t id, const enum kg_dtype *dt, int nout, double *scale,
                                 double *ref_err, struct kg_err *e);
int kg_oracle_resident_judge(struct kg_session *s, uint64_t id, const struct kg_tensor *const *got,
                             const struct kg_seg *seg, int nout, struct kg_cmp *cmp, struct kg_err *e);
int kg_oracle_resident_fetch(struct kg_session *s, uint64_t id, struct kg_tensor *exact, struct kg_tensor *ref,
                             int nout, struct kg_seg **seg, struct kg_err *e);
/* classes: the run's outputs got[j] (in seg) compared with the kept values as kg_compare_classes
 * does (exact: every output compared exactly, as integers), into c[j]. 0 or -1 (e). */
struct kg_classes;
int kg_oracle_resident_classes(struct kg_session *s, uint64_t id, const struct kg_tensor *const *got,
                               const struct kg_seg *seg, int nout, bool exact, struct kg_classes *c, struct kg_err *e);
void kg_oracle_resident_drop(struct kg_session *s, uint64_t id);
/* Whether values kept when the oracle worker had restarted gen times are still there (the
 * worker then alive, not replaced since: one that died took them with it). */
bool kg_oracle_resident_here(const struct kg_session *s, int gen);

#endif
