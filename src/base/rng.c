/* rng.c: Philox4x32-10 (Salmon et al., SC'11) and the distributions drawn from it. */
#include "base/rng.h"

#include <math.h>

void kg_philox(uint64_t seed, uint64_t stream, uint64_t index, uint32_t out[4])
{
    uint32_t c0 = (uint32_t)index, c1 = (uint32_t)(index >> 32), c2 = (uint32_t)stream, c3 = (uint32_t)(stream >> 32);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* 21 high bits and 32 low bits: a uniform double in [0, 1) with 53 random bits. */
static double u53(uint32_t hi, uint32_t lo)
{
    return (double)(((uint64_t)(hi & 0x1fffffu) << 32) | lo) * 0x1p-53;
}

double kg_rng_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint32_t w[4];
    kg_philox(seed, stream, index, w);
    return u53(w[0], w[1]);
}

double kg_rng_normal(uint64_t seed, uint64_t stream, uint64_t index)
{
    uint32_t w[4];
    kg_philox(seed, stream, index, w);
    double u1 = u53(w[0], w[1]), u2 = u53(w[2], w[3]);
    if (u1 <= 0) u1 = 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t kg_rng_below(uint64_t seed, uint64_t stream, uint64_t index, uint64_t n)
{
    uint32_t w[4];
    kg_philox(seed, stream, index, w);
    uint64_t v = ((uint64_t)w[0] << 32) | w[1];
    return n ? v % n : 0;
}
