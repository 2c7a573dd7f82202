/* oracle.h: the built-in ops, each evaluated two ways on float64 tensors.
 *   KG_EXACT  the fp64 oracle: double arithmetic with compensated (Neumaier) accumulation,
 *             the answer every kernel is judged against;
 *   KG_W32    the working-precision reference for f32/f16/bf16 kernels: every intermediate
 *             rounded to fp32, reductions accumulated sequentially in fp32 (the least
 *             accurate legitimate order, see ARCHITECTURE.md), so that its distance to
 *             KG_EXACT is the physical error floor that calibrates tolerances;
 *   KG_W64    the same for f64 kernels: plain sequential double arithmetic;
 *   KG_WACC16, KG_WACCBF16  KG_W32 with the running sums rounded to fp16 / bf16 after every
 *             addition: what a kernel with a half-precision accumulator computes, so that a
 *             gate can tell that defect by its error (ops with KG_OP_LOWACC only).
 * Inputs arrive already rounded to the kernel's dtype; the caller rounds outputs.
 * Tensors passed to eval are KG_F64 with data owned by the caller; integer results (argmax)
 * are stored as exact doubles. NaN and Inf propagate as in PyTorch (max/min/argmax return
 * NaN / the first NaN's index when a NaN is present). */
#ifndef KG_ORACLE_H
#define KG_ORACLE_H

#include <stdbool.h>

#include "base/dtype.h"
#include "base/tensor.h"
#include "base/util.h"

/* KG_EXACT_ALT: for ops with two legitimate fp64 algorithms that differ only at non-finite
 * inputs (the gated recurrences: step by step, and chunked in log space), the second one. The
 * nonfinite gate accepts either's pattern of NaN and Inf. Ops without KG_OP_HAS_ALT reject it. */
enum kg_arith { KG_EXACT, KG_W32, KG_W64, KG_EXACT_ALT, KG_WACC16, KG_WACCBF16 };

#define KG_OP_MAX_PARAMS 4
#define KG_OP_MAX_IO     8

enum kg_op_flags {
    KG_OP_ELEMENTWISE = 1u << 0, /* out[i] depends on in[*][i] only (same shapes) */
    KG_OP_ROWWISE = 1u << 1,     /* independent along every dim but the last: rows can be
                                    evaluated alone (sampled oracles for huge cases) */
    KG_OP_INT_OUT = 1u << 2,     /* outputs are integer-valued (argmax) */
    KG_OP_PERMUTABLE = 1u << 3,  /* result invariant under permuting the reduce axis */
    KG_OP_HAS_ALT = 1u << 4,     /* evaluates KG_EXACT_ALT */
    KG_OP_LOWACC = 1u << 5,      /* evaluates KG_WACC16 and KG_WACCBF16 (its sums go through kg_acc) */
};

struct kg_opdef;

/* A parsed `op:` line: the op and its keyword parameters (in the def's param order). */
struct kg_opcall {
    const struct kg_opdef *def;
    double param[KG_OP_MAX_PARAMS];
};

struct kg_opdef {
    const char *name;
    int n_in, n_out;
    const char *params[KG_OP_MAX_PARAMS]; /* keyword names, NULL after the last */
    double defaults[KG_OP_MAX_PARAMS];    /* NAN: required */
    unsigned flags;
    const char *doc; /* one line: inputs -> outputs, for --help and the man page */
    /* Checks the declared shapes; fills e with what was expected. May be NULL (elementwise
     * ops are checked generically: every input and output has the same shape). */
    int (*check)(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out, struct kg_err *e);
    /* The input dim that is reduced over, or -1 (for the precision and reduction-order
     * gates: which symbol to lengthen, which axis to permute). May be NULL (-1). */
    int (*reduce_axis)(const struct kg_opcall *c, const struct kg_shape *in0);
    /* Evaluates; returns 0, or -1 with e filled. */
    int (*eval)(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                struct kg_tensor *const *out, struct kg_err *e);
};

/* The table of built-in ops, NULL-terminated. */
extern const struct kg_opdef *const kg_ops[];

const struct kg_opdef *kg_op_find(const char *name);

/* Parses "softmax(dim=1)", "relu", "leaky_relu(slope=0.01)", "scale(alpha=2)": unknown op,
 * unknown or missing keyword, or bad number -> -1 with a message (no file/line: the caller
 * prefixes its own). Negative dims are allowed and resolved against the input rank. */
int kg_op_parse(const char *text, struct kg_opcall *call, struct kg_err *e);

/* Checks shapes (op-specific or the elementwise rule) and the arity. */
int kg_op_check(const struct kg_opcall *c, int n_in, const struct kg_shape *in, int n_out, const struct kg_shape *out,
                struct kg_err *e);

int kg_op_reduce_axis(const struct kg_opcall *c, const struct kg_shape *in0);

/* Evaluates the op; in/out tensors must be KG_F64 with their shapes set. */
int kg_op_eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
               struct kg_tensor *const *out, struct kg_err *e);

/* ---- arithmetic helpers shared by the op files -------------------------------------- */

/* x rounded as the mode's intermediates are. */
static inline double kg_ar(enum kg_arith a, double x)
{
    return a == KG_W32 || a == KG_WACC16 || a == KG_WACCBF16 ? (double)(float)x : x;
}

/* A running sum: Neumaier-compensated in KG_EXACT, sequential in the working modes. */
struct kg_acc {
    double s, c;
};

static inline void kg_acc_add(enum kg_arith a, struct kg_acc *acc, double x)
{
    if (a == KG_EXACT) {
        double t = acc->s + x;
        if (__builtin_fabs(acc->s) >= __builtin_fabs(x))
            acc->c += (acc->s - t) + x;
        else
            acc->c += (x - t) + acc->s;
        acc->s = t;
    } else if (a == KG_WACC16 || a == KG_WACCBF16) {
        acc->s = kg_round(a == KG_WACC16 ? KG_F16 : KG_BF16, acc->s + kg_ar(a, x));
    } else {
        acc->s = kg_ar(a, acc->s + kg_ar(a, x));
    }
}

/* The sum; a non-finite running sum is returned as is (the compensation would be NaN). */
static inline double kg_acc_get(const struct kg_acc *acc)
{
    return __builtin_isfinite(acc->s) ? acc->s + acc->c : acc->s;
}

#endif
