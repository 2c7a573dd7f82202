/* kgate.h: the header installed for kernel authors. Host C kernels include it for the
 * f16 / bf16 storage types and their conversions; custom oracles (contract key `oracle:`)
 * include it for the oracle ABI. Everything here is static inline: nothing to link. */
#ifndef KGATE_H
#define KGATE_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Storage types: 16 bits each, the IEEE binary16 and bfloat16 bit patterns. */
typedef struct {
    uint16_t bits;
} kg_f16;
typedef struct {
    uint16_t bits;
} kg_bf16;

static inline float kg_bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t kg_f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float kg_bf16_to_f32(kg_bf16 h)
{
    return kg_bits_to_f32((uint32_t)h.bits << 16);
}

/* Round to nearest even; NaN stays NaN (quiet), Inf stays Inf. */
static inline kg_bf16 kg_f32_to_bf16(float f)
{
    uint32_t u = kg_f32_to_bits(f);
    kg_bf16 h;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        h.bits = (uint16_t)((u >> 16) | 0x40u);
        return h;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    h.bits = (uint16_t)(u >> 16);
    return h;
}

static inline float kg_f16_to_f32(kg_f16 h)
{
    uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
    uint32_t exp = (h.bits >> 10) & 0x1fu, man = h.bits & 0x3ffu;
    if (exp == 0x1f) return kg_bits_to_f32(sign | 0x7f800000u | (man << 13)); /* Inf, NaN */
    if (exp == 0) {                                                           /* zero, subnormal */
        float m = (float)man * (1.0f / 16777216.0f);                          /* man * 2^-24, exact */
        return sign ? -m : m;
    }
    return kg_bits_to_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* Round to nearest even, overflow to Inf, gradual underflow to subnormals. */
static inline kg_f16 kg_f32_to_f16(float f)
{
    uint32_t u = kg_f32_to_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    kg_f16 h;
    if (a > 0x7f800000u) {
        h.bits = (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
        return h;
    }
    if (a >= 0x477ff000u) {
        h.bits = (uint16_t)(sign | 0x7c00u);
        return h;
    }                      /* >= 65520: Inf */
    if (a < 0x38800000u) { /* below 2^-14 */
        /* subnormal: value * 2^24 rounded to an integer, ties to even */
        float m = kg_bits_to_f32(a) * 16777216.0f;
        uint32_t q = (uint32_t)m;
        float r = m - (float)q;
        if (r > 0.5f || (r == 0.5f && (q & 1u))) q++;
        h.bits = (uint16_t)(sign | q);
        return h;
    }
    uint32_t e = ((a >> 23) - 112u) << 10, m = (a >> 13) & 0x3ffu;
    uint32_t rest = a & 0x1fffu, v = e | m;
    if (rest > 0x1000u || (rest == 0x1000u && (v & 1u))) v++;
    h.bits = (uint16_t)(sign | v);
    return h;
}

/* ---------------------------------------------------------------------------------------
 * Oracle ABI (contract key `oracle: FUNC`, see kgate-contract(5)).
 * A custom oracle runs in its own worker process, never in the judge and never beside the
 * candidate. It receives every tensor as float64, row-major, inputs first (the `in` and
 * `inout` args in order) and outputs after (the `out` and `inout` args in order), plus the
 * values of the shape symbols. `working` is 0 for the exact fp64 oracle and 1 for the
 * working-precision reference: round every accumulation with kg_oracle_acc() so kgate can
 * calibrate tolerances (ignoring it gives a tighter, still correct, threshold). Return 0,
 * or non-zero with a message in `err` to reject the case. */
struct kg_oracle_io {
    int n_in, n_out;
    const double *const *in;
    double *const *out;
    const int64_t *const *in_dims, *const *out_dims; /* per tensor, rank entries */
    const int *in_rank, *out_rank;
    int nsym;
    const char *const *sym_names;
    const int64_t *sym_values;
    int working; /* 0: exact fp64; 1: fp32 accumulation; 2: fp64 accumulation */
    char err[256];
};

/* Value of shape symbol NAME, or -1 when the contract has no such symbol. */
static inline int64_t kg_oracle_sym(const struct kg_oracle_io *io, const char *name)
{
    for (int i = 0; i < io->nsym; i++)
        if (strcmp(io->sym_names[i], name) == 0) return io->sym_values[i];
    return -1;
}

/* Round an intermediate result as the working precision would. */
static inline double kg_oracle_acc(const struct kg_oracle_io *io, double x)
{
    return io->working == 1 ? (double)(float)x : x;
}

typedef int (*kg_oracle_fn)(struct kg_oracle_io *io);

#ifdef __cplusplus
}
#endif
#endif /* KGATE_H */
