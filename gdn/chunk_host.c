/* chunk_host.c: instantiates the chunked GLR algorithm (gdn/chunk_host_impl.h, written once over
 * a scalar type `real`) for double and for float, and holds what does not depend on the type:
 * argument checks and chunk geometry. */
#include "chunk_host.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Length of chunk n: C, except the last one which holds what is left of T. */
static int64_t chunk_len(int64_t T, int64_t C, int64_t n)
{
    int64_t left = T - n * C;
    return left < C ? left : C;
}

/* Checks what every entry point needs; the effective chunk is min(chunk, T) (>= 1) so that a
 * short sequence does not allocate C^2 for nothing. */
static int check_args(enum gdn_family f, const struct gdn_dims *d, int64_t chunk, bool have_qkv, bool have_g,
                      bool have_b, int64_t *C)
{
    if ((unsigned)f >= GDN_NFAMILIES || gdn_dims_check(d) != GDN_OK || chunk < 1 || !have_qkv) return GDN_EINVAL;
    if ((gdn_family_has_gate(f) && !have_g) || (gdn_family_has_delta(f) && !have_b)) return GDN_EINVAL;
    *C = chunk < d->T ? chunk : (d->T > 0 ? d->T : 1);
    return GDN_OK;
}

static void *alloc_elems(int64_t n, size_t size)
{
    if (n < 1) n = 1;
    if ((uint64_t)n > SIZE_MAX / size) return NULL;
    return calloc((size_t)n, size);
}

#define real      double
#define SFX(name) name##_f64
#define EXP       exp
#define IN_T      struct gdn_in
#define GRAD_T    struct gdn_grad
#include "chunk_host_impl.h"
#undef real
#undef SFX
#undef EXP
#undef IN_T
#undef GRAD_T

#define real      float
#define SFX(name) name##_f32
#define EXP       expf
#define IN_T      struct gdn_in_f32
#define GRAD_T    struct gdn_grad_f32
#include "chunk_host_impl.h"
#undef real
#undef SFX
#undef EXP
#undef IN_T
#undef GRAD_T
