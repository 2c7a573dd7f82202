/* values.h: what a run and the oracle produce for one case, as plain structs: the tensors a
 * run sent and got back (struct kg_exec), the oracle's values with their calibrated thresholds
 * (struct kg_expect), and one comparison of the two (struct kg_judgement). A function that
 * fills one transfers what it points to; release it with kg_exec_free / kg_expect_free. */
#ifndef KG_VALUES_H
#define KG_VALUES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/segment.h"
#include "contract/inputs.h"
#include "engine/compare.h"
#include "worker/proto.h"

struct kg_session;
struct kg_case;

/* How outputs are prefilled before a run. */
enum kg_fill {
    KG_FILL_SENTINEL_A, /* 0xFF bytes: NaN in every float dtype, -1 in integers */
    KG_FILL_SENTINEL_B, /* 0x7F bytes: 3.4e38 in f32/bf16, NaN in f16, a large integer */
    KG_FILL_ZERO,
    KG_FILL_GARBAGE, /* finite seeded values */
};

struct kg_exec_opts {
    enum kg_fill fill;
    uint8_t guard_byte;
    uint32_t flags;              /* KG_RUN_* */
    const struct kg_inputs *in2; /* KG_RUN_PAIR: inputs of the second launch */
    bool fresh_worker;           /* kill the worker first: the run happens in a new process */
    /* a fresh worker will be wanted soon (the determinism gate's last run): one is started and
     * loaded beside this run and the ones after, and the next fresh_worker run takes it */
    bool spare_worker;
};

#define KG_GUARD_SHOWN 4

struct kg_exec {
    int status; /* enum kg_wstatus */
    int code;
    uint32_t found; /* KG_RUN_OUT_* the worker saw (only runners that watch for them set any) */
    char msg[KG_MSG_MAX];
    double seconds;
    struct kg_tensor before[KG_MAX_ARGS]; /* every input as sent, and an output's garbage prefill (a
                                             constant prefill is not copied, nor one the worker
                                             made: kg_exec_kept_prefill) */
    struct kg_tensor after[KG_MAX_ARGS];  /* every tensor after the call */
    struct kg_tensor after2[KG_MAX_ARGS]; /* KG_RUN_PAIR: the second launch's */
    /* The run's shared memory, held until kg_exec_free: after and after2 are read where the
     * worker wrote them, and so is before of an input the call left unchanged (bit i of
     * views: before[i] is such a view, not a copy of its own). */
    struct kg_seg *seg;
    uint32_t views;
    int64_t guard_bad[KG_MAX_ARGS];   /* guard bytes changed (0: intact) */
    int64_t guard_first[KG_MAX_ARGS]; /* byte offset from the data start of the first one */
    int64_t guard_last[KG_MAX_ARGS];
    /* the first KG_GUARD_SHOWN changed guard bytes of each tensor: offset from the data start, value */
    int64_t guard_off[KG_MAX_ARGS][KG_GUARD_SHOWN];
    uint8_t guard_val[KG_MAX_ARGS][KG_GUARD_SHOWN];
    uint8_t guard_byte; /* what the guards held before the call */
    enum kg_fill fill;  /* how the outputs were prefilled */
    /* not run: an earlier run of this kernel instance crashed or hung (x->msg says where) */
    bool not_rerun;
    /* KG_RUN_PAIR: for how long the two launches ran at once and the shorter one's length
     * (seconds), measured as pair_clock says (enum kg_pair_clock; 0: not measured) */
    double pair_overlap, pair_shorter;
    int pair_clock;
    /* KG_RUN_DIGEST (a backend with KG_CAP_DIGEST): the outputs stayed in the worker; after[i] of
     * an output has no data, and digest[i] and prefilled[i] are the worker's (struct kg_reply) */
    bool digested;
    uint64_t digest[KG_MAX_ARGS];
    int64_t prefilled[KG_MAX_ARGS];
    /* digest[] and prefilled[] are set (KG_RUN_DIGEST, or KG_RUN_DIGEST_ALSO with the outputs) */
    bool has_digest;
    /* kg_exec_judged took its judgement from an earlier run with the same output bytes */
    bool judged_by_digest;
};

void kg_exec_free(struct kg_exec *x);
/* Whether runs a and b, both digested, gave the same digest for every output of case k (their
 * outputs bit-identical, but with a chance of about 2^-64 per output). */
bool kg_exec_digests_equal(const struct kg_case *k, const struct kg_exec *a, const struct kg_exec *b);
/* Whether element q of output i still holds the run's prefill after the call (never written);
 * false for a garbage prefill the worker drew itself (backend worker_fills_outputs: unknown here). */
bool kg_exec_kept_prefill(const struct kg_exec *x, int i, int64_t q);
/* Calls fn(ctx, arg, q) for each output element q of contract arg `arg` whose bits differ between
 * runs a and b of case k (their `after`), in order, until fn returns false; whole outputs are
 * compared first, at memory speed. Returns how many elements fn was called for. */
int64_t kg_exec_bits_differ(const struct kg_case *k, const struct kg_exec *a, const struct kg_exec *b,
                            bool (*fn)(void *ctx, int arg, int64_t q), void *ctx);
/* The first output element whose bits differ between runs a and b (kg_exec_bits_differ's order):
 * its arg and index (untouched when none differs). Returns how many differ, or with first_only 1
 * at the first (0: the outputs are equal). */
int64_t kg_exec_first_diff(const struct kg_case *k, const struct kg_exec *a, const struct kg_exec *b, bool first_only,
                           int *arg, int64_t *idx);

/* How many times the oracle's own change at an element under ulp-nudged inputs a legitimate fp32
 * kernel may err by there, where that is more than the threshold (kg_check_case): a stable algorithm on
 * ill-conditioned inputs (LayerNorm over a row of nearly equal values) errs by 0.5-1.5x that;
 * fp16 or TF32 arithmetic, a one-pass variance, by 25x or far more. */
#define KG_SENS_K 4.0

struct kg_expect {
    int nout;
    int arg[KG_OP_MAX_IO];                /* contract arg index of each oracle output */
    struct kg_tensor exact[KG_OP_MAX_IO]; /* fp64 oracle */
    struct kg_tensor alt[KG_OP_MAX_IO];   /* a second legitimate fp64 algorithm, when the op has one
                                             (data NULL otherwise): the nonfinite gate accepts
                                             either's NaN/Inf pattern */
    struct kg_tensor ref[KG_OP_MAX_IO];   /* working-precision reference, rounded to the dtype */
    double scale[KG_OP_MAX_IO];
    double ref_err[KG_OP_MAX_IO];   /* error of ref vs exact (compare.h's measure) */
    double threshold[KG_OP_MAX_IO]; /* k * ref_err + floor(dtype) */
    double floor[KG_OP_MAX_IO];     /* floor(dtype), 0 for exact-match outputs */
    double sens_err[KG_OP_MAX_IO];  /* where the output errs most, the oracle's own change (compare.h's
                                       measure) when the fp32 inputs move by an ulp: measured only to
                                       judge a failure again (kg_check_case; 0: not measured) */
    bool int_out;
    /* no values: the kernel is not run on this case again (kg_case_fault), so its oracle was not
     * computed; kg_judge fails any run judged against it */
    bool not_run;
    /* set when the tensors are the session memo's (kg_session_expect): read only, and
     * kg_expect_free gives them back (counts *holds down) instead of freeing them */
    int *holds;
    /* set when exact and ref are views of the oracle's own segment of the case (a backend
     * whose oracle lends them, KG_CAP_ORACLE_LENDS), given back with them */
    struct kg_seg *seg;
    /* Nonzero when exact and ref stay in the oracle worker, on its device (the torch backend):
     * their data is NULL here; scale, ref_err and threshold are set. kg_judge compares a run
     * there; kg_expect_values fetches them (into fetched, this copy's own) for code that reads
     * them. The owner (not a lent copy) forgets them with drop when freed. */
    struct kg_resident {
        uint64_t id;
        uint64_t bytes; /* what they take there */
        int gen;        /* the oracle worker's restarts when they were kept: a new worker has none */
        struct kg_session *s;
        void (*drop)(struct kg_session *s, uint64_t id);
    } resident;
    struct kg_seg *fetched;
};

void kg_expect_free(struct kg_expect *x);

struct kg_judgement {
    bool pass;
    int worst;     /* index into expect's outputs of the worst one */
    double margin; /* max over outputs of err / threshold (> 1: fail) */
    double ratio;  /* err / ref_err of the worst output (inf when ref_err is 0 and err > 0) */
    struct kg_cmp cmp[KG_OP_MAX_IO];
    /* elements of each output that still hold kgate's sentinel prefill bit for bit (only for
     * pure outputs prefilled with a sentinel), and whether the worst element is one of them */
    int64_t unwritten[KG_OP_MAX_IO];
    bool worst_unwritten;
    /* passed only with each element over the threshold allowed KG_SENS_K x the oracle's own
     * change there under ulp-nudged inputs (kg_check_case) */
    bool conditioned;
    /* outputs the working-precision reference itself lost (kg_reference_lost), compared in cmp but
     * judged neither way, and how many */
    bool lost[KG_OP_MAX_IO];
    int nlost;
};

#endif
