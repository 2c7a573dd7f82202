/* compare.h: how far an output is from the fp64 oracle.
 *
 * Element error  e_i = |got_i - exp_i| / (|exp_i| + s),  s = RMS of the finite oracle values:
 * relative where values are large, relative to the tensor's scale where they are near zero,
 * so neither tiny outputs nor cancellations make it explode. Non-finite values must match
 * in kind (NaN, +Inf, -Inf) exactly; a mismatch is an infinite error. The tensor's error is
 * the max over elements; the threshold a gate applies is k * (same measure for the working-
 * precision reference) + floor(dtype). Every comparison here fails on NaN. */
#ifndef KG_COMPARE_H
#define KG_COMPARE_H

#include <stdbool.h>

#include "base/tensor.h"
#include "contract/inputs.h"

struct kg_cmp {
    int64_t n;
    double scale;               /* s */
    double max_err;             /* max e_i (inf on a non-finite mismatch) */
    int64_t worst;              /* index of the max (first non-finite mismatch if any); -1 when n == 0 */
    double got, exp;            /* at worst */
    double rms_rel;             /* ||got - exp|| / ||exp|| over finite pairs */
    int64_t nonfinite_mismatch; /* positions whose finiteness or kind differ */
    int64_t first_nonfinite_mismatch;
    int64_t mismatches; /* elements with e_i > 0 (exact compare, for integer outputs) */
    int64_t excused;    /* kg_compare_calibrated: non-finite where the working precision is too */
    int64_t first_excused;
};

/* RMS of the finite values of a float64 tensor (0 when there are none), its mantissa rounded
 * to 24 bits: the same in any order of summation but with a chance of about 1e-5. */
double kg_scale_of(const struct kg_tensor *exp64);

/* The error of one element (see above). */
double kg_elem_err(double got, double exp, double scale);

/* Compares got (any dtype) with exp (KG_F64, same numel) using scale s. */
void kg_compare(const struct kg_tensor *got, const struct kg_tensor *exp64, double scale, struct kg_cmp *out);

/* As kg_compare, except that an element where got and the working-precision reference ref64
 * (float64, the dtype's rounding of the same op in sequential working precision) are
 * non-finite of the same kind is no error: the working precision itself overflows (or gives
 * NaN) there, as a correct kernel at that precision must. Counted in out->excused. The
 * nonfinite gate, which is tolerance-free, uses kg_compare. */
void kg_compare_calibrated(const struct kg_tensor *got, const struct kg_tensor *exp64, const struct kg_tensor *ref64,
                           double scale, struct kg_cmp *out);

/* Per-element errors into err[numel] (for heatmaps). */
void kg_errmap(const struct kg_tensor *got, const struct kg_tensor *exp64, double scale, double *err);

/* An fp32 value with its mantissa cut to TF32's 10 bits: rounded to nearest even, or truncated
 * (tensor cores read the top 19 bits of an operand not converted first). Non-finite: as is. */
double kg_tf32(double v, bool truncate);

/* A copy of in with every fp32 tensor cut to TF32 (kg_tf32), for the oracle on the inputs a TF32
 * matmul or convolution sees; 0, or -1 out of memory (out freed). */
int kg_inputs_tf32(const struct kg_inputs *in, bool truncate, struct kg_inputs *out);

/* A copy of in with every fp32 tensor times f (a power of two: exact while in range); 0, or -1
 * out of memory (out freed). */
int kg_inputs_scaled(const struct kg_inputs *in, double f, struct kg_inputs *out);

/* A copy of in with every finite nonzero fp32 element moved up or down by one or two ulps, drawn
 * from (seed, tensor, element), or, checkerboard, by one ulp up or down as the parity of the sum
 * of its coordinates says (two neighbours along any axis move apart: a difference of two
 * inputs is never left unmoved): inputs as a backward-stable fp32 computation may as well have
 * seen them. 0, or -1 out of memory (out freed). */
int kg_inputs_ulp_nudged(const struct kg_inputs *in, uint64_t seed, bool checkerboard, struct kg_inputs *out);

/* Seconds this process has spent in kg_compare and kg_compare_calibrated (the judge is single-
 * threaded: a session's share is the difference over its life). */
double kg_compare_seconds(void);

/* Tolerance floor of a dtype: 8 units of roundoff (0 for integer dtypes). */
double kg_floor(enum kg_dtype t);

/* torch.allclose(got, ref, rtol, atol) with equal_nan=False. */
bool kg_allclose(const struct kg_tensor *got, const struct kg_tensor *ref64, double rtol, double atol,
                 int64_t *first_bad);

#endif
