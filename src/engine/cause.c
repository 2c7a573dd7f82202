/* cause.c: the vocabulary of causes and their `kgate explain CAUSE` texts. */
#include "engine/cause.h"

#include <string.h>

static const struct kg_cause_def defs[KG_NCAUSES] = {
    [KG_CAUSE_GATE] = {"gate", "not diagnosed: the failing gate's own finding",
                       "kgate saw the failure but no diagnosis fitted it: the cause is named after the gate that\n"
                       "failed, and that gate's evidence (the worst element, its case, the replay command) is\n"
                       "what there is to go on. Run the replay command in the inspector and look at the heatmap."},
    [KG_CAUSE_NAN_SWALLOWED] =
        {"nan-swallowed", "a NaN in the input does not reach the output",
         "The oracle propagates an injected NaN to an output element, the kernel returns a number\n"
         "there. Usual code: fmaxf/fminf (they return the other operand), `x > 0 ? x : 0` (false\n"
         "for NaN), a max reduction written with `>`. The nonfinite gate shows the injected\n"
         "element next to the output it should have reached."},
    [KG_CAUSE_INF_LOST] = {"inf-lost", "an infinity became a finite number",
                           "The oracle gives +-Inf at an element, the kernel a finite value: a clamp, a saturating\n"
                           "conversion, an exp computed through a rescaled form that hides the overflow."},
    [KG_CAUSE_SPURIOUS_NONFINITE] =
        {"spurious-nonfinite", "NaN or Inf where the answer is finite",
         "The kernel produced NaN/Inf where the fp64 oracle and the working-precision\n"
         "reference are both finite: an overflow the reference avoids (softmax without the\n"
         "max shift, exp of a large value), 0/0, log of a non-positive value. A non-finite\n"
         "value the working-precision reference has too is not this failure."},
    [KG_CAUSE_UNWRITTEN_OUTPUT] = {"unwritten-output", "output elements are never written",
                                   "kgate fills every output with a sentinel before the call; after it, some\n"
                                   "elements still hold the sentinel (shown as `unwritten`). Usual code: a grid that\n"
                                   "does not cover the tail, a vectorised loop that drops the last n % 4 elements, a\n"
                                   "branch that returns early. A KernelBench candidate allocates its own outputs\n"
                                   "(torch.empty): kgate fills the caching allocator's free memory instead, and an\n"
                                   "element that follows that fill was never initialised."},
    [KG_CAUSE_NONDETERMINISTIC] = {"nondeterministic", "two runs on the same inputs give different bits",
                                   "Identical inputs, identical launch, different output bits: floating-point\n"
                                   "atomics, a race on shared or global memory, reading uninitialised memory.\n"
                                   "`replay 1 N` in the inspector diffs the recorded runs."},
    [KG_CAUSE_STALE_RESULT] = {"stale-result", "a result of an earlier call is returned again",
                               "New values in the same buffers gave the old answer, or a poisoned output\n"
                               "survived a call: the kernel caches by pointer or by shape, or skips work when a call\n"
                               "looks like a repeat."},
    [KG_CAUSE_INPUT_MUTATED] = {"input-mutated", "an input the contract declares read-only changed",
                                "After the call an `in` tensor differs from what kgate passed: the kernel uses an\n"
                                "input as scratch or writes its result in place. Declare it `inout` if that is meant."},
    [KG_CAUSE_PRIOR_CONTENTS] = {"output-depends-on-prior-contents", "the output depends on what its buffer held",
                                 "Two different prefills of the output gave two different results: the kernel\n"
                                 "accumulates into its output (`y += ...`) instead of writing it, or reads it before\n"
                                 "writing."},
    [KG_CAUSE_WRONG_STREAM] = {"wrong-stream", "the kernel does not run on the stream it is given",
                               "Launched on a side stream while the default stream is busy, or twice at once, the\n"
                               "result differs from the same kernel's own default-stream result: work on the legacy\n"
                               "default stream, a global scratch buffer shared between launches, a missing sync.\n"
                               "The determinism gate names it too when runs that differ agree once the whole device\n"
                               "is synchronised around the call (work left on a stream of the kernel's own).",
                               "placement"},
    [KG_CAUSE_SHAPE_SPECIFIC] = {"shape-specific", "right at the nominal shape, wrong at others",
                                 "The kernel passes at the shape it was written for and fails grossly at another\n"
                                 "one the contract claims: elements unwritten, non-finite values where the answer is\n"
                                 "finite, or errors of at least 0.1 of the output's scale and 100x the reference's.\n"
                                 "A hard-coded size, a tail not handled, a block size assumed to divide the problem.\n"
                                 "(A small error at another shape is a fragile algorithm's, left to the numeric\n"
                                 "gates.) `sweep SYMBOL ...` in the inspector locates the boundary."},
    [KG_CAUSE_FP16_ACCUMULATION] = {"fp16-accumulation", "a reduction accumulates in fp16",
                                    "The error grows with the reduction length as fp16's rounding does (about\n"
                                    "2^-11 per added term): the accumulator is half precision. Where kgate cannot\n"
                                    "simulate the op (a problem's Model), the mark is an overflow: on 1e3 + N(0,1)\n"
                                    "inputs a sum passes fp16's 65504 and the output is inf where the exact one is\n"
                                    "small and the fp32 reference finite. Accumulate in fp32."},
    [KG_CAUSE_BF16_ACCUMULATION] = {"bf16-accumulation", "a reduction accumulates in bf16",
                                    "The error grows with the reduction length as bf16's rounding does (about\n"
                                    "2^-8 per added term): the accumulator is bfloat16. Accumulate in fp32."},
    [KG_CAUSE_TF32] = {"tf32", "fp32 products computed in TF32 (10-bit mantissa inputs)",
                       "The error is of TF32's size (inputs rounded to 10 mantissa bits): it goes away, or all\n"
                       "but a few thresholds of it (tensor cores accumulate differently), against the oracle on\n"
                       "inputs cut to 10 bits, or when the candidate runs with TF32 off. By an fp32 contract that is a "
                       "precision violation. PyTorch\n"
                       "does the same by default for cuDNN convolutions (torch.backends.cudnn.allow_tf32 is True),\n"
                       "so a problem's own reference can fail it too. To accept TF32 on purpose, judge with\n"
                       "`--allow tf32` (or `allow: tf32` in a contract): fp32 is then held to TF32's precision."},
    [KG_CAUSE_FP16_COMPUTE] = {"fp16-compute", "fp32 data computed in fp16 (a .half() cast, autocast)",
                               "The error is that of inputs rounded to 10 mantissa bits, like TF32's, but with fp16's\n"
                               "range: with the inputs scaled by 2^16 the kernel gives inf where the oracle is finite\n"
                               "(fp16 overflows at 65504, TF32 has fp32's range). Usual code: x.half() @ w.half(),\n"
                               "torch.autocast, __half arithmetic on fp32 data. Compute in fp32 (or declare fp16)."},
    [KG_CAUSE_BF16_COMPUTE] = {"bf16-compute", "fp32 results computed in bfloat16 (a .bfloat16() cast, autocast)",
                               "Every output value is a bfloat16 number (its low 16 bits are zero) where the fp32\n"
                               "reference's are not: the result was computed or stored in bf16 and widened back.\n"
                               "The error is bf16's rounding, about 2^-9 relative. Usual code: x.bfloat16() ...\n"
                               ".float(), torch.autocast(dtype=torch.bfloat16), __nv_bfloat16 arithmetic. Compute in\n"
                               "fp32, or declare the contract bf16."},
    [KG_CAUSE_REDUCTION_ORDER] = {"reduction-order", "an algorithm that depends on the order or size of its terms",
                                  "Fine on well-scaled inputs, wrong on mixed magnitudes or cancellation: a one-pass\n"
                                  "variance (E[x^2] - E[x]^2), a softmax without the max shift, a naive sum where the\n"
                                  "terms cancel. A different but legitimate summation order is not this failure:\n"
                                  "the threshold allows the worst legitimate order."},
    [KG_CAUSE_APPROXIMATION] = {"approximation", "a fast or different formula (exp, erf, tanh...)",
                                "The error is small but systematic and does not depend on the reduction length: a\n"
                                "fast-math intrinsic (__expf), a tanh approximation of an erf GELU, a polynomial\n"
                                "that is not accurate to the dtype, or a formula that cancels where its result is\n"
                                "small next to its terms (tanh as 1 - 2/(exp(2x)+1) near 0, exp(x) - 1 for expm1,\n"
                                "log(1 + exp(x)) for softplus): use tanhf, expm1f, log1pf."},
    [KG_CAUSE_OOB_WRITE] = {"out-of-bounds-write", "bytes written outside the buffers",
                            "The guard bytes kgate puts around every buffer changed (offset and value are shown):\n"
                            "a missing tail check, a grid rounded up, an off-by-one in a loop bound."},
    [KG_CAUSE_OOB_READ] = {"out-of-bounds-read", "reads outside the buffers change the result",
                           "Changing only the guard bytes around an input changed the output: the kernel reads\n"
                           "past the end of a buffer (a vector load that runs over, a halo not clamped)."},
    [KG_CAUSE_LAUNCH_LIMIT] = {"launch-limit", "a launch the device refuses at a shape the contract claims",
                               "At a claimed shape the launch configuration exceeds a device limit (grid.y/z >\n"
                               "65535, more than 1024 threads, too much shared memory): the launch fails."},
    [KG_CAUSE_INDEX_OVERFLOW] = {"index-overflow", "32-bit index arithmetic past 2^31 elements",
                                 "Past 2^31 elements, `int i = blockIdx.x * blockDim.x + threadIdx.x` wraps: the\n"
                                 "elements beyond are wrong or unwritten. Index with 64-bit integers. A crash is\n"
                                 "only blamed on this when the kernel runs just below 2^31 and no gate saw it write\n"
                                 "out of bounds."},
    [KG_CAUSE_CRASH] = {"crash", "the kernel's process died",
                        "The worker running the kernel died (a signal, an illegal address, a sticky CUDA error).\n"
                        "The report gives the signal and, for host kernels built with debug info, the faulting\n"
                        "address and source line. Other gates do not run the kernel on the same kind of case\n"
                        "again."},
    [KG_CAUSE_HANG] = {"hang", "the kernel did not finish within --timeout",
                       "The call did not return within --timeout: an infinite loop, a barrier not every thread\n"
                       "reaches, a spin on a flag nobody sets. It is timed out once; other gates do not run it\n"
                       "again."},
    [KG_CAUSE_OUT_OF_MEMORY] = {"out-of-memory", "the worker died at its memory limit",
                                "The kernel's worker reached its memory limit (--memory) and died: an allocation\n"
                                "storm, a leak per call, a size computed wrong."},
    [KG_CAUSE_DECOY] = {"decoy", "the candidate calls the reference instead of computing",
                        "The KernelBench candidate's result follows the problem's reference even when the\n"
                        "reference is swapped: it calls the reference (or PyTorch's op) instead of its own kernel."},
};

const struct kg_cause_def *kg_cause_def(enum kg_cause c)
{
    return c > KG_CAUSE_NONE && c < KG_NCAUSES ? &defs[c] : NULL;
}

enum kg_cause kg_cause_find(const char *id)
{
    for (int c = KG_CAUSE_GATE; c < KG_NCAUSES; c++)
        if (!strcmp(defs[c].id, id)) return (enum kg_cause)c;
    return KG_CAUSE_NONE;
}
