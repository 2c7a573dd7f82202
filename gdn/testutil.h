/* testutil.h: what the gdn test and benchmark programs share (C and CUDA C++): a seeded
 * generator for test inputs, relative error measures, and the error-checking macros of the
 * programs that call CUDA and libgdn. Test code only; nothing here is in libgdn. */
#ifndef GDN_TESTUTIL_H
#define GDN_TESTUTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* splitmix64: a small, seedable, platform-independent generator for test inputs */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static inline double rng_unif(uint64_t *s)
{
    return ((double)(rng_next(s) >> 11) + 0.5) * 0x1p-53;
}

static inline double rng_normal(uint64_t *s)
{
    double u1 = rng_unif(s), u2 = rng_unif(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* max|got - ref| / max|ref|, NaN-propagating. */
static inline double rel_max(const double *got, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(got[i] - ref[i]);
        if (isnan(e)) return NAN;
        num = e > num ? e : num;
        den = fabs(ref[i]) > den ? fabs(ref[i]) : den;
    }
    return den > 0 ? num / den : num;
}

/* sqrt(sum (got - ref)^2 / sum ref^2), NaN-propagating. */
static inline double rel_rms(const double *got, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += (got[i] - ref[i]) * (got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* sqrt(sum (got - ref)^2 / sum ref^2); INFINITY when got holds a NaN or Inf (then it cannot pass
 * a bar; an unwritten element, prefilled with NaN, stays NaN). */
static inline double rel_rms_finite(const double *got, const double *ref, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(got[i])) return INFINITY;
    return rel_rms(got, ref, n);
}

/* fp32 to bf16 bits, rounded to nearest even (finite inputs), and back. */
static inline uint16_t bf16_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline float bf16_val(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#ifdef __CUDACC__
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "libgdn.h"

/* Every CUDA and libgdn call of a test program is checked; the message names file and line. */
#define CUDA_CHECK(call)                                                                                               \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

#define GDN_CHECK(call)                                                                                                \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        if (rc_ != 0) {                                                                                                \
            fprintf(stderr, "%s:%d: %s: %s %s\n", __FILE__, __LINE__, #call, gdn_cuda_strerror(rc_),                   \
                    gdn_cuda_last_error());                                                                            \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* Median over `iters` event-timed runs of fn (after `warm` untimed ones), in milliseconds. */
template <class Fn> static double time_ms(Fn fn, int warm, int iters, cudaStream_t s)
{
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    for (int i = 0; i < warm; i++) fn();
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> t(iters);
    for (int i = 0; i < iters; i++) {
        CUDA_CHECK(cudaEventRecord(a, s));
        fn();
        CUDA_CHECK(cudaEventRecord(b, s));
        CUDA_CHECK(cudaEventSynchronize(b));
        CUDA_CHECK(cudaEventElapsedTime(&t[i], a, b));
    }
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
}
#endif

#endif
