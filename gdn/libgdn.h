/* libgdn.h: C ABI of the GLR-family CUDA kernels (linear attention, GLA, SSD, GDN, KDA): chunked
 * forward and backward on device pointers, fp32 or bf16 inputs with fp32 accumulation, chunk 64,
 * deterministic (bitwise-identical results for identical inputs). The kernels are the ones kgate
 * judges through gdn/<member>_{fwd,bwd}.cu; layout and semantics are gdn/oracle.h's.
 *
 * Layout, all row-major contiguous, on the device: q, k [B,T,H,K] and v, o, dO [B,T,H,V] in the
 * call's dtype; g [B,T,H] (SSD, GDN) or [B,T,H,K] (GLA, KDA), fp32, natural-log gates (<= 0 for a
 * decay), NULL for linear attention; b [B,T,H] in the call's dtype (GDN, KDA), NULL otherwise;
 * S0, ST, dST, dS0 [B,H,K,V] fp32. Gradients: dq, dk, dv in the call's dtype; dg (shape of g),
 * db [B,T,H] fp32. Supported: 1 <= K, V <= 128, T >= 0, B, H <= 65535; sm_90 (H100/H200) only.
 *
 * Every call is asynchronous on `stream` (a cudaStream_t; NULL: the legacy default stream) and
 * returns 0 or a negative code (gdn_cuda_strerror). Ownership: every pointer is the caller's;
 * nothing is retained after the call returns. Thread-safe; the error detail is per thread. */
#ifndef GDN_LIBGDN_H
#define GDN_LIBGDN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "oracle.h" /* enum gdn_family, struct gdn_dims, GDN_OK / GDN_EINVAL */

enum gdn_dtype { GDN_DTYPE_F32 = 0, GDN_DTYPE_BF16 = 1 };

/* Codes beyond oracle.h's enum gdn_status. */
enum gdn_cuda_status {
    GDN_ECUDA = -100,        /* a CUDA call failed: gdn_cuda_last_error() says which and where */
    GDN_EUNSUPPORTED = -101, /* valid, but outside what the kernels support (K or V > 128, ...) */
    GDN_EWORKSPACE = -102,   /* workspace NULL or smaller than gdn_cuda_bwd_workspace() */
};

/* Device inputs. q, k, v, b point at elements of the call's dtype. */
struct gdn_dev_in {
    const void *q, *k, *v;
    const float *g;  /* NULL for GDN_LINEAR (ignored there) */
    const void *b;   /* GDN_GDN / GDN_KDA only (ignored otherwise) */
    const float *S0; /* nullable: zero initial state */
};

/* Device gradients. dq, dk, dv are required (when T > 0); dg, db, dS0 may be NULL to skip. */
struct gdn_dev_grad {
    void *dq, *dk, *dv;
    float *dg, *db, *dS0;
};

/* 0 when the kernels support (f, d), else GDN_EINVAL / GDN_EUNSUPPORTED. */
int gdn_cuda_supported(enum gdn_family f, const struct gdn_dims *d);

/* Workspace bytes the backward needs (the forward needs none); 0 for unsupported dims. */
size_t gdn_cuda_bwd_workspace(enum gdn_family f, const struct gdn_dims *d);

/* o [B,T,H,V] (required when T > 0) and ST (nullable) from in. scale: NAN means 1/sqrt(K). */
int gdn_cuda_fwd(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d, double scale,
                 const struct gdn_dev_in *in, void *o, float *ST, void *stream);

/* The gradients of L = sum(dO * o) + sum(dST * ST) (dST nullable: zero) into out. ws: device
 * memory of at least gdn_cuda_bwd_workspace() bytes (contents irrelevant; overwritten). */
int gdn_cuda_bwd(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d, double scale,
                 const struct gdn_dev_in *in, const void *dO, const float *dST, const struct gdn_dev_grad *out,
                 void *ws, size_t ws_bytes, void *stream);

/* ---- chunk-parallel forward: every member (gdn/chunk_fwd_*tc.cuh) ---------------------------
 * The same results as gdn_cuda_fwd for all five members, computed chunk-parallel: a state scan over chunks parallel over (b, h, 64 x 64 state tiles; for GDN 64-column V tiles
 * with all K rows, after a pass over all chunks that forms the WY/UT factors W and U0), then
 * every chunk's outputs in parallel; bf16 inputs on tensor cores (mma.sync, fp32 accumulation;
 * the chunk states, the intra-chunk scores and GDN's T, W, u enter them as bf16 hi + lo pairs),
 * fp32 inputs in exact fp32 on CUDA cores (GLA's and KDA's intra-chunk scores, with a decay per key
 * channel, on CUDA cores for both). Deterministic. Supported: K, V in {64, 128, 256} (GLA, KDA:
 * K <= 128),
 * B * H <= 65535; bf16 q, k, v 16-byte aligned. Opt-in: not yet the default of gdn_cuda_fwd. */

/* 0 when gdn_cuda_fwd_tc supports (f, d), else GDN_EINVAL / GDN_EUNSUPPORTED. */
int gdn_cuda_fwd_tc_supported(enum gdn_family f, const struct gdn_dims *d);

/* Workspace bytes gdn_cuda_fwd_tc needs (ceil(T/64) states per (b, h)); 0 when unsupported. */
size_t gdn_cuda_fwd_tc_workspace(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d);

/* o [B,T,H,V] and ST (nullable) as gdn_cuda_fwd; ws: device memory of at least
 * gdn_cuda_fwd_tc_workspace() bytes, 16-byte aligned (may be NULL when that is 0). */
int gdn_cuda_fwd_tc(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d, double scale,
                    const struct gdn_dev_in *in, void *o, float *ST, void *ws, size_t ws_bytes, void *stream);

/* ---- chunk-parallel backward: linear attention, SSD, GLA, GDN, KDA (gdn/chunk_bwd_tc.cuh, ---
 * gdn/chunk_bwd_gla_tc.cuh, gdn/chunk_bwd_gdn_tc.cuh, gdn/chunk_bwd_kda_tc.cuh). The gradients of gdn_cuda_bwd, computed
 * chunk-parallel: the forward's state scan again, the reverse scan of the state gradient dH
 * (parallel over (b, h, 64 x 64 tiles), sequential over chunks), then dq, dk, dv of every chunk
 * in parallel and dg as a reverse cumsum of q . dq - k . dk (SSD) or of q * dq - k * dk per
 * channel (GLA); bf16 on tensor cores, fp32 in exact fp32 on CUDA cores. GDN (first version):
 * the WY form's passes in exact fp32 on CUDA cores for fp32 inputs, on tensor cores (bf16 inputs
 * read as they are, fp32 intermediates as bf16 hi + lo) for bf16 inputs, db too. KDA (first
 * version, emulated and run on an H100, not yet timed): every pass in exact fp32 on CUDA cores, bf16
 * inputs widened to fp32 first. Deterministic. Supported: what gdn_cuda_fwd_tc supports, for
 * GDN_LINEAR, GDN_GLA, GDN_GDN and GDN_KDA (bf16, fp32) and GDN_SSD (bf16; others: GDN_EUNSUPPORTED).
 * Opt-in, as the forward. */

/* 0 when gdn_cuda_bwd_tc supports (f, dt, d), else GDN_EINVAL / GDN_EUNSUPPORTED. */
int gdn_cuda_bwd_tc_supported(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d);

/* Workspace bytes gdn_cuda_bwd_tc needs (three sets of chunk states, ST, SSD's dots or GLA's
 * products; GDN: gdn/chunk_bwd_gdn_tc.cuh's tc_gdn_bwd_layout; KDA: gdn/chunk_bwd_kda_tc.cuh's
 * tc_kda_bwd_layout); 0 when unsupported. */
size_t gdn_cuda_bwd_tc_workspace(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d);

/* The gradients of L = sum(dO * o) + sum(dST * ST) (dST nullable) as gdn_cuda_bwd: dq, dk, dv
 * in the call's dtype (required when T > 0), dg (SSD, GLA, GDN, KDA), db (GDN, KDA) and dS0 fp32, nullable; ws: at least
 * gdn_cuda_bwd_tc_workspace() bytes, 16-byte aligned; bf16 q, k, v, dO 16-byte aligned. */
int gdn_cuda_bwd_tc(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d, double scale,
                    const struct gdn_dev_in *in, const void *dO, const float *dST, const struct gdn_dev_grad *out,
                    void *ws, size_t ws_bytes, void *stream);

/* A static description of a return code (0, GDN_E* from oracle.h or this header). */
const char *gdn_cuda_strerror(int rc);

/* "FILE:LINE: cudaCall: message" of this thread's last GDN_ECUDA, or "" if none. */
const char *gdn_cuda_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
