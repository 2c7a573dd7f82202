/* chunk_fwd_gdn_tc.cuh: the chunk-parallel forward of GDN (gated delta rule, one log gate g and
 * one beta per (b, t, h)): bf16 inputs on tensor cores (mma.sync m16n8k16, fp32 accumulation,
 * fp32 intermediates entering them as bf16 hi + lo pairs), fp32 inputs in exact fp32 on CUDA
 * cores. Launched by gdn/libgdn_tc.cu (gdn_cuda_fwd_tc, GDN_GDN); runs on the host through
 * gdn/tc_emu.h with TC_HOST_EMU (gdn/tc_emu_check.cc).
 *
 * The math, derived from gdn/oracle.c's recurrence (decay first, then the delta correction
 * against the decayed state): S_t = a_t S_{t-1} + k_t u_t^T with u_t = beta_t (v_t - a_t S_{t-1}^T
 * k_t), a_t = exp(g_t). In chunk n (steps t0 = 64n .. t0 + L - 1), with G_i = g_t0 + .. + g_t0+i
 * (inclusive) and H the state entering it, a_i S_{i-1} = exp(G_i) H + sum_{j<i} exp(G_i - G_j) k_j
 * u_j^T, so
 *   u_i + sum_{j<i} A_ij u_j = beta_i v_i - beta_i exp(G_i) H^T k_i,
 *   A_ij = beta_i exp(G_i - G_j) (k_i . k_j)  (j < i; 0 on and above the diagonal),
 * i.e. (I + A) U = beta V - Diag(beta exp G) K H, and with T = (I + A)^{-1} (unit lower):
 *   U = U0 - W H,   W = T Diag(beta exp G) K  [64 x K],   U0 = T Diag(beta) V  [64 x V],
 *   o_i = scale [ exp(G_i) (H^T q_i) + sum_{j <= i} exp(G_i - G_j) (q_i . k_j) u_j ],
 *   H_next = exp(G_{L-1}) H + sum_j exp(G_{L-1} - G_j) k_j u_j^T:
 * SSD's output and state formulas (gdn/chunk_fwd_tc.cuh) with v replaced by u. Three kernels:
 *   1. tc_gdn_prep_*, one CTA per (chunk, b, h), all chunks in parallel: A, T by blocked forward
 *      substitution (fp32, tc_gdn_invert), W and U0 into the workspace;
 *   2. tc_gdn_state_*, one CTA per (64-column V tile, b, h), sequential over chunks with all K
 *      rows of its state tile on chip (U needs every row of H): writes H of each chunk (the
 *      workspace hs, SSD's layout), U = U0 - W H (the workspace u), then the state update;
 *   3. the outputs: gdn/chunk_fwd_tc.cuh's tc_out_bf16<true, K, true> (u as hi + lo planes) and
 *      tc_out_f32<true, K> (u in fp32), both reading u where SSD reads v.
 * Tail chunk (L < 64): rows >= L of every tile are zeros (beta_j = 0 there, so A, W, U0 vanish
 * on them) and are never written to o or u. Determinism: one writer per element, fixed orders,
 * no atomics. Precision (bf16 path): k, q, beta v are exact in bf16 hi + lo; T, W, H, U and the
 * decayed keys enter their products as hi + lo (three mma: hi hi, lo hi, hi lo). NaN: the fp32
 * path gives the oracle's NaN positions; on the tensor-core path a NaN in k_j, v_j, g_j or beta_j
 * also reaches rows i < j of its chunk (0 * NaN in T X and in P U). Supported: K, V in {64, 128,
 * 256}. */
#ifndef GDN_CHUNK_FWD_GDN_TC_CUH
#define GDN_CHUNK_FWD_GDN_TC_CUH

#include "chunk_fwd_gla_tc.cuh" /* includes chunk_fwd_tc.cuh */

/* KDA (PC = true in the kernels below): the same algebra with a gate per key channel, decay
 * first as gdn/oracle.c (S_t = (I - beta_t k_t k_t^T) Diag(a_t) S_{t-1} + beta_t k_t v_t^T).
 * With G_ic the per-channel cumsums, Diag(a_i) S_{i-1} = Diag(exp(G_i)) H + sum_{j<i}
 * Diag(exp(G_i - G_j)) k_j u_j^T, so
 *   A_ij = beta_i sum_c k_ic k_jc exp(G_ic - G_jc)  (j < i),
 *   W = T Diag(beta) (K * exp(G)),   U0 = T Diag(beta) V,   u = U0 - W H,
 *   o_i = scale [ (q_i * exp(G_i))^T H + sum_{j <= i} P_ij u_j ],  P as GLA's,
 *   H_next = Diag(exp(G_{L-1})) H + sum_j (k_j * exp(G_{L-1} - G_j)) u_j^T.
 * A is summed as GLA's P (every exponent <= 0): its diagonal 16 x 16 blocks term by term on CUDA
 * cores, the blocks below them on tensor cores with a reference row per block column; the outputs are
 * gdn/chunk_fwd_gla_tc.cuh's kernels reading u for v. K <= 128 (the chunk's gates of every
 * channel sit in shared memory). */

/* Elements of the gate array of a prep or state kernel: G [64] (GDN) or [64][K+1] (KDA). */
__host__ __device__ constexpr int tc_gdn_gates(int K, bool pc)
{
    return pc ? TC_C * (K + 1) : TC_C;
}

// ---- the workspace ----------------------------------------------------------------------------

/* Byte offsets of the workspace of one GDN call: hs (H of every chunk: SSD's layout, bf16 hi +
 * lo planes [BH][NT][2][V][K] or fp32 [BH][NT][K][V]), W ([BH][NT][2][64][K] bf16 planes or
 * [BH][NT][64][K] fp32), U0 ([BH][NT][64][V] fp32), u ([B,T,H,V]: bf16 hi then lo, or fp32).
 * Every section is a multiple of 16 bytes (K, V are multiples of 64). */
struct tc_gdn_ws {
    unsigned long long hs, w, u0, u, u_lo, total;
};

__host__ __device__ inline tc_gdn_ws tc_gdn_layout(bool bf16, long long BH, long long T, int K, int V)
{
    const unsigned long long nt = (unsigned long long)((T + TC_C - 1) / TC_C), bh = (unsigned long long)BH;
    tc_gdn_ws l;
    l.hs = 0;
    l.w = l.hs + bh * nt * K * V * 4;
    l.u0 = l.w + bh * nt * TC_C * K * 4;
    l.u = l.u0 + bh * nt * TC_C * V * 4;
    l.u_lo = l.u + (bf16 ? bh * T * V * 2 : 0);
    l.total = l.u + bh * (unsigned long long)T * V * 4;
    return l;
}

// ---- shared pieces ------------------------------------------------------------------------------

/* T = (I + A)^{-1} for the strictly lower A in sA[i * TC_F32P + j] (fp32), into sT (the same
 * layout, unit lower, zeros above), in 16 x 16 blocks: the diagonal blocks T_II by column
 * substitution (thread j < 64 walks column j of its block: T_jj = 1, T_ij = -sum_{m=j}^{i-1} A_im
 * T_mj), then the blocks below the diagonal by their distance d = I - J = 1, 2, 3 (those of one
 * distance are independent): M = sum_{K=J}^{I-1} A_IK T_KJ into the scratch sM [3][16][16], then
 * T_IJ = -T_II M, from block row I of (I + A) T = I. Every sum runs over j <= m <= i only, where
 * both factors can be nonzero (never 0 * x with an x that may be NaN), in ascending m with fp32
 * FMA. Depth ~500 dependent FMAs instead of the 2016 of a plain substitution. Ends synchronised. */
__device__ void tc_gdn_invert(const float *sA, float *sT, float *sM)
{
    const int tid = (int)threadIdx.x, nt = (int)blockDim.x;
    if (tid < TC_C) {
        const int j = tid, end = (j / 16) * 16 + 16;
        for (int i = 0; i < j; i++) sT[i * TC_F32P + j] = 0.f;
        sT[j * TC_F32P + j] = 1.f;
        for (int i = j + 1; i < end; i++) {
            float s = 0.f;
            for (int m = j; m < i; m++) s = fmaf(sA[i * TC_F32P + m], sT[m * TC_F32P + j], s);
            sT[i * TC_F32P + j] = -s;
        }
    }
    __syncthreads();
    for (int d = 1; d < 4; d++) {
        const int nb = (4 - d) * 256; /* elements of the blocks (J + d, J), J < 4 - d */
        for (int idx = tid; idx < nb; idx += nt) {
            const int J = idx / 256, I = J + d, i = 16 * I + (idx / 16) % 16, j = 16 * J + idx % 16;
            float s = 0.f;
            for (int m = j; m < 16 * I; m++) s = fmaf(sA[i * TC_F32P + m], sT[m * TC_F32P + j], s);
            sM[idx] = s;
        }
        __syncthreads();
        for (int idx = tid; idx < nb; idx += nt) {
            const int J = idx / 256, I = J + d, i = 16 * I + (idx / 16) % 16, j = 16 * J + idx % 16;
            float s = 0.f;
            for (int m = 16 * I; m <= i; m++)
                s = fmaf(sT[i * TC_F32P + m], sM[J * 256 + (m - 16 * I) * 16 + idx % 16], s);
            sT[i * TC_F32P + j] = -s;
        }
        __syncthreads();
    }
}

/* beta_j (rows j >= L: 0) of the chunk into sB[0..63]; bf16 or fp32 input. No barrier. */
template <class TB> __device__ void tc_gdn_load_beta(const TB *beta, long long at, int H, int L, float *sB)
{
    const int tid = (int)threadIdx.x;
    if (tid < TC_C) {
        float x = 0.f;
        if (tid < L) {
            if constexpr (sizeof(TB) == 2)
                x = __bfloat162float(beta[at + (long long)tid * H]);
            else
                x = beta[at + (long long)tid * H];
        }
        sB[tid] = x;
    }
}

// ---- kernel 1, bf16: A, T, W, U0 ----------------------------------------------------------------

__host__ __device__ constexpr unsigned tc_max3(unsigned a, unsigned b, unsigned c)
{
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* The two regions of tc_gdn_prep_bf16<K, false>'s shared memory that hold one thing after
 * another: the first K [64][K+8] bf16, then A [64][65] fp32, then T hi and lo [64][72] bf16; the
 * second T [64][65] fp32, then a tile of X^T hi and lo [64][72] bf16 (bytes) */
__host__ __device__ constexpr unsigned tc_gdn_prep_r1(int K)
{
    return tc_max3(TC_C * (K + 8) * 2, TC_C * TC_F32P * 4, 2 * TC_C * TC_TP * 2);
}
__host__ __device__ constexpr unsigned tc_gdn_prep_r2()
{
    return tc_max3(TC_C * TC_F32P * 4, 2 * TC_C * TC_TP * 2, 0u);
}

/* Dynamic shared memory of tc_gdn_prep_bf16<K, PC>: K [64][K+8] bf16, A and T [64][65] fp32, T
 * hi and lo, a 64-column tile of X^T hi and lo [64][72] bf16, beta, beta exp(G) [64] fp32, the
 * inversion's scratch [768] fp32, G (tc_gdn_gates). GDN (PC false) keeps them in the two regions
 * above, each thing where the one before it is dead: 40.7 KB at K = 128 instead of 91.4 KB, four
 * CTAs an SM instead of two. KDA builds A's blocks from K while its Q~, K~ planes fill the T and
 * X tiles' memory, so it keeps every piece apart. */
__host__ __device__ constexpr unsigned tc_gdn_prep_bf16_smem(int K, bool pc = false)
{
    return pc ? (unsigned)(TC_C * (K + 8) * 2 + 2 * TC_C * TC_F32P * 4 + 4 * TC_C * TC_TP * 2 + 2 * TC_C * 4 + 768 * 4 +
                           tc_gdn_gates(K, pc) * 4)
              : tc_gdn_prep_r1(K) + tc_gdn_prep_r2() + (unsigned)(2 * TC_C * 4 + 768 * 4 + tc_gdn_gates(K, pc) * 4);
}

/* grid (NT, B*H), 128 threads; warp w owns rows 16w .. 16w+15 of A and of every W / U0 tile.
 * A = K K^T on tensor cores (k is exact in bf16), scaled in fp32; T in fp32; then for each
 * 64-column tile of K and of V, X = Diag(beta exp G) K or Diag(beta) V as hi + lo and
 * W or U0 = T X with T as hi + lo, over the reduction blocks s <= w (T is lower). W goes out as
 * bf16 hi + lo planes (kernel 2's A fragments), U0 in fp32 (it is subtracted from). */
template <int K, bool PC = false>
__global__ void TC_BOUNDS(128, tc_gdn_prep_bf16_smem(K, PC))
    tc_gdn_prep_bf16(const __nv_bfloat16 *k, const __nv_bfloat16 *v, const __nv_bfloat16 *beta, const float *g,
                     __nv_bfloat16 *wsW, float *wsU0, int T, int H, int V, int NT)
{
    constexpr int LD = K + 8, LG = K + 1;
    TC_DYNAMIC_SMEM(tc_smem);
    __nv_bfloat16 *sK = reinterpret_cast<__nv_bfloat16 *>(tc_smem);
    float *sA, *sT, *sB;
    __nv_bfloat16 *sTh, *sXh;
    if constexpr (PC) {
        sA = reinterpret_cast<float *>(sK + TC_C * LD);
        sT = sA + TC_C * TC_F32P;
        sTh = reinterpret_cast<__nv_bfloat16 *>(sT + TC_C * TC_F32P);
        sXh = sTh + 2 * TC_C * TC_TP;
        sB = reinterpret_cast<float *>(sXh + 2 * TC_C * TC_TP);
    } else { /* the two regions of tc_gdn_prep_r1, tc_gdn_prep_r2 */
        sA = reinterpret_cast<float *>(tc_smem);
        sTh = reinterpret_cast<__nv_bfloat16 *>(tc_smem);
        sT = reinterpret_cast<float *>(tc_smem + tc_gdn_prep_r1(K));
        sXh = reinterpret_cast<__nv_bfloat16 *>(sT);
        sB = reinterpret_cast<float *>(tc_smem + tc_gdn_prep_r1(K) + tc_gdn_prep_r2());
    }
    __nv_bfloat16 *sTl = sTh + TC_C * TC_TP, *sXl = sXh + TC_C * TC_TP;
    float *sBG = sB + TC_C, *sM = sBG + TC_C, *sG = sM + 768;
    const int n = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;

    tc_load_rows(k + (row0 * H + h) * K, (long long)H * K, L, K, sK, LD);
    tc_gdn_load_beta(beta, row0 * H + h, H, L, sB);
    if constexpr (PC) {
        tc_gla_cumsum(g, row0 * H + h, H, K, 0, K, L, sG, LG); /* synchronises: sK, sB loaded */
        /* A_ij = beta_i sum_c k_ic k_jc exp(G_ic - G_jc) for j < i < L, else 0, in 16 x 16 blocks
         * as GLA's P (chunk_fwd_gla_tc.cuh): the diagonal blocks term by term, the blocks above
         * them zero, those below on tensor cores as (k_i exp(G_i - G_r)) . (k_j exp(G_r - G_j))
         * with r = 16 (J + 1), hi + lo, in the T and X tiles' memory (free until the inversion):
         * Q~ rows 0 .. 63 - r, K~ rows 48 .. 63, row stride LD */
        for (int idx = tid; idx < TC_C * TC_C; idx += 128) {
            const int i = idx / TC_C, j = idx % TC_C;
            if (j / 16 < i / 16) continue; /* below the diagonal blocks: the tensor cores' */
            float d = 0.f;
            if (j < i && i < L) {
                for (int c = 0; c < K; c++)
                    d = fmaf(__bfloat162float(sK[i * LD + c]) * __bfloat162float(sK[j * LD + c]),
                             expf(sG[i * LG + c] - sG[j * LG + c]), d);
                d *= sB[i];
            }
            sA[i * TC_F32P + j] = d;
        }
        static_assert(2 * (K + 8) <= 4 * TC_TP, "the Q~, K~ planes fit in sTh .. sXl");
        __nv_bfloat16 *sFh = sTh, *sFl = sTh + TC_C * LD; /* 2 x 64 x LD <= the 4 x 64 x 72 of sTh .. sXl */
        for (int J = 0; J < 3; J++) {
            const int r = 16 * (J + 1), nq = TC_C - r;
            const float *gr = sG + r * LG;
            for (int idx = tid; idx < (nq + 16) * K; idx += 128) {
                const int row = idx / K, c = idx % K;
                const int src = row < nq ? r + row : 16 * J + row - nq; /* Q~ row r + row, or K~ row */
                const float e = row < nq ? sG[src * LG + c] - gr[c] : gr[c] - sG[src * LG + c];
                const float x = __bfloat162float(sK[src * LD + c]) * expf(e);
                const int at = (row < nq ? row : 48 + row - nq) * LD + c;
                const __nv_bfloat16 hi = __float2bfloat16_rn(x);
                sFh[at] = hi;
                sFl[at] = __float2bfloat16_rn(x - __bfloat162float(hi));
            }
            __syncthreads();
            if (w < 3 - J) { /* block (I, J), I = J + 1 + w */
                float d[2][4];
                tc_block_xyt<K>(d, sFh, sFl, LD, 16 * w, sFh + 48 * LD, sFl + 48 * LD);
#pragma unroll
                for (int nh = 0; nh < 2; nh++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int i = 16 * (J + 1 + w) + gi + 8 * (e >> 1), j = 16 * J + 8 * nh + 2 * ti + (e & 1);
                        sA[i * TC_F32P + j] = i < L ? d[nh][e] * sB[i] : 0.f; /* by selection, as above */
                    }
            }
            __syncthreads(); /* the Q~, K~ tiles are rewritten next */
        }
    } else {
        tc_gate_cumsum<true>(g, row0 * H + h, H, L, sG); /* synchronises: sK, sB loaded */
        if (tid < TC_C) sBG[tid] = sB[tid] * expf(sG[tid]);
        /* A = beta_i exp(G_i - G_j) (K K^T)_ij for j < i < L, by selection (never a product with a
         * mask: a NaN in k_j stays out of the rows i <= j) */
        float p[8][4];
        tc_causal_xyt<K>(p, sK, sK, LD, w);
        __syncthreads(); /* A is written over K */
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = 16 * w + gi + 8 * (e >> 1), j = 8 * m + 2 * ti + (e & 1);
                sA[i * TC_F32P + j] = (j < i && i < L) ? p[m][e] * sB[i] * expf(sG[i] - sG[j]) : 0.f;
            }
    }
    __syncthreads();
    tc_gdn_invert(sA, sT, sM); /* synchronises */
    for (int idx = tid; idx < TC_C * TC_C; idx += 128) {
        const int i = idx / TC_C, j = idx % TC_C;
        const float x = sT[i * TC_F32P + j];
        const __nv_bfloat16 hi = __float2bfloat16_rn(x);
        sTh[i * TC_TP + j] = hi;
        sTl[i * TC_TP + j] = __float2bfloat16_rn(x - __bfloat162float(hi));
    }
    if constexpr (!PC) __syncthreads(); /* the X tiles are written over T */
    const int nk = K / TC_C, nv = V / TC_C;
    for (int ct = 0; ct < nk + nv; ct++) {
        const bool isw = ct < nk;
        const int c0 = (isw ? ct : ct - nk) * TC_C;
        if (isw && PC) /* X = Diag(beta) (K * exp(G)), per element */
            tc_load_kt_decayed(k + (row0 * H + h) * K + c0, (long long)H * K, L, TC_C, sB, sG + c0, LG, -1, sXh, sXl);
        else if (isw)
            tc_load_transposed(k + (row0 * H + h) * K + c0, (long long)H * K, L, sBG, sXh, sXl);
        else
            tc_load_transposed(v + (row0 * H + h) * V + c0, (long long)H * V, L, sB, sXh, sXl);
        __syncthreads(); /* sX (and, the first time, sTh, sTl) complete */
        float acc[8][4];
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[m][e] = 0.f;
#pragma unroll
        for (int s = 0; s < 4; s++) {
            if (s > w) continue; /* warp-uniform: T_ij = 0 for j > i */
            uint32_t a[4], al[4];
            tc_frag_a(a, sTh, TC_TP, 16 * w, 16 * s);
            tc_frag_a(al, sTl, TC_TP, 16 * w, 16 * s);
#pragma unroll
            for (int m = 0; m < 8; m++) tc_mma3(acc[m], a, al, sXh, sXl, TC_TP, 8 * m, 16 * s);
        }
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int i = 16 * w + gi + 8 * half, c = c0 + 8 * m + 2 * ti;
                const float x0 = acc[m][2 * half], x1 = acc[m][2 * half + 1];
                if (isw) {
                    uint32_t hi, lo;
                    tc_split(x0, x1, &hi, &lo);
                    __nv_bfloat16 *dst = wsW + (((long long)bh * NT + n) * 2 * TC_C + i) * K + c;
                    *reinterpret_cast<uint32_t *>(dst) = hi;
                    *reinterpret_cast<uint32_t *>(dst + (long long)TC_C * K) = lo;
                } else {
                    *reinterpret_cast<float2 *>(wsU0 + (((long long)bh * NT + n) * TC_C + i) * V + c) =
                        make_float2(x0, x1);
                }
            }
        __syncthreads(); /* sX is rewritten by the next tile */
    }
}

// ---- kernel 2, bf16: the state scan and u -------------------------------------------------------

/* Elements of each of tc_gdn_state_bf16's two big regions: W hi, lo [2][64][K+8] (H^T hi, lo is
 * the same size) or the decayed K^T hi, lo [2][K][72], whichever is larger */
__host__ __device__ constexpr int tc_gdn_state_region(int K)
{
    return 2 * TC_C * (K + 8) > 2 * K * TC_TP ? 2 * TC_C * (K + 8) : 2 * K * TC_TP;
}

/* Bytes of tc_gdn_state_bf16<K>'s shared memory: the two regions; U^T hi, lo [64][72]; with
 * kstage, the next chunk's k as loaded [64][K+8]; the decay weights [64]; G (tc_gdn_gates).
 * H^T's lo plane is staged for hs; the lo halves of W, K^T and U^T are read only where the
 * products take hi + lo (LO: the backward's pass 2), unused by the forward's (tc_mma1). */
__host__ __device__ constexpr unsigned tc_gdn_state_bytes(int K, bool pc, bool kstage)
{
    return (unsigned)(2 * tc_gdn_state_region(K) * 2 + 2 * TC_C * TC_TP * 2 + (kstage ? TC_C * (K + 8) * 2 : 0) +
                      TC_C * 4 + tc_gdn_gates(K, pc) * 4);
}

/* Whether tc_gdn_state_bf16<K> copies the next chunk's k ahead into shared memory: where that
 * costs no CTA an SM (GDN K = 128, 256; KDA K = 128), not where it would (GDN K = 64: 4 -> 3) */
__host__ __device__ constexpr bool tc_gdn_state_kstage(int K, bool pc)
{
    return tc_ctas_per_sm(tc_gdn_state_bytes(K, pc, true), 2 * K) ==
           tc_ctas_per_sm(tc_gdn_state_bytes(K, pc, false), 2 * K);
}

/* Dynamic shared memory of tc_gdn_state_bf16<K> */
__host__ __device__ constexpr unsigned tc_gdn_state_bf16_smem(int K, bool pc = false)
{
    return tc_gdn_state_bytes(K, pc, tc_gdn_state_kstage(K, pc));
}

/* Starts tc_gdn_state_bf16's copies of chunk n's W planes into sW ([2][64][K+8]; without LO the
 * hi plane alone) and, GDN, of its gates into sG (tc_gate_copy); they land at the thread's next
 * wait. */
template <int K, bool PC, bool LO>
__device__ __forceinline__ void tc_gdn_state_fetch(const __nv_bfloat16 *wsW, const float *g, int n, int bh, int b,
                                                   int h, int T, int H, int NT, __nv_bfloat16 *sW, float *sG)
{
    for (int pl = 0; pl < (LO ? 2 : 1); pl++)
        tc_load_rows_async(wsW + (((long long)bh * NT + n) * 2 + pl) * TC_C * K, K, TC_C, K, sW + pl * TC_C * (K + 8),
                           K + 8);
    if constexpr (!PC) tc_gate_copy(g, ((long long)b * T + n * TC_C) * H + h, H, min(TC_C, T - n * TC_C), sG);
}

/* grid (V/64, B*H), 2K threads (K/16 warps). Warp w owns state rows 16w .. 16w+15 of all K, the
 * 64 columns of this V tile (acc[m]: columns 8m ..). Per chunk: H^T staged as hi + lo (both
 * written to hs, for the outputs kernel), U = U0 - W H over the 4 x 8 tiles of 16 x 8 (warp w:
 * row tile w % 4, a contiguous share of the column tiles) written as hi + lo to the workspace u
 * and as hi to smem, then H = exp(G_last) H + (K Diag(exp(G_last - G)))^T U. The two products
 * take their operands' bf16 hi planes alone (tc_mma1: W's hi plane is all that is copied in, the
 * decayed keys are rounded once); H stays in the fp32 accumulators. LO (the backward's pass 2,
 * gdn/chunk_bwd_gdn_tc.cuh): both products as tc_mma3 (hi hi, lo hi, hi lo) of hi + lo planes,
 * W's lo plane copied in, the decayed keys and U kept as hi + lo: H and u to ~1e-5 instead of the
 * hi planes' ~2e-3, which dg's state term gamma (H . H') and the backward's db, dg through u
 * would carry (gdn/README.md).
 * The next chunk's loads are in flight while this chunk computes (cp.async): its W planes (and,
 * GDN, its gates) from the moment U is formed, into the region that held H^T; its k (kstage)
 * from the moment this chunk's k is decayed. The two regions trade roles every chunk: H^T in
 * region n % 2, W and then the decayed K^T in the other. */
template <int K, bool PC = false, bool LO = false>
__global__ void TC_BOUNDS(2 * K, tc_gdn_state_bf16_smem(K, PC))
    tc_gdn_state_bf16(const __nv_bfloat16 *k, const float *g, const float *S0, const __nv_bfloat16 *wsW,
                      const float *wsU0, __nv_bfloat16 *hs, __nv_bfloat16 *u, __nv_bfloat16 *u_lo, float *ST, int T,
                      int H, int V, int NT)
{
    constexpr int LD = K + 8, NW = K / 16, NPG = 32 / NW; /* column tiles per warp: 8, 4, 2 */
    constexpr int RG = tc_gdn_state_region(K);
    constexpr bool KST = tc_gdn_state_kstage(K, PC);
    TC_DYNAMIC_SMEM(tc_smem);
    __nv_bfloat16 *sR = reinterpret_cast<__nv_bfloat16 *>(tc_smem); /* the two regions, RG each */
    __nv_bfloat16 *sUT = sR + 2 * RG;                               /* [2][v][j] */
    __nv_bfloat16 *sKr = sUT + 2 * TC_C * TC_TP;                    /* KST: k [j][kk] as loaded */
    float *sWt = reinterpret_cast<float *>(sKr + (KST ? TC_C * LD : 0)), *sG = sWt + TC_C;
    constexpr int LG = K + 1; /* PC: sG [64][K+1] */
    const int vt = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int r0 = 16 * w + gi;
    const int mt = w & 3, nt0 = (w >> 2) * NPG; /* this warp's U tiles */

    float acc[8][4];
#pragma unroll
    for (int m = 0; m < 8; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = r0 + (e >> 1) * 8, c = 8 * m + 2 * ti + (e & 1);
            acc[m][e] = S0 ? S0[((long long)bh * K + r) * V + vt * TC_C + c] : 0.f;
        }
    if (NT > 0) {
        tc_gdn_state_fetch<K, PC, LO>(wsW, g, 0, bh, b, h, T, H, NT, sR + RG, sG);
        if constexpr (KST)
            tc_load_rows_async(k + ((long long)b * T * H + h) * K, (long long)H * K, min(TC_C, T), K, sKr, LD);
    }
    for (int n = 0; n < NT; n++) {
        const int t0 = n * TC_C, L = min(TC_C, T - t0);
        const long long row0 = (long long)b * T + t0;
        __nv_bfloat16 *sH = sR + (n & 1) * RG;  /* [2][v][kk] */
        __nv_bfloat16 *sX = sR + (~n & 1) * RG; /* W [2][j][kk] (copied in), then K^T [2][kk][j] */
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int at = (8 * m + 2 * ti + (e & 1)) * LD + r0 + (e >> 1) * 8;
                const __nv_bfloat16 hi = __float2bfloat16_rn(acc[m][e]);
                sH[at] = hi;
                sH[TC_C * LD + at] = __float2bfloat16_rn(acc[m][e] - __bfloat162float(hi));
            }
        float decay = 1.f, d0 = 1.f, d1 = 1.f; /* GDN; KDA: per state row, r0 and r0 + 8 */
        if constexpr (PC) {
            tc_gla_cumsum(g, row0 * H + h, H, K, 0, K, L, sG, LG); /* waits, synchronises: sH, W, k there */
            d0 = expf(sG[(L - 1) * LG + r0]), d1 = expf(sG[(L - 1) * LG + r0 + 8]);
        } else {
            tc_gate_sum(L, sG); /* waits, synchronises: sH, W, k there */
            if (tid < TC_C) sWt[tid] = expf(sG[L - 1] - sG[tid]);
            decay = expf(sG[L - 1]);
        }
        for (int idx = tid; idx < 2 * TC_C * (K / 8); idx += (int)blockDim.x) {
            const int pl = idx / (TC_C * (K / 8)), r = (idx / (K / 8)) % TC_C, grp = idx % (K / 8);
            __nv_bfloat16 *dst = hs + ((((long long)bh * NT + n) * 2 + pl) * V + vt * TC_C + r) * K;
            *reinterpret_cast<uint4 *>(dst + grp * 8) =
                *reinterpret_cast<const uint4 *>(sH + pl * TC_C * LD + r * LD + grp * 8);
        }
        /* U = U0 - W H for this warp's tiles */
        float x[NPG][4];
#pragma unroll
        for (int mm = 0; mm < NPG; mm++)
#pragma unroll
            for (int e = 0; e < 4; e++) x[mm][e] = 0.f;
        for (int ks = 0; ks < K / 16; ks++) {
            uint32_t a[4];
            tc_frag_a(a, sX, LD, 16 * mt, 16 * ks);
            if constexpr (LO) {
                uint32_t al[4];
                tc_frag_a(al, sX + TC_C * LD, LD, 16 * mt, 16 * ks);
#pragma unroll
                for (int mm = 0; mm < NPG; mm++) tc_mma3(x[mm], a, al, sH, sH + TC_C * LD, LD, 8 * (nt0 + mm), 16 * ks);
            } else {
#pragma unroll
                for (int mm = 0; mm < NPG; mm++) tc_mma1(x[mm], a, sH, LD, 8 * (nt0 + mm), 16 * ks);
            }
        }
        /* every U0 load of this thread in flight before the first store (a load after a store
         * to u, which it might alias, waits for it) */
        float2 u0[NPG][2];
#pragma unroll
        for (int mm = 0; mm < NPG; mm++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int j = 16 * mt + gi + 8 * half, c = 8 * (nt0 + mm) + 2 * ti;
                u0[mm][half] =
                    *reinterpret_cast<const float2 *>(wsU0 + (((long long)bh * NT + n) * TC_C + j) * V + vt * TC_C + c);
            }
#pragma unroll
        for (int mm = 0; mm < NPG; mm++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int j = 16 * mt + gi + 8 * half, c = 8 * (nt0 + mm) + 2 * ti;
                const float y0 = u0[mm][half].x - x[mm][2 * half], y1 = u0[mm][half].y - x[mm][2 * half + 1];
                uint32_t hi, lo;
                tc_split(y0, y1, &hi, &lo);
                const __nv_bfloat16 *ph = reinterpret_cast<const __nv_bfloat16 *>(&hi);
                sUT[c * TC_TP + j] = ph[0], sUT[(c + 1) * TC_TP + j] = ph[1];
                if constexpr (LO) {
                    const __nv_bfloat16 *pl = reinterpret_cast<const __nv_bfloat16 *>(&lo);
                    sUT[TC_C * TC_TP + c * TC_TP + j] = pl[0], sUT[TC_C * TC_TP + (c + 1) * TC_TP + j] = pl[1];
                }
                if (j < L) {
                    const long long at = ((row0 + j) * H + h) * V + vt * TC_C + c;
                    *reinterpret_cast<uint32_t *>(u + at) = hi;
                    *reinterpret_cast<uint32_t *>(u_lo + at) = lo;
                }
            }
        __syncthreads(); /* W, H^T (and GDN's G) read by every warp: sX becomes K^T, sH the next W */
        if (n + 1 < NT) tc_gdn_state_fetch<K, PC, LO>(wsW, g, n + 1, bh, b, h, T, H, NT, sH, sG);
        const __nv_bfloat16 *ksrc = KST ? sKr : k + (row0 * H + h) * K;
        const long long kstride = KST ? (long long)LD : (long long)H * K;
        if constexpr (PC)
            tc_load_kt_decayed(ksrc, kstride, L, K, nullptr, sG, LG, L - 1, sX, LO ? sX + K * TC_TP : nullptr);
        else
            tc_load_kt_decayed(ksrc, kstride, L, K, sWt, nullptr, 0, 0, sX, LO ? sX + K * TC_TP : nullptr);
        __syncthreads(); /* K^T complete; KST: k read by every thread */
        if (KST && n + 1 < NT)
            tc_load_rows_async(k + ((row0 + TC_C) * H + h) * K, (long long)H * K, min(TC_C, T - t0 - TC_C), K, sKr, LD);
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[m][e] *= PC ? (e < 2 ? d0 : d1) : decay;
#pragma unroll
        for (int s = 0; s < 4; s++) {
            uint32_t a[4];
            tc_frag_a(a, sX, TC_TP, 16 * w, 16 * s);
            if constexpr (LO) {
                uint32_t al[4];
                tc_frag_a(al, sX + K * TC_TP, TC_TP, 16 * w, 16 * s);
#pragma unroll
                for (int m = 0; m < 8; m++) tc_mma3(acc[m], a, al, sUT, sUT + TC_C * TC_TP, TC_TP, 8 * m, 16 * s);
            } else {
#pragma unroll
                for (int m = 0; m < 8; m++) tc_mma1(acc[m], a, sUT, TC_TP, 8 * m, 16 * s);
            }
        }
        __syncthreads(); /* sX (the next H^T), sUT, KDA's sG are rewritten by the next chunk */
    }
    if (ST) {
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int r = r0 + half * 8, c = 8 * m + 2 * ti;
                *reinterpret_cast<float2 *>(ST + ((long long)bh * K + r) * V + vt * TC_C + c) =
                    make_float2(acc[m][2 * half], acc[m][2 * half + 1]);
            }
    }
}

// ---- kernel 1, fp32: A, T, W, U0 on CUDA cores ----------------------------------------------

/* Dynamic shared memory of tc_gdn_prep_f32<K>: K [64][K+1], A and T [64][65], a V tile [64][65],
 * G, beta, beta exp(G) [64], the inversion's scratch [768]. */
__host__ __device__ constexpr unsigned tc_gdn_prep_f32_smem(int K, bool pc = false)
{
    return (unsigned)(4 * (TC_C * (K + 1) + 3 * TC_C * TC_F32P + 2 * TC_C + 768 + tc_gdn_gates(K, pc)));
}

/* grid (NT, B*H), 256 threads; thread (tx, ty) = (tid % 16, tid / 16) owns rows ty + 16r and
 * columns tx + 16c (r, c < 4) of A and of each 64-column tile of W and U0. Sums over j <= i only
 * (W_i = sum_{j<=i} T_ij beta_j exp(G_j) k_j), so a NaN stays where the recurrence puts it. */
template <int K, bool PC = false>
__global__ void TC_BOUNDS(256, tc_gdn_prep_f32_smem(K, PC))
    tc_gdn_prep_f32(const float *k, const float *v, const float *beta, const float *g, float *wsW, float *wsU0, int T,
                    int H, int V, int NT)
{
    constexpr int LD = K + 1;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sK = reinterpret_cast<float *>(tc_smem);
    float *sA = sK + TC_C * LD, *sT = sA + TC_C * TC_F32P, *sV = sT + TC_C * TC_F32P;
    float *sB = sV + TC_C * TC_F32P, *sBG = sB + TC_C, *sM = sBG + TC_C, *sG = sM + 768;
    const int n = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;

    for (int idx = tid; idx < TC_C * K; idx += 256) {
        const int j = idx / K, c = idx % K;
        sK[j * LD + c] = j < L ? k[((row0 + j) * H + h) * K + c] : 0.f;
    }
    tc_gdn_load_beta(beta, row0 * H + h, H, L, sB);
    if constexpr (PC) {
        tc_gla_cumsum(g, row0 * H + h, H, K, 0, K, L, sG, LD); /* synchronises */
    } else {
        tc_gate_cumsum<true>(g, row0 * H + h, H, L, sG); /* synchronises */
        if (tid < TC_C) sBG[tid] = sB[tid] * expf(sG[tid]);
    }
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = ty + 16 * r;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int j = tx + 16 * c;
            float x = 0.f;
            if (j < i && i < L) {
                float d = 0.f;
                if constexpr (PC) {
                    for (int kk = 0; kk < K; kk++)
                        d = fmaf(sK[i * LD + kk] * sK[j * LD + kk], expf(sG[i * LD + kk] - sG[j * LD + kk]), d);
                    x = d * sB[i];
                } else {
                    for (int kk = 0; kk < K; kk++) d = fmaf(sK[i * LD + kk], sK[j * LD + kk], d);
                    x = d * sB[i] * expf(sG[i] - sG[j]);
                }
            }
            sA[i * TC_F32P + j] = x;
        }
    }
    __syncthreads();
    tc_gdn_invert(sA, sT, sM); /* synchronises: sBG too */
    for (int c0 = 0; c0 < K; c0 += TC_C)
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = ty + 16 * r;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int cc = c0 + tx + 16 * c;
                float x = 0.f;
                if constexpr (PC)
                    for (int j = 0; j <= i; j++)
                        x = fmaf(sT[i * TC_F32P + j], sB[j] * expf(sG[j * LD + cc]) * sK[j * LD + cc], x);
                else
                    for (int j = 0; j <= i; j++) x = fmaf(sT[i * TC_F32P + j], sBG[j] * sK[j * LD + cc], x);
                wsW[(((long long)bh * NT + n) * TC_C + i) * K + cc] = x;
            }
        }
    for (int c0 = 0; c0 < V; c0 += TC_C) {
        for (int idx = tid; idx < TC_C * TC_C; idx += 256) {
            const int j = idx / TC_C, c = idx % TC_C;
            sV[j * TC_F32P + c] = j < L ? sB[j] * v[((row0 + j) * H + h) * V + c0 + c] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = ty + 16 * r;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                float x = 0.f;
                for (int j = 0; j <= i; j++) x = fmaf(sT[i * TC_F32P + j], sV[j * TC_F32P + tx + 16 * c], x);
                wsU0[(((long long)bh * NT + n) * TC_C + i) * V + c0 + tx + 16 * c] = x;
            }
        }
        __syncthreads(); /* sV is rewritten by the next tile */
    }
}

// ---- kernel 2, fp32: the state scan and u on CUDA cores ---------------------------------------

/* Dynamic shared memory of tc_gdn_state_f32<K>: H [K][65], W then the decayed K [64][K+1], U
 * [64][65], G [64]. */
__host__ __device__ constexpr unsigned tc_gdn_state_f32_smem(int K, bool pc = false)
{
    return (unsigned)(4 * (K * TC_F32P + TC_C * (K + 1) + TC_C * TC_F32P + tc_gdn_gates(K, pc)));
}

/* grid (V/64, B*H), 256 threads; thread (tx, ty) owns state rows ty + 16r (r < K/16) and columns
 * tx + 16c (c < 4) of this V tile, and rows ty + 16r (r < 4), the same columns, of U. hs
 * [BH][NT][K][V] fp32 receives H of every chunk (tc_out_f32's layout), u [B,T,H,V] fp32 the u_j. */
template <int K, bool PC = false>
__global__ void TC_BOUNDS(256, tc_gdn_state_f32_smem(K, PC))
    tc_gdn_state_f32(const float *k, const float *g, const float *S0, const float *wsW, const float *wsU0, float *hs,
                     float *u, float *ST, int T, int H, int V, int NT)
{
    constexpr int LD = K + 1, R = K / 16;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sH = reinterpret_cast<float *>(tc_smem);
    float *sX = sH + K * TC_F32P, *sU = sX + TC_C * LD, *sG = sU + TC_C * TC_F32P;
    const int vt = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    float S[R][4];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < 4; c++)
            S[r][c] = S0 ? S0[((long long)bh * K + ty + 16 * r) * V + vt * TC_C + tx + 16 * c] : 0.f;
    for (int n = 0; n < NT; n++) {
        const int t0 = n * TC_C, L = min(TC_C, T - t0);
        const long long row0 = (long long)b * T + t0;
        float *dst = hs + (((long long)bh * NT + n) * K) * V + vt * TC_C;
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                sH[(ty + 16 * r) * TC_F32P + tx + 16 * c] = S[r][c];
                dst[(long long)(ty + 16 * r) * V + tx + 16 * c] = S[r][c];
            }
        const float *W = wsW + ((long long)bh * NT + n) * TC_C * K;
        for (int idx = tid; idx < TC_C * K; idx += 256) sX[(idx / K) * LD + idx % K] = W[idx];
        if constexpr (PC)
            tc_gla_cumsum(g, row0 * H + h, H, K, 0, K, L, sG, LD); /* synchronises */
        else
            tc_gate_cumsum<true>(g, row0 * H + h, H, L, sG); /* synchronises */
        const float glast = PC ? 0.f : sG[L - 1];
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = ty + 16 * r;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int vv = tx + 16 * c;
                float d = 0.f;
                for (int kk = 0; kk < K; kk++) d = fmaf(sX[i * LD + kk], sH[kk * TC_F32P + vv], d);
                const float x = wsU0[(((long long)bh * NT + n) * TC_C + i) * V + vt * TC_C + vv] - d;
                sU[i * TC_F32P + vv] = x;
                if (i < L) u[((row0 + i) * H + h) * V + vt * TC_C + vv] = x;
            }
        }
        __syncthreads(); /* sX becomes the decayed keys */
        for (int idx = tid; idx < TC_C * K; idx += 256) {
            const int j = idx / K, c = idx % K;
            const float ex = PC ? sG[(L - 1) * LD + c] - sG[j * LD + c] : glast - sG[j];
            sX[j * LD + c] = j < L ? k[((row0 + j) * H + h) * K + c] * expf(ex) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < R; r++) {
            const float decay = expf(PC ? sG[(L - 1) * LD + ty + 16 * r] : glast);
#pragma unroll
            for (int c = 0; c < 4; c++) {
                float x = 0.f;
                for (int j = 0; j < L; j++) x = fmaf(sX[j * LD + ty + 16 * r], sU[j * TC_F32P + tx + 16 * c], x);
                S[r][c] = fmaf(decay, S[r][c], x);
            }
        }
        __syncthreads(); /* sH, sX, sU, sG are rewritten by the next chunk */
    }
    if (ST) {
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) ST[((long long)bh * K + ty + 16 * r) * V + vt * TC_C + tx + 16 * c] = S[r][c];
    }
}

#endif
