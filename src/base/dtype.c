/* dtype.c: sizes, names and float64 conversions of the element types. f16/bf16 go through
 * float with the round-to-nearest-even conversions of kgate.h, so host kernels and the
 * judge agree bit for bit on what a rounded value is. */
#include "base/dtype.h"

#include <math.h>
#include <string.h>

#include "kgate.h"

static const struct {
    const char *name;
    size_t size;
    bool is_float;
    double eps;
} dtypes[KG_DTYPE_COUNT] = {
    [KG_F64] = {"f64", 8, true, 0x1p-53},  [KG_F32] = {"f32", 4, true, 0x1p-24}, [KG_F16] = {"f16", 2, true, 0x1p-11},
    [KG_BF16] = {"bf16", 2, true, 0x1p-8}, [KG_I32] = {"i32", 4, false, 0},      [KG_I64] = {"i64", 8, false, 0},
    [KG_U8] = {"u8", 1, false, 0},         [KG_BOOL] = {"bool", 1, false, 0},
};

size_t kg_dtype_size(enum kg_dtype t)
{
    return t < KG_DTYPE_COUNT ? dtypes[t].size : 0;
}

const char *kg_dtype_name(enum kg_dtype t)
{
    return t < KG_DTYPE_COUNT ? dtypes[t].name : "T";
}

int kg_dtype_parse(const char *s, size_t n, enum kg_dtype *out)
{
    if (n == 1 && s[0] == 'T') {
        *out = KG_DTYPE_T;
        return 0;
    }
    for (int i = 0; i < KG_DTYPE_COUNT; i++) {
        if (strlen(dtypes[i].name) == n && memcmp(dtypes[i].name, s, n) == 0) {
            *out = (enum kg_dtype)i;
            return 0;
        }
    }
    return -1;
}

bool kg_dtype_is_float(enum kg_dtype t)
{
    return t < KG_DTYPE_COUNT && dtypes[t].is_float;
}

double kg_dtype_eps(enum kg_dtype t)
{
    return t < KG_DTYPE_COUNT ? dtypes[t].eps : 0;
}

double kg_load(enum kg_dtype t, const void *base, int64_t i)
{
    switch (t) {
    case KG_F64: return ((const double *)base)[i];
    case KG_F32: return ((const float *)base)[i];
    case KG_F16: return kg_f16_to_f32(((const kg_f16 *)base)[i]);
    case KG_BF16: return kg_bf16_to_f32(((const kg_bf16 *)base)[i]);
    case KG_I32: return ((const int32_t *)base)[i];
    case KG_I64: return (double)((const int64_t *)base)[i];
    case KG_U8: return ((const uint8_t *)base)[i];
    case KG_BOOL: return ((const uint8_t *)base)[i] != 0;
    default: return NAN;
    }
}

static double clampd(double v, double lo, double hi)
{
    if (!(v == v)) return 0; /* NaN stored into an integer type: 0 */
    return v < lo ? lo : v > hi ? hi : v;
}

/* double -> float with one rounding (the C conversion rounds to nearest even). */
static float to_f32(double v)
{
    return (float)v;
}

/* double -> f16 with a single rounding: going through float first could double-round, so
 * round to f16 precision in double arithmetic when the value is in f16's normal range. */
static kg_f16 to_f16(double v)
{
    if (isfinite(v) && v != 0) {
        int ex;
        frexp(v, &ex);                                        /* v = m * 2^ex, 0.5 <= |m| < 1 */
        int shift = ex - 11 < -24 ? -24 : ex - 11;            /* keep 11 significant bits (or 2^-24 ulp) */
        double q = ldexp(nearbyint(ldexp(v, -shift)), shift); /* exact in double */
        return kg_f32_to_f16((float)q);                       /* exact now, or overflow */
    }
    return kg_f32_to_f16((float)v);
}

static kg_bf16 to_bf16(double v)
{
    if (isfinite(v) && v != 0) {
        int ex;
        frexp(v, &ex);
        int shift = ex - 8 < -133 ? -133 : ex - 8;
        double q = ldexp(nearbyint(ldexp(v, -shift)), shift);
        return kg_f32_to_bf16((float)q);
    }
    return kg_f32_to_bf16((float)v);
}

void kg_store(enum kg_dtype t, void *base, int64_t i, double v)
{
    switch (t) {
    case KG_F64: ((double *)base)[i] = v; break;
    case KG_F32: ((float *)base)[i] = to_f32(v); break;
    case KG_F16: ((kg_f16 *)base)[i] = to_f16(v); break;
    case KG_BF16: ((kg_bf16 *)base)[i] = to_bf16(v); break;
    case KG_I32: ((int32_t *)base)[i] = (int32_t)clampd(nearbyint(v), -2147483648.0, 2147483647.0); break;
    case KG_I64:
        ((int64_t *)base)[i] = (int64_t)clampd(nearbyint(v), -9223372036854775808.0, 9223372036854774784.0);
        break;
    case KG_U8: ((uint8_t *)base)[i] = (uint8_t)clampd(nearbyint(v), 0, 255); break;
    case KG_BOOL: ((uint8_t *)base)[i] = v != 0; break;
    default: break;
    }
}

double kg_round(enum kg_dtype t, double v)
{
    unsigned char tmp[8];
    kg_store(t, tmp, 0, v);
    return kg_load(t, tmp, 0);
}
