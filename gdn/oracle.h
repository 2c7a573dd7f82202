/* oracle.h: the gated-linear-recurrence (GLR) family -- linear attention, GLA, SSD (Mamba-2),
 * GDN (gated delta net), KDA (Kimi delta attention) -- evaluated step by step in fp64, with the
 * analytic backward (a reverse recurrence carrying dS). This is what kgate judges gdn kernels
 * against; gdn/chunk_host.h holds the chunked algorithm the GPU kernels implement.
 *
 * The recurrence, per batch b and head h (S_t is K x V, a_t = exp(g_t)):
 *   non-delta members:  S_t = Diag(a_t) S_{t-1} + k_t v_t^T
 *   delta members:      S' = Diag(a_t) S_{t-1};  S_t = S' + b_t k_t (v_t - S'^T k_t)^T
 *   output:             o_t = scale * S_t^T q_t
 * The delta members decay FIRST and correct against the decayed state, as flash-linear-attention
 * does (see gdn/README.md); for a scalar gate this equals (I - b k k^T) Diag(a) S + b k v^T
 * with either order.
 *
 * Layout (flash-linear-attention's), all row-major contiguous:
 *   q, k [B,T,H,K];  v, o [B,T,H,V];  g [B,T,H] (SSD, GDN) or [B,T,H,K] (GLA, KDA), natural-log
 *   gates (a = exp(g)), NULL for LINEAR;  b [B,T,H] for GDN/KDA, NULL otherwise;
 *   S0, ST [B,H,K,V] (initial / final state, both optional).
 * Gradients have the shape of their input. dg for a scalar (per-head) gate is the sum over K of
 * the per-channel gradients. Ownership: every pointer is the caller's; nothing is retained.
 *
 * Arithmetic (the same code, parameterised by a rounding helper):
 *   GDN_EXACT  fp64 with Neumaier-compensated dot products: the answer kernels are judged by;
 *   GDN_W32    every intermediate rounded to fp32 ((double)(float)x after each op, inputs and
 *              scale included) and every sum accumulated sequentially in fp32: the least
 *              accurate legitimate fp32 evaluation, whose distance to GDN_EXACT calibrates
 *              tolerances for fp32/bf16/fp16 kernels;
 *   GDN_W64    plain sequential fp64 (the same floor for fp64 kernels).
 * The values mirror enum kg_arith in src/oracle/oracle.h (EXACT, W32, W64). */
#ifndef GDN_ORACLE_H
#define GDN_ORACLE_H

#include <stdbool.h>
#include <stdint.h>

enum gdn_family { GDN_LINEAR, GDN_GLA, GDN_SSD, GDN_GDN, GDN_KDA };
#define GDN_NFAMILIES 5

/* How a member gates its state: not at all, one scalar per (b,t,h), or one per key channel. */
enum gdn_gate { GDN_GATE_NONE, GDN_GATE_HEAD, GDN_GATE_CHANNEL };

enum gdn_arith { GDN_EXACT, GDN_W32, GDN_W64 };

/* Return codes: 0 or one of these (negative). */
enum gdn_status { GDN_OK = 0, GDN_EINVAL = -1, GDN_ENOMEM = -2 };

struct gdn_dims {
    int64_t B, T, H, K, V;
};

/* The forward inputs. g is NULL for GDN_LINEAR (and ignored there), b is NULL for the
 * non-delta members (ignored there); S0 is optional for all (NULL: zero state). */
struct gdn_in {
    const double *q, *k, *v, *g, *b, *S0;
};

/* Where the backward writes. dq, dk, dv are required; dg, db and dS0 may be NULL to skip them
 * (dg and db are never written for members without a gate / delta term). */
struct gdn_grad {
    double *dq, *dk, *dv, *dg, *db, *dS0;
};

/* ---- the family ----------------------------------------------------------------------- */

/* "linear", "gla", "ssd", "gdn", "kda" (case-insensitive), plus the aliases "linear_attn",
 * "simple_gla" and "mamba2" (= ssd), "gated_delta" (= gdn). Returns 0, or -1 if unknown. */
int gdn_family_parse(const char *name, enum gdn_family *out);
/* The canonical lower-case name; "?" for a value out of range. */
const char *gdn_family_name(enum gdn_family f);
enum gdn_gate gdn_family_gate(enum gdn_family f);
bool gdn_family_per_channel(enum gdn_family f); /* gate is [B,T,H,K] */
bool gdn_family_has_gate(enum gdn_family f);
bool gdn_family_has_delta(enum gdn_family f); /* uses b [B,T,H] */

/* The shape of g: fills shape[0..rank-1] and returns the rank (0 when the member has no g,
 * 3 for [B,T,H], 4 for [B,T,H,K]). */
int gdn_g_shape(enum gdn_family f, const struct gdn_dims *d, int64_t shape[4]);

/* 0 when every dim is >= 1 (T may be 0) and every tensor's element count fits in int64. */
int gdn_dims_check(const struct gdn_dims *d);

/* 1/sqrt(K). Every entry point also takes a NAN scale to mean this default. */
double gdn_default_scale(const struct gdn_dims *d);

const char *gdn_strerror(int rc);

/* ---- the recurrence ------------------------------------------------------------------- */

/* o = the outputs [B,T,H,V]; ST (nullable) = the final states. Returns 0 or GDN_E*. */
int gdn_oracle_fwd(enum gdn_family f, enum gdn_arith a, const struct gdn_dims *d, double scale, const struct gdn_in *in,
                   double *o, double *ST);

/* The gradients of L = sum(dO * o) + sum(dST * ST) (dST nullable: zero) with respect to every
 * input, by a reverse recurrence in the same arithmetic. The states are re-computed from
 * checkpoints every ~sqrt(T) steps, so memory is O((sqrt(T)) K V), not O(T K V). */
int gdn_oracle_bwd(enum gdn_family f, enum gdn_arith a, const struct gdn_dims *d, double scale, const struct gdn_in *in,
                   const double *dO, const double *dST, const struct gdn_grad *out);

/* ---- SSD from Mamba-2 ------------------------------------------------------------------ */

/* Mamba-2's selective state space model, one group (B and C shared by nothing: per head):
 *   h_t = exp(dt_t A) h_{t-1} + dt_t B_t x_t^T    (h is N x P),   y_t = C_t^T h_t + D x_t
 * with x [B,T,H,P], dt [B,T,H] (already softplus'ed, > 0), A [H] (< 0), Bm and C [B,T,H,N],
 * D [H], maps onto GDN_SSD with dims {B, T, H, K = N, V = P} and scale = 1 as
 *   q = C,  k = Bm,  v = dt * x,  g = dt * A   (dt goes into v, not k);
 * then y = o + D x (gdn_ssd_skip). q, k [B,T,H,N], v [B,T,H,P], g [B,T,H] are written. */
int gdn_ssd_from_mamba2(const struct gdn_dims *d, const double *x, const double *dt, const double *A, const double *Bm,
                        const double *C, double *q, double *k, double *v, double *g);

/* y += D[h] * x over [B,T,H,P] (d->V = P): the skip connection, turning o into Mamba-2's y. */
int gdn_ssd_skip(const struct gdn_dims *d, const double *x, const double *D, double *y);

#endif
