/* case.h: a fully concrete instance of a contract: symbol values, instance dtype, seed and
 * input distribution, with every tensor's shape and the launch configuration evaluated.
 * A case is a value (no pointers it owns); its id string reproduces it. */
#ifndef KG_CASE_H
#define KG_CASE_H

#include "contract/contract.h"

enum kg_dist {
    KG_DIST_NORMAL,     /* N(0, 1) */
    KG_DIST_UNIFORM,    /* U[-1, 1) */
    KG_DIST_UNIT,       /* U[0, 1): what KernelBench's torch.rand draws */
    KG_DIST_BINARY,     /* {0, 1} */
    KG_DIST_LARGE_MEAN, /* 1e3 + N(0, 1): exposes low-precision accumulation */
    KG_DIST_MIXED,      /* +-10^U(-4,4), alternating signs: cancellation, mixed magnitude */
    KG_DIST_SPECIAL,    /* N(0, 1) with NaN, +-Inf, -0 and subnormals at recorded places */
    KG_DIST_COUNT
};

const char *kg_dist_name(enum kg_dist d);
int kg_dist_parse(const char *s, enum kg_dist *out);

struct kg_case {
    const struct kg_contract *c;
    int64_t sym[KG_MAX_SYMS];
    enum kg_dtype dtype; /* instance dtype (resolves T) */
    uint64_t seed;
    enum kg_dist dist;
    /* derived by kg_case_init */
    struct kg_shape shape[KG_MAX_ARGS]; /* tensors */
    enum kg_dtype adtype[KG_MAX_ARGS];  /* tensors */
    int64_t numel[KG_MAX_ARGS];         /* tensors */
    double scalar[KG_MAX_ARGS];         /* scalars */
    int64_t grid[3], block[3], smem;    /* when the contract has launch: */
    bool nominal;                       /* the shape every gate starts from (set by the engine) */
};

/* Evaluates a case. sym NULL means the nominal shape. Errors: a dim or launch expression
 * that fails (division by zero, negative dim) or a scalar that does not fit its type. */
int kg_case_init(struct kg_case *k, const struct kg_contract *c, const int64_t *sym, enum kg_dtype dtype, uint64_t seed,
                 enum kg_dist dist, struct kg_err *e);

/* Room for a case's shape and its id (32 symbols with 64-bit values fit). */
#define KG_SHAPE_STR_MAX 512
#define KG_CASE_ID_MAX   640

/* The most elements of any tensor argument of k. */
int64_t kg_case_max_numel(const struct kg_case *k);

/* "M=512,N=1000" */
void kg_case_shape_str(const struct kg_case *k, char *buf, size_t n);
/* "M=512,N=1000 dtype=f32 seed=1 dist=normal" */
void kg_case_id(const struct kg_case *k, char *buf, size_t n);
/* Parses a case id as kg_case_id writes it back into a case of contract c (evidence and replay
 * commands carry ids). -1 with e filled when it does not parse or evaluate. */
int kg_case_from_id(const struct kg_contract *c, const char *id, struct kg_case *k, struct kg_err *e);

/* Whether the case has nothing to compare: every out and inout tensor has zero elements (N=0).
 * A judgement of such a case would be "exact" with nothing compared; it is refused instead. */
bool kg_case_outputs_empty(const struct kg_case *k);

/* Tensor arg i of the case as a header: its shape, the given dtype, data pointing at data (not
 * owned: a view, or NULL for a header alone). */
struct kg_tensor kg_case_tensor(const struct kg_case *k, int i, enum kg_dtype dtype, void *data);

/* Total bytes of all tensors (for sizing shared memory and refusing absurd cases). */
int64_t kg_case_bytes(const struct kg_case *k);

#endif
