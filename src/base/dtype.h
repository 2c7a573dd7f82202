/* dtype.h: the element types a contract can declare, their sizes and names, and exact
 * conversions between stored elements and float64 (round to nearest even on the way in).
 * Every comparison in kgate goes through float64 values obtained here. */
#ifndef KG_DTYPE_H
#define KG_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kg_dtype {
    KG_F64,
    KG_F32,
    KG_F16,
    KG_BF16,
    KG_I32,
    KG_I64,
    KG_U8,
    KG_BOOL,
    KG_DTYPE_COUNT,
    KG_DTYPE_T = KG_DTYPE_COUNT /* `T` in args: the instance dtype of a `dtypes:` contract */
};

size_t kg_dtype_size(enum kg_dtype t);
const char *kg_dtype_name(enum kg_dtype t);
/* Parses a dtype name of length n ("f32", "bf16", "T"...); -1 when unknown. */
int kg_dtype_parse(const char *s, size_t n, enum kg_dtype *out);
bool kg_dtype_is_float(enum kg_dtype t);
/* Unit roundoff u of a floating dtype (2^-24 for f32); 0 for integer types. */
double kg_dtype_eps(enum kg_dtype t);

/* Element i of an array of dtype t, as float64 (exact for every dtype but i64 > 2^53). */
double kg_load(enum kg_dtype t, const void *base, int64_t i);
/* Stores v into element i, rounding to nearest even (integers: round, then saturate). */
void kg_store(enum kg_dtype t, void *base, int64_t i, double v);
/* v rounded to the precision of t, as float64. */
double kg_round(enum kg_dtype t, double v);

#endif
