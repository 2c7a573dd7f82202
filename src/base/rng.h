/* rng.h: a counter-based generator (Philox4x32-10). Every value is a pure function of
 * (seed, stream, index), so any element of any input of any case can be regenerated
 * without generating the others, and runs are reproducible across machines. */
#ifndef KG_RNG_H
#define KG_RNG_H

#include <stdint.h>

/* Four 32-bit words for counter (stream, index) under key seed. */
void kg_philox(uint64_t seed, uint64_t stream, uint64_t index, uint32_t out[4]);

/* Uniform in [0, 1) with 53 random bits. */
double kg_rng_uniform(uint64_t seed, uint64_t stream, uint64_t index);
/* Standard normal (Box-Muller on one Philox block). */
double kg_rng_normal(uint64_t seed, uint64_t stream, uint64_t index);
/* Uniform integer in [0, n). */
uint64_t kg_rng_below(uint64_t seed, uint64_t stream, uint64_t index, uint64_t n);

#endif
