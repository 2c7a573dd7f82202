/* chunk_host.h: the chunked algorithm for the GLR family on the host, forward and backward, in
 * fp64 and fp32 -- the readable specification the GPU kernels implement, stage for stage (see
 * gdn/README.md for the math of each stage). Same layout and semantics as gdn/oracle.h. */
#ifndef GDN_CHUNK_HOST_H
#define GDN_CHUNK_HOST_H

#include <stdint.h>

#include "oracle.h"

#define GDN_CHUNK_DEFAULT 64

/* fp32 twins of struct gdn_in / struct gdn_grad (oracle.h), same NULL rules. */
struct gdn_in_f32 {
    const float *q, *k, *v, *g, *b, *S0;
};

struct gdn_grad_f32 {
    float *dq, *dk, *dv, *dg, *db, *dS0;
};

/* chunk: the chunk length C (>= 1; GDN_CHUNK_DEFAULT as the kernels use; T need not be a
 * multiple). scale: NAN means 1/sqrt(K). The fp32 entry points take fp32 tensors and do every
 * operation, accumulation and stored intermediate (states h, v_new, A, W, U) in fp32, as an fp32
 * GPU kernel would. Return 0 or a GDN_E* code (gdn_strerror); outputs are fully written on 0.
 * Memory is O(T (K + V) + (T / C) K V + C^2) per call (one (b,h) at a time). */
int gdn_chunk_fwd_f64(enum gdn_family f, const struct gdn_dims *d, int64_t chunk, double scale, const struct gdn_in *in,
                      double *o, double *ST);
int gdn_chunk_bwd_f64(enum gdn_family f, const struct gdn_dims *d, int64_t chunk, double scale, const struct gdn_in *in,
                      const double *dO, const double *dST, const struct gdn_grad *out);
int gdn_chunk_fwd_f32(enum gdn_family f, const struct gdn_dims *d, int64_t chunk, float scale,
                      const struct gdn_in_f32 *in, float *o, float *ST);
int gdn_chunk_bwd_f32(enum gdn_family f, const struct gdn_dims *d, int64_t chunk, float scale,
                      const struct gdn_in_f32 *in, const float *dO, const float *dST, const struct gdn_grad_f32 *out);

#endif
