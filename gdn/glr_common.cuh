/* glr_common.cuh: what the GLR-family CUDA kernels (glr_fwd.cuh, glr_bwd.cuh) share: the family
 * traits, the shared-memory layouts, a deterministic block-level matrix product with causal
 * ranges, and the chunk stages both directions run (load + gate cumsum, the UT transform, v_new,
 * the state update). Device code only (compiles under nvcc and NVRTC); the math of every stage is
 * gdn/chunk_host_impl.h's, which is the specification, stage for stage.
 *
 * Conventions. One CTA of GLR_THREADS threads owns one (batch, head) -- in the forward also one
 * V-tile -- and walks its chunks in order. Inside a chunk, rows i, j index steps (0..L-1, L <= 64),
 * c a key channel, v a value channel. Every product sums its terms one after another in a fixed
 * order inside one thread and every output element has exactly one writer, so results are bitwise
 * reproducible; there are no atomics. Causal structure is imposed by SELECTION (a term outside
 * the causal range is never added) rather than by multiplying with a 0 mask, so a NaN at step t
 * cannot reach rows before t. Every exponential is exp of a gate-cumsum DIFFERENCE G_i - G_j
 * (j <= i), G_last - G_j or G_i, never of a large positive number. Stage functions do not end
 * with a barrier: the kernel bodies place every __syncthreads() where a result is consumed. */
#ifndef GDN_GLR_COMMON_CUH
#define GDN_GLR_COMMON_CUH

#ifdef GLR_HOST_EMU
#include "glr_emu.h" /* host emulation of the CUDA built-ins, for testing without a GPU */
#else
#include <cuda_bf16.h>
#endif

#define GLR_C       64  /* chunk length */
#define GLR_CP      65  /* row stride of C x C tiles (odd: column walks hit distinct banks) */
#define GLR_BV      32  /* forward V-tile width */
#define GLR_BVP     33  /* its row stride */
#define GLR_THREADS 256 /* threads per CTA, both directions */
#define GLR_KMAX    128 /* largest K and V supported */

/* Members: the values of enum gdn_family (gdn/oracle.h); libgdn.cu static_asserts it. */
#define GLR_LINEAR 0
#define GLR_GLA    1
#define GLR_SSD    2
#define GLR_GDN    3
#define GLR_KDA    4

#define GLR_GATE_NONE    0
#define GLR_GATE_HEAD    1
#define GLR_GATE_CHANNEL 2

__host__ __device__ constexpr int glr_gate_kind(int f)
{
    return (f == GLR_GLA || f == GLR_KDA)   ? GLR_GATE_CHANNEL
           : (f == GLR_SSD || f == GLR_GDN) ? GLR_GATE_HEAD
                                            : GLR_GATE_NONE;
}

__host__ __device__ constexpr bool glr_has_delta(int f)
{
    return f == GLR_GDN || f == GLR_KDA;
}

/* Row stride of C x K tiles: K rounded up to odd (no bank conflicts when walking a column). */
__host__ __device__ constexpr int glr_kp(int K)
{
    return 2 * (K / 2) + 1;
}

__host__ __device__ constexpr int glr_imax(int a, int b)
{
    return a > b ? a : b;
}

__host__ __device__ constexpr int glr_imin(int a, int b)
{
    return a < b ? a : b;
}

// ---- shared-memory layouts --------------------------------------------------------------------

/* Offsets in floats into the dynamic shared memory; -1: not used by this member/direction.
 *   q, k   C x KP   the chunk's q and k in fp32
 *   x      C x KP   per-stage temporary: b k Gamma, q Gamma, k exp(G_last - G), solve scratch
 *   g      C x KP   channel gates: cumsum G;  C: head gates: cumsum G
 *   eh     C x CP   head gates: exp(G_i - G_j), j <= i
 *   m      C x CP   M_ij = sum_c k_ic k_jc exp(G_ic - G_jc) (delta); forward: then P
 *   a      C x CP   A = (I + diag(b) StrictLower(M))^-1 (delta)
 *   w      C x KP   forward, delta: W = A diag(b) (K * Gamma)
 *   vn, h  C x BVP, K x BVP   forward: v_new and the state, for the CTA's V-tile
 *   p, da, y   C x CP   backward: P then dP; dA then dTm then dM; Y = dA A^T
 *   b, db  C        backward: b; the db accumulator.  dgl K: dG_last extra;  row C: row sums */
struct GlrLayout {
    int q, k, x, g, eh, m, a, w, vn, h, p, da, y, b, db, dgl, row, total;
};

__host__ __device__ inline GlrLayout glr_layout(int fam, int K, bool bwd)
{
    const int kp = glr_kp(K), ck = GLR_C * kp, cc = GLR_C * GLR_CP, gk = glr_gate_kind(fam);
    const bool d = glr_has_delta(fam);
    GlrLayout l;
    int o = 0;
    l.q = o, o += ck;
    l.k = o, o += ck;
    l.x = o, o += glr_imax(ck, 16 * GLR_CP); /* the solve's 16 x 64 scratch lives here too */
    l.g = gk == GLR_GATE_NONE ? -1 : o, o += gk == GLR_GATE_CHANNEL ? ck : gk == GLR_GATE_HEAD ? GLR_C : 0;
    l.eh = gk == GLR_GATE_HEAD ? o : -1, o += gk == GLR_GATE_HEAD ? cc : 0;
    l.w = l.vn = l.h = l.p = l.da = l.y = l.db = l.dgl = l.row = -1;
    if (!bwd) {
        l.m = o, o += cc;
        l.a = d ? o : -1, o += d ? cc : 0;
        l.w = d ? o : -1, o += d ? ck : 0;
        l.vn = o, o += GLR_C * GLR_BVP;
        l.h = o, o += K * GLR_BVP;
        l.b = d ? o : -1, o += d ? GLR_C : 0;
    } else {
        l.p = o, o += cc;
        l.m = d ? o : -1, o += d ? cc : 0;
        l.a = d ? o : -1, o += d ? cc : 0;
        l.da = d ? o : -1, o += d ? cc : 0;
        l.y = d ? o : -1, o += d ? cc : 0;
        l.b = d ? o : -1, o += d ? GLR_C : 0;
        l.db = d ? o : -1, o += d ? GLR_C : 0;
        l.dgl = o, o += K;
        l.row = o, o += GLR_C;
    }
    l.total = o;
    return l;
}

/* Dynamic shared memory in bytes that the forward / backward entry needs (<= 227 KiB for every
 * member at K = 128; the launch must opt in above 48 KiB). */
__host__ __device__ inline unsigned glr_smem_bytes(int fam, int K, bool bwd)
{
    return 4u * (unsigned)glr_layout(fam, K, bwd).total;
}

/* Backward global workspace per (batch, head), in floats: the states h[0..N-1] entering each
 * chunk, dh, and the chunk temporaries v_new, dv_new (C x V) and W, dW, dq, dk, dG (C x K). */
__host__ __device__ inline long long glr_bwd_ws_floats(long long T, int K, int V)
{
    const long long N = (T + GLR_C - 1) / GLR_C;
    return (N + 1) * K * V + 2LL * GLR_C * V + 5LL * GLR_C * K;
}

// ---- scalars ----------------------------------------------------------------------------------

__device__ __forceinline__ float glr_f(float x)
{
    return x;
}

__device__ __forceinline__ float glr_f(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

template <class Tin> __device__ __forceinline__ Tin glr_to(float x);

template <> __device__ __forceinline__ float glr_to<float>(float x)
{
    return x;
}

template <> __device__ __forceinline__ __nv_bfloat16 glr_to<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}

#ifdef GLR_HOST_EMU
#define GLR_SMEM (glr_emu_smem())
#else
extern __shared__ __align__(16) float glr_smem_[];
#define GLR_SMEM glr_smem_

/* Bytes of dynamic shared memory this launch provided. */
__device__ __forceinline__ unsigned glr_dyn_smem_bytes()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
    return r;
}
#endif

/* A kernel launched outside what it supports stops with an error (a trap is reported as a
 * launch failure) instead of writing garbage or out of bounds. */
__device__ __forceinline__ void glr_require(bool ok)
{
    if (!ok) __trap();
}

// ---- the block-level product ------------------------------------------------------------------

struct GlrRange {
    int lo, hi;
};

__device__ __forceinline__ GlrRange glr_rg(int lo, int hi)
{
    GlrRange r;
    r.lo = lo, r.hi = hi;
    return r;
}

/* out(m, n) = sum_{k in rg(m,n)} la(m, k) lb(k, n) [* wf(m, n, k)] for m < M, n < N, passed
 * to st(m, n, value). The whole block calls it; each thread owns a TM x TN micro-tile (rows
 * strided by 16, columns by 16, so neighbouring threads touch neighbouring columns) and sums
 * k in increasing order: a fixed order, so the result is reproducible bit for bit. A term
 * outside the element's range is computed from the shared loads but never added (selection),
 * so a NaN outside the causal range cannot leak in; la and lb must be readable for every k in
 * the union of the ranges of the rows / columns they are asked about. */
template <int TM, int TN, bool WGT, class LA, class LB, class RG, class WF, class ST>
__device__ __forceinline__ void glr_mm(int M, int N, const LA &la, const LB &lb, const RG &rg, const WF &wf,
                                       const ST &st)
{
    constexpr int GN = 16, GM = GLR_THREADS / GN;
    const int tm = (int)threadIdx.x / GN, tn = (int)threadIdx.x % GN;
    for (int mb = 0; mb < M; mb += GM * TM)
        for (int nb = 0; nb < N; nb += GN * TN) {
            float acc[TM][TN];
            int lo[TM][TN], hi[TM][TN];
            int klo = 1 << 30, khi = 0;
#pragma unroll
            for (int r = 0; r < TM; ++r)
#pragma unroll
                for (int c = 0; c < TN; ++c) {
                    const int m = mb + tm + r * GM, n = nb + tn + c * GN;
                    acc[r][c] = 0.f;
                    lo[r][c] = hi[r][c] = 0;
                    if (m < M && n < N) {
                        const GlrRange q = rg(m, n);
                        lo[r][c] = q.lo, hi[r][c] = q.hi;
                        if (q.lo < q.hi) klo = glr_imin(klo, q.lo), khi = glr_imax(khi, q.hi);
                    }
                }
            for (int k = klo; k < khi; ++k) {
                float a[TM], b[TN];
#pragma unroll
                for (int r = 0; r < TM; ++r) {
                    const int m = mb + tm + r * GM;
                    a[r] = m < M ? la(m, k) : 0.f;
                }
#pragma unroll
                for (int c = 0; c < TN; ++c) {
                    const int n = nb + tn + c * GN;
                    b[c] = n < N ? lb(k, n) : 0.f;
                }
#pragma unroll
                for (int r = 0; r < TM; ++r)
#pragma unroll
                    for (int c = 0; c < TN; ++c)
                        if (k >= lo[r][c] && k < hi[r][c]) {
                            float p = a[r] * b[c];
                            if constexpr (WGT) p *= wf(mb + tm + r * GM, nb + tn + c * GN, k);
                            acc[r][c] += p;
                        }
            }
#pragma unroll
            for (int r = 0; r < TM; ++r)
#pragma unroll
                for (int c = 0; c < TN; ++c) {
                    const int m = mb + tm + r * GM, n = nb + tn + c * GN;
                    if (m < M && n < N) st(m, n, acc[r][c]);
                }
        }
}

/* The unweighted form's placeholder weight. */
struct GlrNoWeight {
    __device__ float operator()(int, int, int) const
    {
        return 1.f;
    }
};

// ---- one chunk of one (batch, head) -----------------------------------------------------------

/* Global inputs at (batch, t = 0, head) and their per-step strides (elements). */
template <class Tin> struct GlrIO {
    const Tin *q, *k, *v, *b, *dO;
    const float *g;
    long long sqk, sv, ss, sg;
};

template <int F, class Tin> struct GlrChunk {
    static constexpr int GK = glr_gate_kind(F);
    static constexpr bool DELTA = glr_has_delta(F);
    int K, kp, L, t0;
    float scale;
    GlrIO<Tin> io;
    float *sq, *sk, *sx, *sg, *seh, *sm, *sa, *sb;
    float *w; /* W: shared memory (forward) or the global workspace (backward) */
    int wst;  /* its row stride */

    /* G_ic, the chunk-local inclusive cumsum of the log gate (a head gate broadcast over c). */
    __device__ __forceinline__ float G(int i, int c) const
    {
        if constexpr (GK == GLR_GATE_CHANNEL)
            return sg[i * kp + c];
        else if constexpr (GK == GLR_GATE_HEAD)
            return sg[i];
        else
            return 0.f;
    }
    /* Gamma_ic = exp(G_ic) <= 1. */
    __device__ __forceinline__ float gam(int i, int c) const
    {
        if constexpr (GK == GLR_GATE_NONE)
            return 1.f;
        else
            return expf(G(i, c));
    }
    /* exp(G_ic - G_jc) for j <= i, computed from the difference. */
    __device__ __forceinline__ float decay(int i, int j, int c) const
    {
        if constexpr (GK == GLR_GATE_NONE)
            return 1.f;
        else
            return expf(G(i, c) - G(j, c));
    }
    /* The per-channel weight inside E-weighted products (channel gates only). */
    __device__ __forceinline__ float ew(int i, int j, int c) const
    {
        return expf(sg[i * kp + c] - sg[j * kp + c]);
    }
    /* The head gate's exp(G_i - G_j), precomputed for j <= i < L; 1 for other gates. */
    __device__ __forceinline__ float eh(int i, int j) const
    {
        if constexpr (GK == GLR_GATE_HEAD)
            return seh[i * GLR_CP + j];
        else
            return 1.f;
    }
    __device__ __forceinline__ float vin(int i, int col) const
    {
        return glr_f(io.v[(long long)(t0 + i) * io.sv + col]);
    }
    __device__ __forceinline__ float doin(int i, int col) const
    {
        return glr_f(io.dO[(long long)(t0 + i) * io.sv + col]);
    }
};

/* Stage 1 (chunk_local_cumsum) with the loads: k (and q) into fp32 tiles, b, and the gate's
 * inclusive cumsum G in fp32; for a head gate also exp(G_i - G_j), j <= i. Ends synchronised. */
template <int F, class Tin> __device__ void glr_load_chunk(GlrChunk<F, Tin> &ck, bool want_q)
{
    constexpr int GK = GlrChunk<F, Tin>::GK;
    const int tid = (int)threadIdx.x, L = ck.L, K = ck.K, kp = ck.kp;
    for (int e = tid; e < L * K; e += GLR_THREADS) {
        const int i = e / K, c = e - i * K;
        const long long t = ck.t0 + i;
        ck.sk[i * kp + c] = glr_f(ck.io.k[t * ck.io.sqk + c]);
        if (want_q) ck.sq[i * kp + c] = glr_f(ck.io.q[t * ck.io.sqk + c]);
        if constexpr (GK == GLR_GATE_CHANNEL) ck.sg[i * kp + c] = ck.io.g[t * ck.io.sg + c];
    }
    for (int i = tid; i < L; i += GLR_THREADS) {
        if constexpr (GK == GLR_GATE_HEAD) ck.sg[i] = ck.io.g[(long long)(ck.t0 + i) * ck.io.sg];
        if constexpr (GlrChunk<F, Tin>::DELTA) ck.sb[i] = glr_f(ck.io.b[(long long)(ck.t0 + i) * ck.io.ss]);
    }
    __syncthreads();
    /* The cumsum runs sequentially down the chunk, one thread per channel, as the host does. */
    if constexpr (GK == GLR_GATE_CHANNEL) {
        for (int c = tid; c < K; c += GLR_THREADS) {
            float run = 0.f;
            for (int i = 0; i < L; ++i) {
                run += ck.sg[i * kp + c];
                ck.sg[i * kp + c] = run;
            }
        }
        __syncthreads();
    } else if constexpr (GK == GLR_GATE_HEAD) {
        if (tid == 0) {
            float run = 0.f;
            for (int i = 0; i < L; ++i) {
                run += ck.sg[i];
                ck.sg[i] = run;
            }
        }
        __syncthreads();
        for (int e = tid; e < L * L; e += GLR_THREADS) {
            const int i = e / L, j = e - i * L;
            if (j <= i) ck.seh[i * GLR_CP + j] = expf(ck.sg[i] - ck.sg[j]);
        }
        __syncthreads();
    }
}

/* out(i, j) = sum_c X_ic Y_jc exp(G_ic - G_jc) for j < i (STRICT) or j <= i, else 0, for all
 * i, j < L (row stride CP). With X = Q, Y = K this is the intra-chunk attention P; with
 * X = Y = K it is M, whose b-scaled strict lower part is the delta rule's Tm. */
template <bool STRICT, int F, class Tin>
__device__ void glr_pair(const GlrChunk<F, Tin> &ck, const float *X, const float *Y, float *out)
{
    constexpr int GK = GlrChunk<F, Tin>::GK;
    const int kp = ck.kp, K = ck.K;
    glr_mm<4, 4, GK == GLR_GATE_CHANNEL>(
        ck.L, ck.L, [&](int i, int c) { return X[i * kp + c]; }, [&](int c, int j) { return Y[j * kp + c]; },
        [&](int i, int j) { return (STRICT ? j < i : j <= i) ? glr_rg(0, K) : glr_rg(0, 0); },
        [&](int i, int j, int c) { return ck.ew(i, j, c); },
        [&](int i, int j, float acc) {
            const bool in = STRICT ? j < i : j <= i;
            out[i * GLR_CP + j] = (GK == GLR_GATE_HEAD && in) ? acc * ck.eh(i, j) : acc;
        });
}

/* out(i, c) += / = ... : sum_{j < i (STRICT) or j <= i} Z_ij Y_jc exp(G_ic - G_jc), i < L,
 * c < K, handed to st(i, c, value). Z has row stride CP, Y stride KP. */
template <bool STRICT, int F, class Tin, class ST>
__device__ void glr_rows_e(const GlrChunk<F, Tin> &ck, const float *Z, const float *Y, const ST &st)
{
    constexpr int GK = GlrChunk<F, Tin>::GK;
    const int kp = ck.kp;
    glr_mm<4, 4, GK == GLR_GATE_CHANNEL>(
        ck.L, ck.K, [&](int i, int j) { return Z[i * GLR_CP + j] * ck.eh(i, j); },
        [&](int j, int c) { return Y[j * kp + c]; }, [&](int i, int) { return glr_rg(0, STRICT ? i : i + 1); },
        [&](int i, int c, int j) { return ck.ew(i, j, c); }, st);
}

/* out(j, c) = sum_{i > j (STRICT) or i >= j, i < L} Z_ij Y_ic exp(G_ic - G_jc), j < L, c < K. */
template <bool STRICT, int F, class Tin, class ST>
__device__ void glr_cols_e(const GlrChunk<F, Tin> &ck, const float *Z, const float *Y, const ST &st)
{
    constexpr int GK = GlrChunk<F, Tin>::GK;
    const int kp = ck.kp, L = ck.L;
    glr_mm<4, 4, GK == GLR_GATE_CHANNEL>(
        L, ck.K, [&](int j, int i) { return Z[i * GLR_CP + j] * ck.eh(i, j); },
        [&](int i, int c) { return Y[i * kp + c]; }, [&](int j, int) { return glr_rg(STRICT ? j + 1 : j, L); },
        [&](int j, int c, int i) { return ck.ew(i, j, c); }, st);
}

/* Stage 2b (solve_tril): A = (I + Tm)^-1, Tm_ij = b_i M_ij (j < i < L, else 0), into ck.sa as a
 * full C x C lower-triangular matrix. Blocked by 16: the four diagonal blocks by forward
 * substitution (one thread per column), then block row I from
 *   A_IJ = -A_II X_IJ,   X_IJ = sum_{M = J}^{I-1} Tm_IM A_MJ,
 * every sum restricted to the triangle where the factors can be non-zero (selection: the
 * entries of A above the diagonal are 0 but are never multiplied in). Rows >= L come out as
 * identity rows and are never read. Uses ck.sx as the 16 x C scratch X. Ends synchronised. */
template <int F, class Tin> __device__ void glr_solve(const GlrChunk<F, Tin> &ck)
{
    const int tid = (int)threadIdx.x, L = ck.L;
    float *A = ck.sa, *X = ck.sx;
    const float *M = ck.sm, *b = ck.sb;
    auto Tm = [&](int i, int m) { return i < L ? b[i] * M[i * GLR_CP + m] : 0.f; };
    for (int e = tid; e < GLR_C * GLR_C; e += GLR_THREADS) {
        const int i = e / GLR_C, j = e - i * GLR_C;
        if (j > i) A[i * GLR_CP + j] = 0.f;
    }
    if (tid < GLR_C) {
        const int j = tid, end = (j & ~15) + 16;
        A[j * GLR_CP + j] = 1.f;
        for (int i = j + 1; i < end; ++i) {
            float s = Tm(i, j);
            for (int m = j + 1; m < i; ++m) s += Tm(i, m) * A[m * GLR_CP + j];
            A[i * GLR_CP + j] = -s;
        }
    }
    __syncthreads();
    for (int I = 1; I < 4; ++I) {
        const int r0 = 16 * I, ncol = r0;
        for (int e = tid; e < 16 * ncol; e += GLR_THREADS) {
            const int ii = e / ncol, j = e - ii * ncol, i = r0 + ii;
            float s = 0.f;
            for (int m = j; m < r0; ++m) s += Tm(i, m) * A[m * GLR_CP + j];
            X[ii * GLR_CP + j] = s;
        }
        __syncthreads();
        for (int e = tid; e < 16 * ncol; e += GLR_THREADS) {
            const int ii = e / ncol, j = e - ii * ncol, i = r0 + ii;
            float s = 0.f;
            for (int m = r0; m <= i; ++m) s += A[i * GLR_CP + m] * X[(m - r0) * GLR_CP + j];
            A[i * GLR_CP + j] = -s;
        }
        __syncthreads();
    }
}

/* Stages 2-3 for a delta member (scaled_dot_kkt, solve_tril, recompute_w_u's W):
 * M -> ck.sm, A -> ck.sa, W = A diag(b) (K * Gamma) -> ck.w. Needs the loaded chunk; the
 * caller synchronises after (W is being written when it returns). */
template <int F, class Tin> __device__ void glr_delta_prep(const GlrChunk<F, Tin> &ck)
{
    const int tid = (int)threadIdx.x, L = ck.L, K = ck.K, kp = ck.kp;
    glr_pair<true>(ck, ck.sk, ck.sk, ck.sm);
    __syncthreads();
    glr_solve(ck);
    for (int e = tid; e < L * K; e += GLR_THREADS) {
        const int j = e / K, c = e - j * K;
        ck.sx[j * kp + c] = ck.sb[j] * ck.sk[j * kp + c] * ck.gam(j, c);
    }
    __syncthreads();
    const float *A = ck.sa, *Bk = ck.sx;
    float *W = ck.w;
    const int wst = ck.wst;
    glr_mm<4, 4, false>(
        L, K, [&](int i, int j) { return A[i * GLR_CP + j]; }, [&](int j, int c) { return Bk[j * kp + c]; },
        [&](int i, int) { return glr_rg(0, i + 1); }, GlrNoWeight(),
        [&](int i, int c, float acc) { W[i * wst + c] = acc; });
}

/* Stage 4's v_new for columns [v0, v0 + nv) of V: v_new = U - W H with U = A diag(b) V (delta;
 * one product over the concatenated inner index: K channels of -W H, then steps j <= i of U),
 * or v itself. H and vn have row strides hs and vs and are indexed from column 0 = v0. */
template <int TN, int F, class Tin>
__device__ void glr_vnew(const GlrChunk<F, Tin> &ck, const float *H, int hs, float *vn, int vs, int v0, int nv)
{
    const int L = ck.L, K = ck.K;
    if constexpr (GlrChunk<F, Tin>::DELTA) {
        const float *A = ck.sa, *W = ck.w, *b = ck.sb;
        const int wst = ck.wst;
        glr_mm<4, TN, false>(
            L, nv, [&](int i, int k) { return k < K ? -W[i * wst + k] : A[i * GLR_CP + (k - K)]; },
            [&](int k, int v) { return k < K ? H[k * hs + v] : b[k - K] * ck.vin(k - K, v0 + v); },
            [&](int i, int) { return glr_rg(0, K + i + 1); }, GlrNoWeight(),
            [&](int i, int v, float acc) { vn[i * vs + v] = acc; });
    } else {
        for (int e = (int)threadIdx.x; e < L * nv; e += GLR_THREADS) {
            const int i = e / nv, v = e - i * nv;
            vn[i * vs + v] = ck.vin(i, v0 + v);
        }
    }
}

/* ck.sx = K_j * exp(G_last - G_j): how much of step j's write survives to the chunk's end. */
template <int F, class Tin> __device__ void glr_kdecay(const GlrChunk<F, Tin> &ck)
{
    const int L = ck.L, K = ck.K, kp = ck.kp;
    for (int e = (int)threadIdx.x; e < L * K; e += GLR_THREADS) {
        const int j = e / K, c = e - j * K;
        ck.sx[j * kp + c] = ck.sk[j * kp + c] * ck.decay(L - 1, j, c);
    }
}

/* Stage 4's state update: Hout = Diag(Gamma_last) Hin + (K * exp(G_last - G))^T v_new over nv
 * columns (Kd in ck.sx). Hout may be Hin: each element is read and written by its owner only. */
template <int TN, int F, class Tin>
__device__ void glr_hupdate(const GlrChunk<F, Tin> &ck, const float *Hin, float *Hout, int hs, const float *vn, int vs,
                            int nv)
{
    const int L = ck.L, kp = ck.kp;
    const float *Kd = ck.sx;
    glr_mm<4, TN, false>(
        ck.K, nv, [&](int c, int j) { return Kd[j * kp + c]; }, [&](int j, int v) { return vn[j * vs + v]; },
        [&](int, int) { return glr_rg(0, L); }, GlrNoWeight(),
        [&](int c, int v, float acc) { Hout[c * hs + v] = ck.gam(L - 1, c) * Hin[c * hs + v] + acc; });
}

/* Fills the chunk-independent part of a GlrChunk. */
template <int F, class Tin>
__device__ void glr_chunk_init(GlrChunk<F, Tin> &ck, const GlrLayout &lay, float *sm, int K, float scale)
{
    ck.K = K, ck.kp = glr_kp(K), ck.L = 0, ck.t0 = 0, ck.scale = scale;
    ck.sq = sm + lay.q, ck.sk = sm + lay.k, ck.sx = sm + lay.x;
    ck.sg = lay.g >= 0 ? sm + lay.g : nullptr;
    ck.seh = lay.eh >= 0 ? sm + lay.eh : nullptr;
    ck.sm = lay.m >= 0 ? sm + lay.m : nullptr;
    ck.sa = lay.a >= 0 ? sm + lay.a : nullptr;
    ck.sb = lay.b >= 0 ? sm + lay.b : nullptr;
    ck.w = nullptr, ck.wst = 0;
}

/* Points ck.io at (batch bb, head h). */
template <int F, class Tin>
__device__ void glr_bind(GlrChunk<F, Tin> &ck, const Tin *q, const Tin *k, const Tin *v, const float *g, const Tin *b,
                         const Tin *dO, int bb, int h, int T, int H, int K, int V)
{
    const long long r0 = (long long)bb * T * H + h; /* row (bb, t = 0, h) */
    ck.io.q = q ? q + r0 * K : nullptr;
    ck.io.k = k + r0 * K;
    ck.io.v = v + r0 * V;
    ck.io.dO = dO ? dO + r0 * V : nullptr;
    ck.io.b = GlrChunk<F, Tin>::DELTA ? b + r0 : nullptr;
    ck.io.g = nullptr;
    if constexpr (GlrChunk<F, Tin>::GK == GLR_GATE_CHANNEL)
        ck.io.g = g + r0 * K;
    else if constexpr (GlrChunk<F, Tin>::GK == GLR_GATE_HEAD)
        ck.io.g = g + r0;
    ck.io.sqk = (long long)H * K, ck.io.sv = (long long)H * V, ck.io.ss = H;
    ck.io.sg = GlrChunk<F, Tin>::GK == GLR_GATE_CHANNEL ? (long long)H * K : (long long)H;
}

#endif
