/* cause.h: the fixed vocabulary of causes a failure is diagnosed as. A gate that fails names the
 * cause it diagnosed (kg_verdict.cause); where no diagnosis fits, the cause is KG_CAUSE_GATE and
 * the gate's own id stands for it. After the gates ran, kg_group_causes() marks each later
 * failure whose cause an earlier gate already showed (kg_verdict.same_as), so one defect is
 * reported once. Nothing here knows a runner. */
#ifndef KG_CAUSE_H
#define KG_CAUSE_H

enum kg_cause {
    KG_CAUSE_NONE,               /* no failure, or not diagnosed yet */
    KG_CAUSE_GATE,               /* undiagnosed: the gate's own id is the cause */
    KG_CAUSE_NAN_SWALLOWED,      /* an injected NaN did not reach the output */
    KG_CAUSE_INF_LOST,           /* an injected or expected Inf became finite */
    KG_CAUSE_SPURIOUS_NONFINITE, /* NaN/Inf where the oracle (and the working-precision ref) is finite */
    KG_CAUSE_UNWRITTEN_OUTPUT,   /* output elements keep kgate's prefill */
    KG_CAUSE_NONDETERMINISTIC,   /* two runs on the same inputs differ */
    KG_CAUSE_STALE_RESULT,       /* a result of an earlier call is returned again */
    KG_CAUSE_INPUT_MUTATED,      /* an input changed that the contract says is read-only */
    KG_CAUSE_PRIOR_CONTENTS,     /* the output depends on what the output buffer held */
    KG_CAUSE_WRONG_STREAM,       /* work on another stream than the one given */
    KG_CAUSE_SHAPE_SPECIFIC,     /* right at the nominal shape, wrong at others */
    KG_CAUSE_FP16_ACCUMULATION,  /* a reduction accumulated in fp16 */
    KG_CAUSE_BF16_ACCUMULATION,  /* a reduction accumulated in bf16 */
    KG_CAUSE_TF32,               /* fp32 products with TF32's 10-bit mantissa inputs */
    KG_CAUSE_FP16_COMPUTE,       /* fp32 data computed in fp16: 10-bit mantissa and fp16's +-65504 range */
    KG_CAUSE_BF16_COMPUTE,       /* fp32 results computed or stored in bfloat16 */
    KG_CAUSE_REDUCTION_ORDER,    /* an order-sensitive algorithm (one-pass variance, no max-shift...) */
    KG_CAUSE_APPROXIMATION,      /* a fast-math or different formula (exp, erf, tanh) */
    KG_CAUSE_OOB_WRITE,          /* bytes written outside the buffers */
    KG_CAUSE_OOB_READ,           /* reads outside the buffers change the result */
    KG_CAUSE_LAUNCH_LIMIT,       /* a launch the device refuses at a claimed shape */
    KG_CAUSE_INDEX_OVERFLOW,     /* 32-bit indexing past 2^31 elements */
    KG_CAUSE_CRASH,              /* the kernel's process died (signal, sticky CUDA error) */
    KG_CAUSE_HANG,               /* the kernel did not finish within --timeout */
    KG_CAUSE_OUT_OF_MEMORY,      /* the worker died at its memory limit */
    KG_CAUSE_DECOY,              /* the candidate calls the reference instead of computing */
    KG_NCAUSES
};

struct kg_cause_def {
    const char *id;      /* "tf32", as in JSON and `kgate explain CAUSE` */
    const char *title;   /* one line, in a kernel engineer's words */
    const char *explain; /* what it is, how kgate diagnoses it, what to do */
    /* The gate whose own question the cause answers, where an earlier gate can meet the same
     * defect only by chance (a race that shows under load): when the home gate shows the cause
     * too, it owns it, so the report does not change owner with the machine's load. NULL: the
     * first gate that shows the cause owns it. */
    const char *home;
};

/* The definition of cause c (NULL for KG_CAUSE_NONE and out of range). */
const struct kg_cause_def *kg_cause_def(enum kg_cause c);
/* The cause whose id is id, or KG_CAUSE_NONE. */
enum kg_cause kg_cause_find(const char *id);

#endif
