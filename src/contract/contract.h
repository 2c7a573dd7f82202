/* contract.h: what a kernel file's leading comment declares, parsed and checked.
 *
 *   /\*@kgate
 *   name:    softmax_rows
 *   op:      softmax(dim=1)
 *   entry:   softmax_rows
 *   args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
 *   launch:  grid=M block=256 smem=0
 *   shape:   M=512 N=1000
 *   sweep:   M=1,3,64 N=1,7,255,256,257,4097
 *   *\/
 *
 * The full syntax is kgate-contract(5). A contract owns everything it points to; load it
 * with kg_contract_load, release it with kg_contract_free. Errors are "FILE:LINE: ...". */
#ifndef KG_CONTRACT_H
#define KG_CONTRACT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/expr.h"
#include "oracle/oracle.h"
#include "base/tensor.h"
#include "base/util.h"

#define KG_MAX_ARGS   32
#define KG_MAX_SYMS   32
#define KG_MAX_SWEEP  32
#define KG_MAX_DTYPES 8
#define KG_NAME_MAX   64

/* The calibration factor k of threshold = k x reference error + floor lies in [1, KG_TOL_K_MAX]
 * (`tolerance:`, --tolerance). Below 1 a correct kernel fails on its own rounding; at 1e6 an
 * fp32 elementwise kernel (reference error ~6e-8) may already be off by several percent, so a
 * larger k no longer calibrates anything, it only lets wrong kernels pass. */
#define KG_TOL_K_MAX 1e6

enum kg_lang { KG_LANG_C, KG_LANG_CUDA, KG_LANG_PYTHON };

enum kg_argkind { KG_ARG_TENSOR, KG_ARG_INT, KG_ARG_LONG, KG_ARG_FLOAT, KG_ARG_DOUBLE };

/* scratch: a workspace the kernel may use freely: allocated and guarded, never judged. */
enum kg_io { KG_IN, KG_OUT, KG_INOUT, KG_SCRATCH };

/* How an input tensor's values are drawn when the contract fixes it (`inputs:`); otherwise
 * the gate's distribution applies. */
enum kg_argdist { KG_AD_DEFAULT, KG_AD_NORMAL, KG_AD_UNIFORM, KG_AD_INT, KG_AD_UNITROWS };

struct kg_arg {
    char name[KG_NAME_MAX];
    enum kg_argkind kind;
    enum kg_io io;       /* tensors */
    enum kg_dtype dtype; /* tensors; KG_DTYPE_T means the instance dtype */
    int rank;            /* tensors */
    struct kg_expr *dims[KG_MAX_RANK];
    int sym;               /* scalars: the shape symbol it takes, or -1 for a constant */
    double value;          /* scalars with `= CONST` */
    enum kg_argdist dist;  /* `inputs:` override */
    double dist_a, dist_b; /* its parameters */
};

struct kg_contract {
    char *path;
    char *source; /* the whole file */
    size_t source_len;
    uint64_t hash; /* of the file's bytes: with the case id and seed, a case's identity */
    enum kg_lang lang;

    char name[KG_NAME_MAX];
    char entry[KG_NAME_MAX];
    bool entry_returns_int; /* host C: a non-zero return refuses the case */
    int line_entry_def;     /* where the entry is defined in the source (0: not found) */
    bool has_op;
    struct kg_opcall op; /* built-in oracle */
    char op_text[256];
    char oracle_func[KG_NAME_MAX]; /* `oracle: FUNC [in FILE]` */
    char *oracle_file;             /* resolved path (the kernel file itself by default) */
    char *problem_path;            /* KernelBench pairs: the problem file (the oracle) */

    int nargs;
    struct kg_arg args[KG_MAX_ARGS];

    int nsyms;
    char sym[KG_MAX_SYMS][KG_NAME_MAX];
    int64_t nominal[KG_MAX_SYMS];
    bool fixed[KG_MAX_SYMS]; /* cannot be varied (a KernelBench constant no dim follows) */
    int nsweep[KG_MAX_SYMS];
    int64_t sweep[KG_MAX_SYMS][KG_MAX_SWEEP];

    bool has_launch;
    struct kg_expr *grid[3], *block[3], *smem;

    double tol_k;              /* `tolerance: k=...`, default 2 */
    bool deterministic;        /* `deterministic: no` -> false */
    bool allow_tf32;           /* `allow: tf32`: fp32 outputs are held to TF32's precision */
    int alias_of[KG_MAX_ARGS]; /* alias_of[out] = in arg index, or -1 */
    int ndtypes;
    enum kg_dtype dtypes[KG_MAX_DTYPES]; /* `dtypes:`; empty: the args' own dtypes */

    /* 1-based lines of each key in the file, for messages (0: absent). */
    int line_header, line_name, line_op, line_entry, line_args, line_launch, line_shape, line_sweep, line_tolerance,
        line_alias, line_dtypes, line_inputs;
};

/* Loads and checks FILE's contract. On error returns -1 and e says "FILE:LINE: what". */
int kg_contract_load(const char *path, struct kg_contract **out, struct kg_err *e);
/* The same for a file's len bytes already in memory (copied; they may hold NUL bytes): path
 * names it in messages, gives the language by its extension and the folder of `oracle: in`. */
int kg_contract_load_text(const char *path, const char *text, size_t len, struct kg_contract **out, struct kg_err *e);
void kg_contract_free(struct kg_contract *c);

/* Index of the shape symbol / arg called NAME, or -1. */
int kg_contract_sym(const struct kg_contract *c, const char *name);
int kg_contract_arg(const struct kg_contract *c, const char *name);

/* The dtype tensor arg i has in an instance of dtype inst (resolves `T`). */
enum kg_dtype kg_arg_dtype(const struct kg_arg *a, enum kg_dtype inst);

/* The default instance dtype: the first of `dtypes:`, else the first float tensor's. */
enum kg_dtype kg_contract_default_dtype(const struct kg_contract *c);

/* Whether arg i is an oracle input (in, inout) / output (out, inout). */
static inline bool kg_arg_is_input(const struct kg_arg *a)
{
    return a->kind == KG_ARG_TENSOR && (a->io == KG_IN || a->io == KG_INOUT);
}
static inline bool kg_arg_is_output(const struct kg_arg *a)
{
    return a->kind == KG_ARG_TENSOR && (a->io == KG_OUT || a->io == KG_INOUT);
}

#endif
