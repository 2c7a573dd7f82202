/* chunk_bwd_gdn_tc.cuh: the chunk-parallel backward of GDN (gated delta rule, one log gate g and
 * one beta per (b, t, h)). fp32 inputs: every pass on CUDA cores in exact fp32 (no TF32). bf16
 * inputs: passes 1-5 and pass 6's products on tensor cores (mma.sync m16n8k16, fp32
 * accumulation, fp32 operands as bf16 hi + lo, bf16 inputs as they are, read as bf16): 1 and 2
 * are the bf16 forward's own kernels (2 with its products in hi + lo, LO, where the forward
 * takes the hi planes alone), which leave W, H and u as bf16 hi + lo planes (~16 significant
 * bits, ~1e-5 relative: far inside the bf16 bar), read as such by passes 4-6; what
 * is left on CUDA cores in pass 6 is the inversion, the element-wise steps and the dg/db
 * epilogue. The gradients dq, dk, dv leave in the inputs' dtype, dg, db, dS0 in fp32. Launched
 * by gdn/libgdn_tc.cu (gdn_cuda_bwd_tc, GDN_GDN); runs on the host through gdn/tc_emu.h with
 * TC_HOST_EMU (gdn/tc_emu_check.cc). Every pass has run on a GPU (an H100: test_gdn_tc's 184
 * configurations pass, the last of them pass 6's bf16 kernel, tc_gdn_bwy_bf16, at two CTAs an
 * SM, on 2026-12-06), but bf16's passes 2 and 4 as they are now: their next chunk's loads in
 * flight (2026-12-06) are emulated and ptxas-checked only; see gdn/README.md for the times and
 * the cards.
 *
 * The math, from gdn/oracle.c's reverse recurrence and gdn/chunk_host_impl.h's stages 6-10, in
 * chunk_fwd_gdn_tc.cuh's notation: chunk n (steps t0 .. t0 + L - 1), G_i the inclusive gate
 * cumsum in it, e_i = exp(G_i), gamma = e_{L-1}, E_ij = exp(G_i - G_j) (j <= i), H the state
 * entering it and H' = dL/dH_{n+1} the gradient of the state leaving it (H'_{NT-1} = dST);
 * A_ij = beta_i E_ij (k_i . k_j) (j < i), T = (I + A)^{-1}, W = T Diag(beta e) K, U0 = T Diag(beta)
 * V, u = U0 - W H, o_i = scale [e_i H^T q_i + sum_{j<=i} E_ij (q_i . k_j) u_j],
 * H_{n+1} = gamma H + sum_j exp(G_{L-1} - G_j) k_j u_j^T. Backward, per chunk:
 *   du_j  = scale sum_{i >= j} E_ij (q_i . k_j) dO_i  +  exp(G_{L-1} - G_j) H' ^T k_j       (dL/du)
 *   dH    = gamma H' + scale sum_i e_i q_i dO_i^T - W^T du                 (the state entering)
 * (the first term of du is chunk-local; the rest makes the reverse scan). With u held fixed
 * (stage 8) and dP_ij = scale E_ij (dO_i . u_j) (j <= i):
 *   dq_i  = scale e_i H dO_i + sum_{j <= i} dP_ij k_j
 *   dk_j  = exp(G_{L-1} - G_j) H' u_j + sum_{i >= j} dP_ij q_i                    (+ stage 9)
 * and through u = U0 - W H (stage 9; dW = -du H^T, dA = du (Diag(beta) V)^T + dW (Diag(beta e)
 * K)^T on and below the diagonal, dTm = -T^T dA T^T strictly below it, M_ij = E_ij (k_i . k_j)):
 *   dv_j  = beta_j (T^T du)_j,    dBk = T^T dW,
 *   dk_j += beta_j e_j dBk_j + sum_{i<j} beta_j dTm_ji E_ji k_i + sum_{i>j} beta_i dTm_ij E_ij k_i,
 *   db_j  = (T^T du)_j . v_j + e_j dBk_j . k_j + sum_{i<j} dTm_ji M_ji.
 * dG_i, the gradient of G_i (scalar gate: summed over the key channels), collects every use of
 * exp(+-G): q_i . (scale e_i H dO_i) - k_i . (exp(G_{L-1} - G_i) H' u_i) + beta_i e_i k_i . dBk_i
 * + (sum over i's row minus sum over i's column of R, R_ij = dP_ij (q_i . k_j) + beta_i dTm_ij
 * M_ij), and at i = L-1 also sum_j k_j . (exp(G_{L-1} - G_j) H' u_j) + gamma (H . H'), which
 * carries every later step's dependence on this chunk's gates; so dg is the reverse cumsum of dG
 * within the chunk (chunk_bwd_gla_tc.cuh's tc_gla_dg_local argument: the cancellation stays within
 * 64 steps). Six launches:
 *   1, 2. the forward's tc_gdn_prep_f32 (W, U0) and tc_gdn_state_f32 (H of every chunk, u), for
 *      bf16 inputs tc_gdn_prep_bf16 and tc_gdn_state_bf16<K, false, true> (the forward's scan,
 *      its two products as tc_mma3: with the forward's hi planes alone H and u carry ~2e-3,
 *      which dg inherits through gamma (H . H') of a short last chunk, and db through u);
 *   3. tc_gdn_bdu_f32 (bf16: tc_gdn_bdu_bf16<K>, tensor cores), all chunks in parallel: du's
 *      local term into du;
 *   4. tc_gdn_bscan_f32 (bf16: tc_gdn_bscan_bf16<K>, tensor cores, dH in mma accumulators; KDA's
 *      backward runs both with PC, a gate per key channel), one
 *      CTA per (64-column V tile, b, h) walking the chunks backwards with the K x 64 tile of dH
 *      in registers: H' of every chunk into dh, du += the state term, dS0;
 *   5. tc_gdn_bdh_f32 (bf16: tc_gdn_bdh_bf16), one CTA per (64-row K tile, chunk, b, h): the
 *      products over V with H and H' (scale e_i H dO_i, exp(G_{L-1} - G_j) H' u_j, dW = -du H^T,
 *      the partial of H . H');
 *   6. tc_gdn_bwy_f32 (bf16: tc_gdn_bwy_bf16), one CTA per (chunk, b, h): T again, dP, dA, dTm,
 *      then dq, dk, dv, db and dg of the chunk (fp32: 207,872 B of shared memory, one CTA an SM;
 *      bf16: K K^T, Q K^T, dW K^T, dO u^T, du v^T, T^T du, Y = dA T^T, dTm = -T^T Y, P K, T^T dW,
 *      P^T Q, dM K on tensor cores, 109,824 B, two CTAs an SM). On the tensor-core path a NaN in a step's inputs or intermediates (k, q,
 *      dW, dA, ...) can also reach rows of the gradients that the causal sums leave it out of
 *      (0 * NaN in the products).
 * Deterministic: one writer per element, every sum in a fixed order, no atomics. Tail chunk:
 * rows >= L are zeros (beta 0) and never written. NaN: every sum over steps runs over its causal
 * range only (j <= i, i >= j, j < L), so the NaN positions are those of the chunked algorithm
 * (gdn_chunk_*: chunk_host_impl.h), as the sequential backward's; not yet compared position by
 * position. Supported: K, V in {64, 128, 256}. */
#ifndef GDN_CHUNK_BWD_GDN_TC_CUH
#define GDN_CHUNK_BWD_GDN_TC_CUH

#include "chunk_fwd_gdn_tc.cuh"

// ---- the workspace ----------------------------------------------------------------------------

/* Byte offsets of the backward's workspace: the forward's layout in the inputs' dtype
 * (tc_gdn_layout: hs, W, U0, u; bf16: hs, W and u as bf16 hi + lo planes, the sizes of fp32's),
 * W overwritten by dW in pass 5 (fp32 [BH][NT][64][K] either way, in W's bytes), then dh ([BH][NT][K][V], H' of every chunk), du
 * ([B,T,H,V]), dqh, dks ([B,T,H,K]: pass 5's state terms of dq and dk) and hdh ([BH][NT][K/64]:
 * the partials of H . H'). Every section a multiple of 16 bytes. */
struct tc_gdn_bws {
    tc_gdn_ws f;
    unsigned long long dh, du, dqh, dks, hdh, total;
};

__host__ __device__ inline tc_gdn_bws tc_gdn_bwd_layout(bool bf16, long long BH, long long T, int K, int V)
{
    const unsigned long long nt = (unsigned long long)((T + TC_C - 1) / TC_C), bh = (unsigned long long)BH;
    const unsigned long long rows = bh * (unsigned long long)T;
    auto up = [](unsigned long long x) { return (x + 15) / 16 * 16; };
    tc_gdn_bws l;
    l.f = tc_gdn_layout(bf16, BH, T, K, V);
    l.dh = up(l.f.total);
    l.du = l.dh + bh * nt * K * V * 4;
    l.dqh = l.du + rows * V * 4;
    l.dks = l.dqh + rows * K * 4;
    l.hdh = l.dks + rows * K * 4;
    l.total = up(l.hdh + bh * nt * (K / TC_C) * 4);
    return l;
}

// ---- shared pieces ------------------------------------------------------------------------------

/* An input element in fp32 (from bf16: exact) */
__device__ __forceinline__ float tc_gdn_get(const float *p)
{
    return *p;
}
__device__ __forceinline__ float tc_gdn_get(const __nv_bfloat16 *p)
{
    return __bfloat162float(*p);
}

/* An output element in the gradients' dtype */
__device__ __forceinline__ void tc_gdn_put(float *p, float x)
{
    *p = x;
}
__device__ __forceinline__ void tc_gdn_put(__nv_bfloat16 *p, float x)
{
    *p = __float2bfloat16_rn(x);
}

/* The 64 x 64 tile src[j * stride + c] (rows j < L, else zeros) into dst[j * TC_F32P + c], by
 * the CTA's threads; no barrier. */
__device__ __forceinline__ void tc_gdn_tile(const float *src, long long stride, int L, float *dst)
{
    for (int idx = (int)threadIdx.x; idx < TC_C * TC_C; idx += (int)blockDim.x) {
        const int j = idx / TC_C, c = idx % TC_C;
        dst[j * TC_F32P + c] = j < L ? src[j * stride + c] : 0.f;
    }
}

/* tc_gdn_tile of a matrix held as bf16 hi + lo planes (the forward's u): dst = hi + lo in fp32 */
__device__ __forceinline__ void tc_gdn_tile(const __nv_bfloat16 *hi, const __nv_bfloat16 *lo, long long stride, int L,
                                            float *dst)
{
    for (int idx = (int)threadIdx.x; idx < TC_C * TC_C; idx += (int)blockDim.x) {
        const int j = idx / TC_C, c = idx % TC_C;
        const long long at = j * stride + c;
        dst[j * TC_F32P + c] = j < L ? __bfloat162float(hi[at]) + __bfloat162float(lo[at]) : 0.f;
    }
}

// ---- pass 3: du's local term --------------------------------------------------------------------

/* Dynamic shared memory of tc_gdn_bdu_f32: q, k tiles (then dO), P [64][65]; G [64]. */
__host__ __device__ constexpr unsigned tc_gdn_bdu_f32_smem()
{
    return (unsigned)(4 * (3 * TC_C * TC_F32P + TC_C));
}

/* grid (NT, B*H), 256 threads; thread (tx, ty) = (tid % 16, tid / 16) owns rows ty + 16r and
 * columns tx + 16c (r, c < 4) of each 64 x 64 tile. P_ij = scale E_ij (q_i . k_j) for j <= i < L
 * (the dot over all K channels, then selected), then du_j = sum_{i = j}^{L-1} P_ij dO_i into du
 * [B,T,H,V] (rows j < L). */
__global__ void TC_BOUNDS(256, tc_gdn_bdu_f32_smem())
    tc_gdn_bdu_f32(const float *q, const float *k, const float *g, const float *dO, float *du, int T, int H, int K,
                   int V, float scale)
{
    TC_DYNAMIC_SMEM(tc_smem);
    float *sX = reinterpret_cast<float *>(tc_smem), *sY = sX + TC_C * TC_F32P, *sP = sY + TC_C * TC_F32P;
    float *sG = sP + TC_C * TC_F32P;
    const int n = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    tc_gate_cumsum<true>(g, row0 * H + h, H, L, sG); /* synchronises */
    float p[4][4];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) p[r][c] = 0.f;
    for (int c0 = 0; c0 < K; c0 += TC_C) {
        tc_gdn_tile(q + (row0 * H + h) * K + c0, (long long)H * K, L, sX);
        tc_gdn_tile(k + (row0 * H + h) * K + c0, (long long)H * K, L, sY);
        __syncthreads();
        for (int kk = 0; kk < TC_C; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int c = 0; c < 4; c++)
                    p[r][c] = fmaf(sX[(ty + 16 * r) * TC_F32P + kk], sY[(tx + 16 * c) * TC_F32P + kk], p[r][c]);
        __syncthreads(); /* the tiles are rewritten next */
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = ty + 16 * r, j = tx + 16 * c;
            sP[i * TC_F32P + j] = (j <= i && i < L) ? scale * p[r][c] * expf(sG[i] - sG[j]) : 0.f;
        }
    for (int c0 = 0; c0 < V; c0 += TC_C) {
        tc_gdn_tile(dO + (row0 * H + h) * V + c0, (long long)H * V, L, sX);
        __syncthreads(); /* sP (the first time) and the dO tile complete */
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int j = ty + 16 * r;
            if (j >= L) continue;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                float x = 0.f;
                for (int i = j; i < L; i++) x = fmaf(sP[i * TC_F32P + j], sX[i * TC_F32P + tx + 16 * c], x);
                du[((row0 + j) * H + h) * V + c0 + tx + 16 * c] = x;
            }
        }
        __syncthreads(); /* the dO tile is rewritten next */
    }
}

/* Dynamic shared memory of tc_gdn_bdu_bf16<K>: q, k [64][K+8], P^T hi, lo and a dO^T tile
 * [64][72] bf16; G [64]. */
__host__ __device__ constexpr unsigned tc_gdn_bdu_bf16_smem(int K)
{
    return (unsigned)(2 * TC_C * (K + 8) * 2 + 3 * TC_C * TC_TP * 2 + TC_C * 4);
}

/* Pass 3 on tensor cores (bf16 inputs): tc_gdn_bdu_f32's du. grid (NT, B*H), 128 threads; warp w
 * owns rows 16w .. 16w+15 of P = Q K^T (tc_causal_xyt: q, k exact in bf16), masked and scaled in
 * fp32 (P_ij = scale E_ij (q_i . k_j) for j <= i < L, else 0, by selection), stored as P^T in
 * bf16 hi + lo; then per 64-column V tile du = P^T dO (warp w: rows j = 16w .., the blocks i >= j
 * of P^T only), dO^T exact in bf16 as the B operand, into du [B,T,H,V] (rows j < L). */
template <int K>
__global__ void TC_BOUNDS(128, tc_gdn_bdu_bf16_smem(K))
    tc_gdn_bdu_bf16(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const float *g, const __nv_bfloat16 *dO, float *du,
                    int T, int H, int V, float scale)
{
    constexpr int LD = K + 8, CT = TC_C * TC_TP;
    TC_DYNAMIC_SMEM(tc_smem);
    __nv_bfloat16 *sQ = reinterpret_cast<__nv_bfloat16 *>(tc_smem), *sK = sQ + TC_C * LD, *sPt = sK + TC_C * LD;
    __nv_bfloat16 *sOt = sPt + 2 * CT;
    float *sG = reinterpret_cast<float *>(sOt + CT);
    const int n = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    tc_load_rows(q + (row0 * H + h) * K, (long long)H * K, L, K, sQ, LD);
    tc_load_rows(k + (row0 * H + h) * K, (long long)H * K, L, K, sK, LD);
    tc_gate_cumsum<true>(g, row0 * H + h, H, L, sG); /* synchronises: sQ, sK loaded */
    {
        float p[8][4];
        tc_causal_xyt<K>(p, sQ, sK, LD, w);
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = 16 * w + gi + 8 * (e >> 1), j = 8 * m + 2 * ti + (e & 1);
                const float x = (j <= i && i < L) ? scale * p[m][e] * expf(sG[i] - sG[j]) : 0.f;
                const __nv_bfloat16 hi = __float2bfloat16_rn(x);
                sPt[j * TC_TP + i] = hi;
                sPt[CT + j * TC_TP + i] = __float2bfloat16_rn(x - __bfloat162float(hi));
            }
    }
    for (int v0 = 0; v0 < V; v0 += TC_C) {
        tc_load_transposed(dO + (row0 * H + h) * V + v0, (long long)H * V, L, nullptr, sOt, nullptr);
        __syncthreads(); /* the dO^T tile (and, the first time, P^T) complete */
        float acc[8][4];
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[m][e] = 0.f;
#pragma unroll
        for (int s = 0; s < 4; s++) {
            if (s < w) continue; /* warp-uniform: P^T_ji = 0 for i < j */
            uint32_t a[4], al[4];
            tc_frag_a(a, sPt, TC_TP, 16 * w, 16 * s);
            tc_frag_a(al, sPt + CT, TC_TP, 16 * w, 16 * s);
#pragma unroll
            for (int m = 0; m < 8; m++) {
                uint32_t b0, b1;
                tc_frag_b(&b0, &b1, sOt, TC_TP, 8 * m, 16 * s);
                tc_mma(acc[m], a, b0, b1);
                tc_mma(acc[m], al, b0, b1);
            }
        }
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int j = 16 * w + gi + 8 * half;
                if (j < L)
                    *reinterpret_cast<float2 *>(du + ((row0 + j) * H + h) * V + v0 + 8 * m + 2 * ti) =
                        make_float2(acc[m][2 * half], acc[m][2 * half + 1]);
            }
        __syncthreads(); /* the dO^T tile is rewritten next */
    }
}

// ---- pass 4: the reverse state scan -------------------------------------------------------------

/* Dynamic shared memory of tc_gdn_bscan_f32<K, PC>: dH [K][65], the decayed keys, then q scale e,
 * then W [64][K+1], dO and du tiles [64][65], G (tc_gdn_gates: [64], KDA's [64][K+1]). */
__host__ __device__ constexpr unsigned tc_gdn_bscan_f32_smem(int K, bool pc = false)
{
    return (unsigned)(4 * (K * TC_F32P + TC_C * (K + 1) + 2 * TC_C * TC_F32P + tc_gdn_gates(K, pc)));
}

/* grid (V/64, B*H), 256 threads; thread (tx, ty) owns state rows ty + 16r (r < K/16) and columns
 * tx + 16c (c < 4) of this V tile, and rows ty + 16r (r < 4), the same columns, of du. Starting
 * from dST (or 0), for n = NT-1 .. 0: H' (the state gradient leaving chunk n) into dh
 * [BH][NT][K][V]; du_j += exp(G_{L-1} - G_j) H'^T k_j (du holds pass 3's local term; one thread
 * reads and writes each element); dH = gamma H' + scale sum_i e_i q_i dO_i^T - sum_i W_i du_i^T,
 * each sum over i < L in increasing i. Finally dS0 = dH (when given). W as the fp32 forward left
 * it: [BH][NT][64][K]. The fp32 path's pass 4 (bf16 inputs: tc_gdn_bscan_bf16<K> below). PC
 * (KDA, gdn/chunk_bwd_kda_tc.cuh): a gate per key channel, g [B,T,H,K]; the keys' weights and
 * q's scale e per element, each state row c its own decay e_{L-1,c} (as tc_gdn_state_f32<K, PC>). */
template <int K, bool PC = false>
__global__ void TC_BOUNDS(256, tc_gdn_bscan_f32_smem(K, PC))
    tc_gdn_bscan_f32(const float *q, const float *k, const float *g, const float *dO, const float *dST,
                     const float *wsW, float *dh, float *du, float *dS0, int T, int H, int V, int NT, float scale)
{
    constexpr int LD = K + 1, R = K / 16;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sH = reinterpret_cast<float *>(tc_smem);
    float *sX = sH + K * TC_F32P, *sO = sX + TC_C * LD, *sU = sO + TC_C * TC_F32P, *sG = sU + TC_C * TC_F32P;
    const int vt = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    float S[R][4];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < 4; c++)
            S[r][c] = dST ? dST[((long long)bh * K + ty + 16 * r) * V + vt * TC_C + tx + 16 * c] : 0.f;
    for (int it = 0; it < NT; it++) {
        const int n = NT - 1 - it, t0 = n * TC_C, L = min(TC_C, T - t0);
        const long long row0 = (long long)b * T + t0;
        float *dst = dh + (((long long)bh * NT + n) * K) * V + vt * TC_C;
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                sH[(ty + 16 * r) * TC_F32P + tx + 16 * c] = S[r][c];
                dst[(long long)(ty + 16 * r) * V + tx + 16 * c] = S[r][c];
            }
        if constexpr (PC)
            tc_gla_cumsum(g, row0 * H + h, H, K, 0, K, L, sG, LD); /* synchronises: sH complete */
        else
            tc_gate_cumsum<true>(g, row0 * H + h, H, L, sG); /* synchronises: sH complete */
        const float glast = PC ? 0.f : sG[L - 1];
        for (int idx = tid; idx < TC_C * K; idx += 256) {
            const int j = idx / K, c = idx % K;
            const float ex = PC ? sG[(L - 1) * LD + c] - sG[j * LD + c] : glast - sG[j];
            sX[j * LD + c] = j < L ? k[((row0 + j) * H + h) * K + c] * expf(ex) : 0.f;
        }
        tc_gdn_tile(dO + (row0 * H + h) * V + vt * TC_C, (long long)H * V, L, sO);
        __syncthreads();
        /* du = local term + (decayed K) H' */
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = ty + 16 * r;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int vv = tx + 16 * c;
                float x = 0.f;
                if (i < L) {
                    float d = 0.f;
                    for (int kk = 0; kk < K; kk++) d = fmaf(sX[i * LD + kk], sH[kk * TC_F32P + vv], d);
                    float *p = du + ((row0 + i) * H + h) * V + vt * TC_C + vv;
                    x = *p + d;
                    *p = x;
                }
                sU[i * TC_F32P + vv] = x;
            }
        }
        __syncthreads(); /* sX becomes q scale e */
        for (int idx = tid; idx < TC_C * K; idx += 256) {
            const int j = idx / K, c = idx % K;
            sX[j * LD + c] =
                j < L ? q[((row0 + j) * H + h) * K + c] * (scale * expf(PC ? sG[j * LD + c] : sG[j])) : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < R; r++) {
            const float decay = expf(PC ? sG[(L - 1) * LD + ty + 16 * r] : glast);
#pragma unroll
            for (int c = 0; c < 4; c++) {
                float x = S[r][c] * decay;
                for (int j = 0; j < L; j++) x = fmaf(sX[j * LD + ty + 16 * r], sO[j * TC_F32P + tx + 16 * c], x);
                S[r][c] = x;
            }
        }
        __syncthreads(); /* sX becomes W */
        {
            const float *W = wsW + ((long long)bh * NT + n) * TC_C * K;
            for (int idx = tid; idx < TC_C * K; idx += 256) sX[(idx / K) * LD + idx % K] = W[idx];
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                float x = 0.f;
                for (int j = 0; j < L; j++) x = fmaf(sX[j * LD + ty + 16 * r], sU[j * TC_F32P + tx + 16 * c], x);
                S[r][c] -= x;
            }
        __syncthreads(); /* sH, sX, sO, sU, sG are rewritten by the next chunk */
    }
    if (dS0) {
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) dS0[((long long)bh * K + ty + 16 * r) * V + vt * TC_C + tx + 16 * c] = S[r][c];
    }
}

/* Dynamic shared memory of tc_gdn_bscan_bf16<K>: region A, H'^T hi, lo [64][K+8] then (aliased)
 * (q scale e)^T hi, lo [K][72]; region X, the decayed keys hi, lo [64][K+8] then W^T hi, lo
 * [K][72]; -du^T hi, lo and dO^T [64][72]; the next chunk's dO as loaded [64][72]; G and the
 * weights scale e_j [64] fp32. 74,240 / 111,104 / 184,832 B at K = 64 / 128 / 256: the dO tile
 * costs no CTA an SM (3 / 2 / 1, as before it). Every product reads both planes (tc_mma3).
 * PC: G is [64][K+1], 90,624 / 143,872 B at K = 64 / 128. */
__host__ __device__ constexpr int tc_gdn_bscan_bf16_region(int K)
{
    return 2 * TC_C * (K + 8) > 2 * K * TC_TP ? 2 * TC_C * (K + 8) : 2 * K * TC_TP;
}
__host__ __device__ constexpr unsigned tc_gdn_bscan_bf16_smem(int K, bool pc = false)
{
    return (unsigned)(2 * tc_gdn_bscan_bf16_region(K) * 2 + 4 * TC_C * TC_TP * 2 + (tc_gdn_gates(K, pc) + TC_C) * 4);
}

/* Starts tc_gdn_bscan_bf16's copies of chunk n's gates into sG (tc_gate_copy; not PC: KDA's come
 * at the chunk's start) and of its dO tile (rows < L, else zeros) into sOr [64][72]; they land at
 * the thread's next wait. */
template <bool PC = false>
__device__ __forceinline__ void tc_gdn_bscan_fetch(const float *g, const __nv_bfloat16 *dO, int n, int b, int h, int T,
                                                   int H, int V, int vt, float *sG, __nv_bfloat16 *sOr)
{
    const long long row0 = (long long)b * T + n * TC_C;
    const int L = min(TC_C, T - n * TC_C);
    if constexpr (!PC) tc_gate_copy(g, row0 * H + h, H, L, sG);
    tc_load_rows_async(dO + (row0 * H + h) * V + vt * TC_C, (long long)H * V, L, TC_C, sOr, TC_TP);
}

/* Pass 4 for bf16 inputs on tensor cores, as tc_gdn_state_bf16 runs the forward scan: grid (V/64,
 * B*H), 2K threads (K/16 warps); warp w owns dH rows 16w .. 16w+15, the 64 columns of this V
 * tile, in mma accumulators (acc[m]: columns 8m ..; fp32, carried across the chunks). Per chunk,
 * n = NT-1 .. 0: H' = acc into dh (fp32) and as hi + lo planes; du = du (pass 3's local term) +
 * Kd H' with Kd_j = exp(G_{L-1} - G_j) k_j (hi + lo) over the 4 x 8 tiles of 16 x 8 (warp w: row
 * tile w % 4, a contiguous share of the column tiles, as the forward's U), written back to du
 * and kept as -du hi + lo; then dH = gamma H' + (q scale e)^T dO + W^T (-du): q scale e (hi + lo)
 * against dO as it is (bf16), W (the forward's two planes) against -du (tc_mma3: hi hi, lo hi,
 * hi lo), into fp32 accumulators. With the hi planes alone (tc_mma1, 2026-12-06 to 12-07) dH
 * carried ~2e-3, and so did GDN's dg, db and dS0 (fp32 outputs; 3.5e-3 on an H100 at the PyTorch
 * test's inputs); with both planes they are ~3e-6 (emulated; gdn/README.md). Rows j >= L of every
 * operand are zeros. Finally dS0 = dH (when given).
 * Deterministic: each du element has one writer, each accumulator one fixed order of mma. The
 * next chunk's gates and dO tile are copied in (cp.async) while this chunk computes, from the
 * moment the decayed keys are formed; a thread's loads of k, and of du, are all in flight before
 * its first store. PC (KDA, gdn/chunk_bwd_kda_tc.cuh): a gate per key channel, g [B,T,H,K], G
 * [64][K+1] from tc_gla_cumsum at the chunk's start (not copied ahead: it is read until the update);
 * the keys' weights exp(G_{L-1,c} - G_jc) and q's scale e_jc per element, each dH row c its own
 * decay e_{L-1,c} (as tc_gdn_state_bf16<K, PC> and tc_gdn_bscan_f32<K, PC>). */
template <int K, bool PC = false>
__global__ void TC_BOUNDS(2 * K, tc_gdn_bscan_bf16_smem(K, PC))
    tc_gdn_bscan_bf16(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const float *g, const __nv_bfloat16 *dO,
                      const float *dST, const __nv_bfloat16 *wsW, float *dh, float *du, float *dS0, int T, int H, int V,
                      int NT, float scale)
{
    constexpr int LD = K + 8, NW = K / 16, NPG = 32 / NW, RG = tc_gdn_bscan_bf16_region(K), CT = TC_C * TC_TP;
    TC_DYNAMIC_SMEM(tc_smem);
    __nv_bfloat16 *sA = reinterpret_cast<__nv_bfloat16 *>(tc_smem); /* H'^T [2][v][kk], then Qs^T [2][kk][j] */
    __nv_bfloat16 *sX = sA + RG;                                    /* Kd [2][j][kk], then W^T [2][kk][j] */
    __nv_bfloat16 *sUT = sX + RG;                                   /* -du^T [2][v][j] */
    __nv_bfloat16 *sOT = sUT + 2 * CT;                              /* dO^T [v][j] */
    __nv_bfloat16 *sOr = sOT + CT;                                  /* dO [j][v] as loaded */
    float *sG = reinterpret_cast<float *>(sOr + CT), *sQw = sG + tc_gdn_gates(K, PC);
    constexpr int LG = K + 1; /* PC: sG [64][K+1] */
    const int vt = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int r0 = 16 * w + gi;
    const int mt = w & 3, nt0 = (w >> 2) * NPG; /* this warp's du tiles */

    float acc[8][4];
#pragma unroll
    for (int m = 0; m < 8; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = r0 + (e >> 1) * 8, c = 8 * m + 2 * ti + (e & 1);
            acc[m][e] = dST ? dST[((long long)bh * K + r) * V + vt * TC_C + c] : 0.f;
        }
    if (NT > 0) tc_gdn_bscan_fetch<PC>(g, dO, NT - 1, b, h, T, H, V, vt, sG, sOr);
    for (int it = 0; it < NT; it++) {
        const int n = NT - 1 - it, t0 = n * TC_C, L = min(TC_C, T - t0);
        const long long row0 = (long long)b * T + t0;
        float *dst = dh + (((long long)bh * NT + n) * K) * V + vt * TC_C;
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = r0 + (e >> 1) * 8, c = 8 * m + 2 * ti + (e & 1), at = c * LD + r;
                dst[(long long)r * V + c] = acc[m][e];
                const __nv_bfloat16 hi = __float2bfloat16_rn(acc[m][e]);
                sA[at] = hi;
                sA[TC_C * LD + at] = __float2bfloat16_rn(acc[m][e] - __bfloat162float(hi));
            }
        float glast = 0.f, dc0 = 1.f, dc1 = 1.f; /* KDA: the decays of dH rows r0, r0 + 8 */
        if constexpr (PC) {
            tc_gla_cumsum(g, row0 * H + h, H, K, 0, K, L, sG, LG); /* waits, synchronises: H' staged, dO there */
            dc0 = expf(sG[(L - 1) * LG + r0]), dc1 = expf(sG[(L - 1) * LG + r0 + 8]);
            if (tid < TC_C) sQw[tid] = tid < L ? scale : 0.f;
        } else {
            tc_gate_sum(L, sG); /* waits, synchronises: H' staged, the gates and dO there */
            glast = sG[L - 1];
            if (tid < TC_C) sQw[tid] = tid < L ? scale * expf(sG[tid]) : 0.f;
        }
        const int nk = TC_C * (K / 8), nth = (int)blockDim.x;
        /* four 16-byte loads of k in flight before the first store (as tc_load_kt_decayed) */
        for (int base = tid; base < nk; base += 4 * nth) {
            uint4 raw[4];
#pragma unroll
            for (int q4 = 0; q4 < 4; q4++) {
                const int idx = base + q4 * nth, j = idx / (K / 8), grp = idx % (K / 8);
                raw[q4] = make_uint4(0, 0, 0, 0);
                if (idx < nk && j < L)
                    raw[q4] = *reinterpret_cast<const uint4 *>(k + ((row0 + j) * H + h) * K + grp * 8);
            }
#pragma unroll
            for (int q4 = 0; q4 < 4; q4++) {
                const int idx = base + q4 * nth, j = idx / (K / 8), grp = idx % (K / 8);
                if (idx >= nk) continue;
                const float wj = j < L ? expf(glast - sG[j]) : 0.f;
                const __nv_bfloat16 *e = reinterpret_cast<const __nv_bfloat16 *>(&raw[q4]);
#pragma unroll
                for (int c = 0; c < 8; c++) {
                    const int cc = grp * 8 + c;
                    float wc = wj;
                    if constexpr (PC) wc = j < L ? expf(sG[(L - 1) * LG + cc] - sG[j * LG + cc]) : 0.f;
                    const float xv = __bfloat162float(e[c]) * wc;
                    const __nv_bfloat16 hi = __float2bfloat16_rn(xv);
                    sX[j * LD + cc] = hi;
                    sX[TC_C * LD + j * LD + cc] = __float2bfloat16_rn(xv - __bfloat162float(hi));
                }
            }
        }
        if (tid < 128) tc_copy_transposed(tid, 128, sOr, TC_TP, L, sOT);
        __syncthreads(); /* the du product reads the decayed keys every thread stored; sG, sOr are free */
        if (it + 1 < NT) tc_gdn_bscan_fetch<PC>(g, dO, n - 1, b, h, T, H, V, vt, sG, sOr);
        /* du = local term + Kd H' for this warp's tiles */
        float x[NPG][4];
#pragma unroll
        for (int mm = 0; mm < NPG; mm++)
#pragma unroll
            for (int e = 0; e < 4; e++) x[mm][e] = 0.f;
        for (int ks = 0; ks < K / 16; ks++) {
            uint32_t a[4], al[4];
            tc_frag_a(a, sX, LD, 16 * mt, 16 * ks);
            tc_frag_a(al, sX + TC_C * LD, LD, 16 * mt, 16 * ks);
#pragma unroll
            for (int mm = 0; mm < NPG; mm++) tc_mma3(x[mm], a, al, sA, sA + TC_C * LD, LD, 8 * (nt0 + mm), 16 * ks);
        }
        /* every du load of this thread in flight before the first store (a load after a store
         * to du waits for it) */
        float2 d0[NPG][2];
#pragma unroll
        for (int mm = 0; mm < NPG; mm++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int j = 16 * mt + gi + 8 * half, c = 8 * (nt0 + mm) + 2 * ti;
                d0[mm][half] = make_float2(0.f, 0.f);
                if (j < L)
                    d0[mm][half] = *reinterpret_cast<const float2 *>(du + ((row0 + j) * H + h) * V + vt * TC_C + c);
            }
#pragma unroll
        for (int mm = 0; mm < NPG; mm++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int j = 16 * mt + gi + 8 * half, c = 8 * (nt0 + mm) + 2 * ti;
                float y0 = 0.f, y1 = 0.f;
                if (j < L) {
                    y0 = d0[mm][half].x + x[mm][2 * half], y1 = d0[mm][half].y + x[mm][2 * half + 1];
                    *reinterpret_cast<float2 *>(du + ((row0 + j) * H + h) * V + vt * TC_C + c) = make_float2(y0, y1);
                }
                uint32_t hi, lo;
                tc_split(-y0, -y1, &hi, &lo);
                const __nv_bfloat16 *ph = reinterpret_cast<const __nv_bfloat16 *>(&hi);
                const __nv_bfloat16 *pl = reinterpret_cast<const __nv_bfloat16 *>(&lo);
                sUT[c * TC_TP + j] = ph[0], sUT[(c + 1) * TC_TP + j] = ph[1];
                sUT[CT + c * TC_TP + j] = pl[0], sUT[CT + (c + 1) * TC_TP + j] = pl[1];
            }
        __syncthreads(); /* H'^T and the decayed keys read by every warp: their memory becomes Qs^T, W^T */
        tc_load_kt_decayed(q + (row0 * H + h) * K, (long long)H * K, L, K, sQw, PC ? sG : nullptr, PC ? LG : 0,
                           PC ? -1 : 0, sA, sA + K * TC_TP);
        {
            const __nv_bfloat16 *W = wsW + ((long long)bh * NT + n) * 2 * TC_C * K;
            const int grp = tid / 128, ngrp = (int)blockDim.x / 128; /* K/64 groups of 128 threads */
            for (int blk = grp; blk < 2 * (K / TC_C); blk += ngrp) { /* W's hi and lo planes */
                const int pl = blk / (K / TC_C), kb = blk % (K / TC_C);
                tc_copy_transposed(tid % 128, 128, W + (long long)pl * TC_C * K + kb * TC_C, K, L,
                                   sX + pl * K * TC_TP + kb * TC_C * TC_TP);
            }
        }
        __syncthreads(); /* the update reads the Qs^T and W^T planes every thread stored */
        const float gamma = expf(glast);
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[m][e] *= PC ? (e < 2 ? dc0 : dc1) : gamma;
#pragma unroll
        for (int s = 0; s < 4; s++) {
            uint32_t a[4], al[4];
            tc_frag_a(a, sA, TC_TP, 16 * w, 16 * s);
            tc_frag_a(al, sA + K * TC_TP, TC_TP, 16 * w, 16 * s);
#pragma unroll
            for (int m = 0; m < 8; m++) {
                uint32_t b0, b1;
                tc_frag_b(&b0, &b1, sOT, TC_TP, 8 * m, 16 * s);
                tc_mma(acc[m], a, b0, b1);
                tc_mma(acc[m], al, b0, b1);
            }
            tc_frag_a(a, sX, TC_TP, 16 * w, 16 * s);
            tc_frag_a(al, sX + K * TC_TP, TC_TP, 16 * w, 16 * s);
#pragma unroll
            for (int m = 0; m < 8; m++) tc_mma3(acc[m], a, al, sUT, sUT + CT, TC_TP, 8 * m, 16 * s);
        }
        __syncthreads(); /* every region is rewritten by the next chunk */
    }
    if (dS0) {
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = r0 + (e >> 1) * 8, c = 8 * m + 2 * ti + (e & 1);
                dS0[((long long)bh * K + r) * V + vt * TC_C + c] = acc[m][e];
            }
    }
}

// ---- pass 5: the products with H and H' ---------------------------------------------------------

/* Dynamic shared memory of tc_gdn_bdh_f32: H, H' [64][65] (rows: key channels), dO, du, u
 * [64][65] (rows: steps), G [64], the reduction [256]. */
__host__ __device__ constexpr unsigned tc_gdn_bdh_f32_smem()
{
    return (unsigned)(4 * (5 * TC_C * TC_F32P + TC_C + 256));
}

/* Pass 5 on CUDA cores (tc_gdn_bdh_f32, KDA's tc_kda_bdh_f32), value columns v0 .. v0 + 63: the
 * tiles of H and H' (Hn, Dn: this K tile's rows) and of dO, du, u (the chunk's rows from row0, 0
 * past L) into the five tiles [64][65] from sH (H, H', dO, du, u), a barrier, then in increasing
 * column order aq += dO H^T, aw += du H^T, ak += u H'^T at thread (tx, ty)'s rows ty + 16r (steps)
 * and columns tx + 16c (channels). Ends without a barrier: the caller reads the tiles, then waits
 * for every thread before the next call rewrites them. */
__device__ __forceinline__ void tc_gdn_bdh_f32_cols(const float *Hn, const float *Dn, const float *dO, const float *du,
                                                    const float *u, long long row0, int H, int h, int V, int v0, int L,
                                                    float *sH, float (&aq)[4][4], float (&aw)[4][4], float (&ak)[4][4])
{
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    float *sD = sH + TC_C * TC_F32P, *sO = sD + TC_C * TC_F32P, *sDU = sO + TC_C * TC_F32P, *sU = sDU + TC_C * TC_F32P;
    tc_gdn_tile(Hn + v0, V, TC_C, sH);
    tc_gdn_tile(Dn + v0, V, TC_C, sD);
    tc_gdn_tile(dO + (row0 * H + h) * V + v0, (long long)H * V, L, sO);
    tc_gdn_tile(du + (row0 * H + h) * V + v0, (long long)H * V, L, sDU);
    tc_gdn_tile(u + (row0 * H + h) * V + v0, (long long)H * V, L, sU);
    __syncthreads();
    for (int vv = 0; vv < TC_C; vv++) {
        float hc[4], dc[4];
#pragma unroll
        for (int c = 0; c < 4; c++) hc[c] = sH[(tx + 16 * c) * TC_F32P + vv], dc[c] = sD[(tx + 16 * c) * TC_F32P + vv];
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = ty + 16 * r;
            const float o = sO[i * TC_F32P + vv], w = sDU[i * TC_F32P + vv], x = sU[i * TC_F32P + vv];
#pragma unroll
            for (int c = 0; c < 4; c++) {
                aq[r][c] = fmaf(o, hc[c], aq[r][c]);
                aw[r][c] = fmaf(w, hc[c], aw[r][c]);
                ak[r][c] = fmaf(x, dc[c], ak[r][c]);
            }
        }
    }
}

/* grid (K/64, NT, B*H), 256 threads; thread (tx, ty) owns rows i = ty + 16r (steps) and key
 * channels c = kt 64 + tx + 16cc of the outputs: summed over all V in increasing column order,
 *   dqh_ic = scale e_i (H dO_i)_c,   dks_ic = exp(G_{L-1} - G_i) (H' u_i)_c   ([B,T,H,K], i < L),
 *   dW_ic  = -(H du_i)_c (wsW's chunk block, every row: du is 0 past L),
 * and hdh[bh][n][kt] = the sum of H . H' over this K tile's rows (per thread in column order, the
 * 256 partials in thread order). */
__global__ void TC_BOUNDS(256, tc_gdn_bdh_f32_smem())
    tc_gdn_bdh_f32(const float *g, const float *dO, const float *hs, const float *dh, const float *u, const float *du,
                   float *wsW, float *dqh, float *dks, float *hdh, int T, int H, int K, int V, int NT, float scale)
{
    TC_DYNAMIC_SMEM(tc_smem);
    float *sH = reinterpret_cast<float *>(tc_smem), *sD = sH + TC_C * TC_F32P, *sO = sD + TC_C * TC_F32P;
    float *sDU = sO + TC_C * TC_F32P, *sU = sDU + TC_C * TC_F32P, *sG = sU + TC_C * TC_F32P, *sR = sG + TC_C;
    const int kt = (int)blockIdx.x, n = (int)blockIdx.y, bh = (int)blockIdx.z, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    tc_gate_cumsum<true>(g, row0 * H + h, H, L, sG); /* synchronises */
    float aq[4][4], ak[4][4], aw[4][4], hd = 0.f;
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) aq[r][c] = ak[r][c] = aw[r][c] = 0.f;
    const float *Hn = hs + (((long long)bh * NT + n) * K + kt * TC_C) * V;
    const float *Dn = dh + (((long long)bh * NT + n) * K + kt * TC_C) * V;
    for (int v0 = 0; v0 < V; v0 += TC_C) {
        tc_gdn_bdh_f32_cols(Hn, Dn, dO, du, u, row0, H, h, V, v0, L, sH, aq, aw, ak);
        /* this thread's H . H' elements: rows ty + 16r, columns tx + 16c of the tile */
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int at = (ty + 16 * r) * TC_F32P + tx + 16 * c;
                hd = fmaf(sH[at], sD[at], hd);
            }
        __syncthreads(); /* the tiles are rewritten next */
    }
    const float glast = sG[L - 1];
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = ty + 16 * r;
        const float fq = scale * expf(sG[i]), fk = expf(glast - sG[i]);
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int cc = kt * TC_C + tx + 16 * c;
            wsW[(((long long)bh * NT + n) * TC_C + i) * K + cc] = -aw[r][c];
            if (i < L) {
                dqh[((row0 + i) * H + h) * K + cc] = fq * aq[r][c];
                dks[((row0 + i) * H + h) * K + cc] = fk * ak[r][c];
            }
        }
    }
    sR[tid] = hd;
    __syncthreads();
    if (tid == 0) {
        float s = 0.f;
        for (int i = 0; i < 256; i++) s += sR[i];
        hdh[((long long)bh * NT + n) * (K / TC_C) + kt] = s;
    }
}

/* Threads of tc_gdn_bdh_bf16 */
#define TC_GDN_BDH_THREADS 256

/* tc_gdn_bdh_bf16's stages: 32 value columns each, two in shared memory (one landing while the
 * other multiplies). A stage: H^T's planes [2][32][72] bf16 (rows: value columns, as stored),
 * H' [64][40] fp32 (rows: key channels), du [64][40] fp32, u's planes [2][64][40] bf16 and dO
 * [64][40] bf16 (rows: steps). Conflict-free fragment loads: rows of 40 fp32 (8 mod 32 words) for
 * the fp32 pairs, of 20 words for the bf16 pairs, and ldmatrix's 8 rows of 16 bytes in 32 banks
 * at 36 words (H^T). */
#define TC_GDN_BDH_VS 32
#define TC_GDN_BDH_LD 40
__host__ __device__ constexpr unsigned tc_gdn_bdh_bf16_stage()
{
    return (unsigned)(2 * TC_GDN_BDH_VS * TC_TP * 2 + 2 * TC_C * TC_GDN_BDH_LD * 4 + 3 * TC_C * TC_GDN_BDH_LD * 2);
}

/* Dynamic shared memory of tc_gdn_bdh_bf16: two stages, G [64], the reduction [256]. */
__host__ __device__ constexpr unsigned tc_gdn_bdh_bf16_smem()
{
    return 2 * tc_gdn_bdh_bf16_stage() + 4 * (TC_C + TC_GDN_BDH_THREADS);
}

/* Pass 5 on tensor cores (bf16 inputs): tc_gdn_bdh_f32's outputs, the same workspace. grid (K/64,
 * NT, B*H), 256 threads; warp w owns rows (steps) 16 (w % 4) .. 16 (w % 4) + 15 and key channels
 * 32 (w / 4) .. 32 (w / 4) + 31 of the three 64 x 64 products, aq[m], aw[m], ak[m] the m16n8 tile
 * of key channels 32 (w / 4) + 8m .. + 7 (the two warps of a row block load the same A fragments).
 * V runs in stages of 32 columns, every tile of a stage copied raw by cp.async (all of a thread's
 * copies in flight at once), stage s + 1 landing while stage s multiplies. H^T's planes (hs:
 * [BH][NT][2][V][K], as tc_gdn_state_bf16 left them) are read as stored, B[k][n] row-major
 * (ldmatrix.trans: tc_frag_b_kn2_ldsm, H's hi and lo fragments in one); H' (fp32, B) and du
 * (fp32, A) are split into bf16 hi + lo in registers as their fragments load (tc_split); u as the
 * forward's planes (u, u_lo) and dO exact in bf16 (tc_frag_a). Products: aq = dO (H hi) +
 * dO (H lo), aw and ak as tc_mma3 (hi hi, lo hi, hi lo): with each k block in increasing order,
 * every accumulator sees the same mma in the same order as when 128 threads (a warp a row block,
 * all 64 key channels) multiplied one transposed 64-column tile at a time. The partial of H . H'
 * in fp32 from H = hi + lo and H' (fp32) as the B fragments hold them: warp w adds those of tile
 * m = w % 4 (the other three warps of its key-channel half the other tiles), each lane its four
 * elements in fragment order, stage by stage and k block by k block; the 256 partials summed in
 * thread order. The chunk's gates come with stage 0's copies; their cumsum (tc_gate_cumsum's
 * order) and the paired fp32 stores of dW, dqh, dks end it. */
__global__ void TC_BOUNDS(TC_GDN_BDH_THREADS, tc_gdn_bdh_bf16_smem())
    tc_gdn_bdh_bf16(const float *g, const __nv_bfloat16 *dO, const __nv_bfloat16 *hs, const float *dh,
                    const __nv_bfloat16 *u, const __nv_bfloat16 *u_lo, const float *du, float *wsW, float *dqh,
                    float *dks, float *hdh, int T, int H, int K, int V, int NT, float scale)
{
    constexpr int NTH = TC_GDN_BDH_THREADS, VS = TC_GDN_BDH_VS, LD = TC_GDN_BDH_LD;
    constexpr int HP = VS * TC_TP, FP = TC_C * LD; /* H^T plane, 64-row tile (elements) */
    TC_DYNAMIC_SMEM(tc_smem);
    float *sG = reinterpret_cast<float *>(tc_smem + 2 * tc_gdn_bdh_bf16_stage()), *sR = sG + TC_C;
    const int kt = (int)blockIdx.x, n = (int)blockIdx.y, bh = (int)blockIdx.z, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int r0 = 16 * (w & 3), n0 = 32 * (w >> 2);
    const int t0 = n * TC_C, L = min(TC_C, T - t0), NS = V / VS;
    const long long row0 = (long long)b * T + t0, at0 = (row0 * H + h) * V;
    const __nv_bfloat16 *Hn = hs + ((long long)bh * NT + n) * 2 * V * K + kt * TC_C;
    const float *Dn = dh + (((long long)bh * NT + n) * K + kt * TC_C) * V;
    /* the tiles of stage s in buffer s % 2 */
    auto tiles = [&](int s, __nv_bfloat16 *&sHT, float *&sD, float *&sDU, __nv_bfloat16 *&sU, __nv_bfloat16 *&sO) {
        unsigned char *st = tc_smem + (s & 1) * tc_gdn_bdh_bf16_stage();
        sHT = reinterpret_cast<__nv_bfloat16 *>(st), sD = reinterpret_cast<float *>(sHT + 2 * HP), sDU = sD + FP;
        sU = reinterpret_cast<__nv_bfloat16 *>(sDU + FP), sO = sU + 2 * FP;
    };
    /* stage s's copies (16 bytes each); rows of du, u, dO past L as zeros */
    auto load = [&](int s) {
        __nv_bfloat16 *sHT, *sU, *sO;
        float *sD, *sDU;
        tiles(s, sHT, sD, sDU, sU, sO);
        const int vb = s * VS;
#pragma unroll 1
        for (int idx = tid; idx < 2 * VS * 8; idx += NTH) { /* plane, value column, 8 key channels */
            const int pl = idx / (VS * 8), v = idx / 8 % VS, q = idx % 8;
            tc_cp16(sHT + pl * HP + v * TC_TP + 8 * q, Hn + ((long long)pl * V + vb + v) * K + 8 * q);
        }
#pragma unroll 1
        for (int idx = tid; idx < TC_C * 8; idx += NTH) { /* row, 4 columns */
            const int r = idx / 8, q = idx % 8;
            tc_cp16(sD + r * LD + 4 * q, Dn + (long long)r * V + vb + 4 * q);
            if (r < L)
                tc_cp16(sDU + r * LD + 4 * q, du + at0 + (long long)r * H * V + vb + 4 * q);
            else
                *reinterpret_cast<uint4 *>(sDU + r * LD + 4 * q) = make_uint4(0, 0, 0, 0);
        }
#pragma unroll 1
        for (int idx = tid; idx < 3 * TC_C * 4; idx += NTH) { /* u, u_lo, dO: row, 8 columns */
            const int p = idx / (TC_C * 4), r = idx / 4 % TC_C, q = idx % 4;
            const __nv_bfloat16 *src = p == 0 ? u : p == 1 ? u_lo : dO;
            __nv_bfloat16 *dst = sU + p * FP + r * LD + 8 * q;
            if (r < L)
                tc_cp16(dst, src + at0 + (long long)r * H * V + vb + 8 * q);
            else
                *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
        }
        tc_cp_commit();
    };
    float aq[4][4], aw[4][4], ak[4][4], hd = 0.f;
#pragma unroll
    for (int m = 0; m < 4; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) aq[m][e] = aw[m][e] = ak[m][e] = 0.f;
    if (tid < TC_C) { /* the chunk's gates, with stage 0's copies */
        if (tid < L)
            tc_cp4(sG + tid, g + (row0 + tid) * H + h);
        else
            sG[tid] = 0.f;
    }
    load(0);
    for (int s = 0; s < NS; s++) {
        if (s + 1 < NS)
            load(s + 1);
        else
            tc_cp_commit(); /* an empty group: stage s is the latest but one either way */
        tc_cp_wait_prior<1>();
        __syncthreads(); /* stage s landed, every thread's copies */
        __nv_bfloat16 *sHT, *sU, *sO;
        float *sD, *sDU;
        tiles(s, sHT, sD, sDU, sU, sO);
#pragma unroll
        for (int ks = 0; ks < VS / 16; ks++) {
            uint32_t fo[4], fw[4], fwl[4], fu[4], ful[4];
            tc_frag_a(fo, sO, LD, r0, 16 * ks);
            tc_frag_a(fu, sU, LD, r0, 16 * ks);
            tc_frag_a(ful, sU + FP, LD, r0, 16 * ks);
#pragma unroll
            for (int q = 0; q < 4; q++) { /* du's A fragment, split as it loads */
                const float2 x = *reinterpret_cast<const float2 *>(sDU + (r0 + gi + 8 * (q & 1)) * LD + 16 * ks +
                                                                   2 * ti + 8 * (q >> 1));
                tc_split(x.x, x.y, &fw[q], &fwl[q]);
            }
#pragma unroll
            for (int m = 0; m < 4; m++) {
                uint32_t f[4]; /* b0, b1 of H's hi then lo; then of H' hi, lo */
                tc_frag_b_kn2_ldsm(f, sHT, HP, TC_TP, n0 + 8 * m, 16 * ks);
                tc_mma(aq[m], fo, f[0], f[1]);
                tc_mma(aq[m], fo, f[2], f[3]);
                tc_mma(aw[m], fw, f[0], f[1]);
                tc_mma(aw[m], fwl, f[0], f[1]);
                tc_mma(aw[m], fw, f[2], f[3]);
                const float *pd = sD + (n0 + 8 * m + gi) * LD + 16 * ks + 2 * ti;
                const float2 y0 = *reinterpret_cast<const float2 *>(pd), y1 = *reinterpret_cast<const float2 *>(pd + 8);
                if (m == (w & 3)) { /* H . H' over the fragments' elements, of one warp of the four that load them */
                    hd = fmaf(tc_half(f[0], 0) + tc_half(f[2], 0), y0.x, hd);
                    hd = fmaf(tc_half(f[0], 1) + tc_half(f[2], 1), y0.y, hd);
                    hd = fmaf(tc_half(f[1], 0) + tc_half(f[3], 0), y1.x, hd);
                    hd = fmaf(tc_half(f[1], 1) + tc_half(f[3], 1), y1.y, hd);
                }
                tc_split(y0.x, y0.y, &f[0], &f[2]);
                tc_split(y1.x, y1.y, &f[1], &f[3]);
                tc_mma(ak[m], fu, f[0], f[1]);
                tc_mma(ak[m], ful, f[0], f[1]);
                tc_mma(ak[m], fu, f[2], f[3]);
            }
        }
        __syncthreads(); /* stage s + 2 refills this buffer */
    }
    if (tid == 0) { /* tc_gate_cumsum's sums, in its order: 16 loads ahead of the dependent adds */
        float sum = 0.f;
        for (int i0 = 0; i0 < TC_C; i0 += 16) {
            float x[16];
#pragma unroll
            for (int i = 0; i < 16; i++) x[i] = sG[i0 + i];
#pragma unroll
            for (int i = 0; i < 16; i++) {
                if (i0 + i < L) sum += x[i];
                sG[i0 + i] = sum;
            }
        }
    }
    __syncthreads();
    const float glast = sG[L - 1];
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int i = r0 + gi + 8 * half;
        const float fq = scale * expf(sG[i]), fk = expf(glast - sG[i]);
#pragma unroll
        for (int m = 0; m < 4; m++) {
            const int cc = kt * TC_C + n0 + 8 * m + 2 * ti;
            const float *q = aq[m] + 2 * half, *x = aw[m] + 2 * half, *k = ak[m] + 2 * half;
            *reinterpret_cast<float2 *>(wsW + (((long long)bh * NT + n) * TC_C + i) * K + cc) =
                make_float2(-x[0], -x[1]);
            if (i < L) {
                *reinterpret_cast<float2 *>(dqh + ((row0 + i) * H + h) * K + cc) = make_float2(fq * q[0], fq * q[1]);
                *reinterpret_cast<float2 *>(dks + ((row0 + i) * H + h) * K + cc) = make_float2(fk * k[0], fk * k[1]);
            }
        }
    }
    sR[tid] = hd;
    __syncthreads();
    if (tid == 0) {
        float s = 0.f;
        for (int i = 0; i < NTH; i++) s += sR[i];
        hdh[((long long)bh * NT + n) * (K / TC_C) + kt] = s;
    }
}

// ---- pass 6: the WY part and the chunk's gradients ----------------------------------------------

/* Dynamic shared memory of tc_gdn_bwy_f32: seven 64 x 64 matrices [64][65] (A then dTm, T, M, S,
 * dP, dA, Y then dM), five tiles [64][65], the inversion's scratch [768], G, beta, e [64] and
 * the row reduction [64][17]. */
__host__ __device__ constexpr unsigned tc_gdn_bwy_f32_smem()
{
    return (unsigned)(4 * (12 * TC_C * TC_F32P + 768 + 3 * TC_C + TC_C * 17));
}

/* The work area of tc_gdn_bwy_bf16, in bf16 planes [64][72]: each phase's tiles and planes in turn
 * (A and T in fp32 with the inversion's scratch, the V tiles, the 64 x 64 factors, the row sums) */
#define TC_BWY_WORK 8

/* Dynamic shared memory of tc_gdn_bwy_bf16: S and M (then the dg/db terms) in one fp32 [64][65],
 * T's hi + lo planes, the work area, G, beta, e and db's dv part [64]: 109,824 B, two CTAs an SM. */
__host__ __device__ constexpr unsigned tc_gdn_bwy_bf16_smem()
{
    return (unsigned)(4 * TC_C * TC_F32P + (2 + TC_BWY_WORK) * TC_C * TC_TP * 2 + 4 * 4 * TC_C);
}
static_assert(tc_ctas_per_sm(tc_gdn_bwy_bf16_smem(), 256) == 2, "pass 6 (bf16): two CTAs an SM");
static_assert(TC_BWY_WORK * TC_C * TC_TP * 2 >= 4 * (2 * TC_C * TC_F32P + 768) &&
                  TC_BWY_WORK * TC_C * TC_TP * 2 >= 4 * (TC_C * 17 + 4 * TC_C),
              "the work area holds A, T and the inversion's scratch, and the row sums");

/* Sums the 16 per-thread partials of each row (thread (tx, ty) holds x[r] for row ty + 16r) in tx
 * order into out[row] (64 rows); sR [64][17] scratch. Starts and ends synchronised. */
__device__ __forceinline__ void tc_gdn_rowsum(const float x[4], float *sR, float *out)
{
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
#pragma unroll
    for (int r = 0; r < 4; r++) sR[(ty + 16 * r) * 17 + tx] = x[r];
    __syncthreads();
    if (tid < TC_C) {
        float s = 0.f;
        for (int i = 0; i < 16; i++) s += sR[tid * 17 + i];
        out[tid] = s;
    }
    __syncthreads();
}

/* tc_gdn_rowsum for partials in mma fragment rows: of the 256 threads, lane (gi, ti) of warp w
 * holds x[0] for row 16 (w % 4) + gi and x[1] for row 16 (w % 4) + gi + 8; the 8 partials of a
 * row summed in the order (w / 4, ti) into out[row]. Starts and ends synchronised. */
__device__ __forceinline__ void tc_gdn_rowsum_mma(const float x[2], float *sR, float *out)
{
    const int tid = (int)threadIdx.x, lane = tid & 31, w = tid >> 5;
    const int r0 = 16 * (w & 3) + (lane >> 2), s = 4 * (w >> 2) + (lane & 3);
    sR[r0 * 17 + s] = x[0];
    sR[(r0 + 8) * 17 + s] = x[1];
    __syncthreads();
    if (tid < TC_C) {
        float t = 0.f;
        for (int i = 0; i < 8; i++) t += sR[tid * 17 + i];
        out[tid] = t;
    }
    __syncthreads();
}

/* Pass 6's products on tensor cores (bf16 inputs): into the warp's NM m16n8 tiles acc[m] (rows r0
 * .. r0 + 15, columns n0 + 8m .., m < NM), the k block ks of A, as its hi + lo planes, times B: B's hi + lo
 * planes (tc_bwy_mma3: tc_mma3's hi hi, lo hi, hi lo) or B in bf16 as it is (tc_bwy_mma2: A's hi
 * then its lo). */
/* Pass 6's last step, one thread (both kernels): dg as the reverse running sum of the rows' terms
 * dG, the last row also taking sum_j rk2_j and e^{G_{L-1}} times the chunk's dh partials hd (K /
 * TC_C of them, one per key tile); db from rb. dg, db: the first row's (row0) entries of a
 * [T, H] output, either NULL. */
__device__ __forceinline__ void tc_gdn_bwy_dgdb(const float *rk2, const float *dG, const float *rb, const float *sG,
                                                const float *hd_tiles, int K, int L, int H, int h, long long row0,
                                                float *dg, float *db)
{
    if (L <= 0) return;
    float s = 0.f;
    for (int j = 0; j < L; j++) s += rk2[j];
    float hd = 0.f;
    for (int kt = 0; kt < K / TC_C; kt++) hd += hd_tiles[kt];
    s = fmaf(expf(sG[L - 1]), hd, s);
    float run = 0.f;
    for (int i = L - 1; i >= 0; i--) {
        run += dG[i] + (i == L - 1 ? s : 0.f);
        if (dg) dg[(row0 + i) * H + h] = run;
        if (db) db[(row0 + i) * H + h] = rb[i];
    }
}

template <int NM>
__device__ __forceinline__ void tc_bwy_mma3(float (&acc)[NM][4], const __nv_bfloat16 *A, const __nv_bfloat16 *B, int r0,
                                            int n0, int ks)
{
    constexpr int CT = TC_C * TC_TP;
    uint32_t fa[4], fl[4];
    tc_frag_a(fa, A, TC_TP, r0, 16 * ks);
    tc_frag_a(fl, A + CT, TC_TP, r0, 16 * ks);
#pragma unroll
    for (int m = 0; m < NM; m++) tc_mma3(acc[m], fa, fl, B, B + CT, TC_TP, n0 + 8 * m, 16 * ks);
}

template <int NM>
__device__ __forceinline__ void tc_bwy_mma2(float (&acc)[NM][4], const __nv_bfloat16 *A, const __nv_bfloat16 *B, int r0,
                                            int n0, int ks)
{
    constexpr int CT = TC_C * TC_TP;
    uint32_t fa[4], fl[4];
    tc_frag_a(fa, A, TC_TP, r0, 16 * ks);
    tc_frag_a(fl, A + CT, TC_TP, r0, 16 * ks);
#pragma unroll
    for (int m = 0; m < NM; m++) {
        uint32_t b0, b1;
        tc_frag_b(&b0, &b1, B, TC_TP, n0 + 8 * m, 16 * ks);
        tc_mma(acc[m], fa, b0, b1);
        tc_mma(acc[m], fl, b0, b1);
    }
}

/* tc_bwy_mma3 and tc_bwy_mma2 with A^T for A: its fragments from A's planes by ldmatrix.trans */
template <int NM>
__device__ __forceinline__ void tc_bwy_mma3t(float (&acc)[NM][4], const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                                             int r0, int n0, int ks)
{
    constexpr int CT = TC_C * TC_TP;
    uint32_t fa[4], fl[4];
    tc_frag_at_ldsm(fa, A, TC_TP, r0, 16 * ks);
    tc_frag_at_ldsm(fl, A + CT, TC_TP, r0, 16 * ks);
#pragma unroll
    for (int m = 0; m < NM; m++) tc_mma3(acc[m], fa, fl, B, B + CT, TC_TP, n0 + 8 * m, 16 * ks);
}

template <int NM>
__device__ __forceinline__ void tc_bwy_mma2t(float (&acc)[NM][4], const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                                             int r0, int n0, int ks)
{
    uint32_t fa[4], fl[4];
    tc_frag_at_ldsm(fa, A, TC_TP, r0, 16 * ks);
    tc_frag_at_ldsm(fl, A + TC_C * TC_TP, TC_TP, r0, 16 * ks);
#pragma unroll
    for (int m = 0; m < NM; m++) {
        uint32_t b0, b1;
        tc_frag_b(&b0, &b1, B, TC_TP, n0 + 8 * m, 16 * ks);
        tc_mma(acc[m], fa, b0, b1);
        tc_mma(acc[m], fl, b0, b1);
    }
}

/* Elements each thread loads into registers before it stores any into the bf16 planes (pass 6's
 * tile loads, bf16 inputs): with one CTA an SM, loads one after another left each load's latency
 * exposed, 16 times per tile (4 then); at two CTAs an SM, 2 (2 to 5 inputs each: 4 to 10 loads in
 * flight a thread) is what fits 128 registers without a spill (ptxas, nvcc 13: 4 spilled 8 bytes) */
#define TC_BWY_LD 2

/* Pass 6's loop over V on CUDA cores (tc_gdn_bwy_f32, KDA's tc_kda_bwy_f32<K, TO>): 64 columns
 * at a time, each sum in increasing column order, thread (tx, ty)'s rows ty + 16r, columns tx +
 * 16c: dp = dO u^T, da = du v^T (every row: du and v are 0 past L), dv_j = beta_j (T^T du)_j
 * (rows j < L, into TO) and dbv[r] = (T^T du)_j . v_j for row j = ty + 16r. sT holds T, sB beta;
 * sX four tiles [64][65] (dO, u, du, v). Starts synchronised (sT, sB complete), ends so. */
template <class TO>
__device__ __forceinline__ void tc_gdn_bwy_over_v(const float *v, const float *dO, const float *u, const float *du,
                                                  const float *sT, const float *sB, float *sX, TO *dv, int L, int H,
                                                  int h, int V, long long row0, float (&dp)[4][4], float (&da)[4][4],
                                                  float (&dbv)[4])
{
    constexpr int P = TC_F32P, CC = TC_C * TC_F32P;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const long long rv = (long long)H * V;
    float *sX0 = sX, *sX1 = sX + CC, *sX2 = sX + 2 * CC, *sX3 = sX + 3 * CC;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        dbv[r] = 0.f;
#pragma unroll
        for (int c = 0; c < 4; c++) dp[r][c] = da[r][c] = 0.f;
    }
    for (int c0 = 0; c0 < V; c0 += TC_C) {
        tc_gdn_tile(du + (row0 * H + h) * V + c0, rv, L, sX2);
        tc_gdn_tile(v + (row0 * H + h) * V + c0, rv, L, sX3);
        tc_gdn_tile(dO + (row0 * H + h) * V + c0, rv, L, sX0);
        tc_gdn_tile(u + (row0 * H + h) * V + c0, rv, L, sX1);
        __syncthreads();
        for (int vv = 0; vv < TC_C; vv++) {
            float uj[4], vj[4];
#pragma unroll
            for (int c = 0; c < 4; c++) uj[c] = sX1[(tx + 16 * c) * P + vv], vj[c] = sX3[(tx + 16 * c) * P + vv];
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int i = ty + 16 * r;
                const float oi = sX0[i * P + vv], di = sX2[i * P + vv];
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    dp[r][c] = fmaf(oi, uj[c], dp[r][c]);
                    da[r][c] = fmaf(di, vj[c], da[r][c]);
                }
            }
        }
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int j = ty + 16 * r;
            if (j >= L) continue;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int vv = tx + 16 * c;
                float s = 0.f;
                for (int i = j; i < L; i++) s = fmaf(sT[i * P + j], sX2[i * P + vv], s);
                tc_gdn_put(dv + ((row0 + j) * H + h) * V + c0 + vv, sB[j] * s);
                dbv[r] = fmaf(s, sX3[j * P + vv], dbv[r]);
            }
        }
        __syncthreads(); /* the tiles are rewritten next */
    }
}

/* Pass 6's tiles of key channels c0 .. c0 + 63 for dq and dk on CUDA cores (both members): q, k,
 * dW (Wn: the chunk's block of wsW), dqh and dks, rows 0 past L, into the five tiles [64][65] from
 * sX, then a barrier. */
__device__ __forceinline__ void tc_gdn_bwy_ktiles(const float *q, const float *k, const float *Wn, const float *dqh,
                                                  const float *dks, long long row0, int H, int h, int K, int c0, int L,
                                                  float *sX)
{
    constexpr int CC = TC_C * TC_F32P;
    const long long rk = (long long)H * K;
    tc_gdn_tile(q + (row0 * H + h) * K + c0, rk, L, sX);
    tc_gdn_tile(k + (row0 * H + h) * K + c0, rk, L, sX + CC);
    tc_gdn_tile(Wn + c0, K, L, sX + 2 * CC);
    tc_gdn_tile(dqh + (row0 * H + h) * K + c0, rk, L, sX + 3 * CC);
    tc_gdn_tile(dks + (row0 * H + h) * K + c0, rk, L, sX + 4 * CC);
    __syncthreads();
}

/* Pass 6's Y = dA T^T (Y_ml = sum_{j <= min(m, l)} dA_mj T_lj) into sY, then dTm = -T^T Y strictly
 * below the diagonal (rows < L; 0 elsewhere) into sA, both kernels on CUDA cores: thread (tx, ty)'s
 * rows ty + 16r, columns tx + 16c, each sum in increasing index. Starts synchronised (sDA, sT
 * complete), ends so. */
__device__ __forceinline__ void tc_gdn_bwy_dtm(const float *sDA, const float *sT, float *sY, float *sA, int L)
{
    constexpr int P = TC_F32P;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int m = ty + 16 * r, l = tx + 16 * c, e = m < l ? m : l;
            float s = 0.f;
            for (int j = 0; j <= e; j++) s = fmaf(sDA[m * P + j], sT[l * P + j], s);
            sY[m * P + l] = s;
        }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = ty + 16 * r, j = tx + 16 * c;
            float s = 0.f;
            if (j < i && i < L)
                for (int m = i; m < L; m++) s = fmaf(sT[m * P + i], sY[m * P + j], s);
            sA[i * P + j] = -s;
        }
    __syncthreads();
}

/* grid (NT, B*H), 256 threads; thread (tx, ty) owns rows ty + 16r, columns tx + 16c of every
 * 64 x 64 matrix and tile. fp32 inputs: q, k, v, beta, dO and dq, dk, dv fp32 as the caller gave
 * them, dg, db fp32 (either may be NULL). Reads pass 5's dW (wsW), dqh, dks, hdh, pass 4's du and
 * the forward's u (fp32). Every product in exact fp32 on CUDA cores. */
__global__ void TC_BOUNDS(256, tc_gdn_bwy_f32_smem())
    tc_gdn_bwy_f32(const float *q, const float *k, const float *v, const float *beta, const float *g, const float *dO,
                   const float *u, const float *du, const float *wsW, const float *dqh, const float *dks,
                   const float *hdh, float *dq, float *dk, float *dv, float *dg, float *db, int T, int H, int K, int V,
                   int NT, float scale)
{
    constexpr int P = TC_F32P, CC = TC_C * TC_F32P;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sA = reinterpret_cast<float *>(tc_smem), *sT = sA + CC, *sM = sT + CC, *sS = sM + CC, *sP = sS + CC;
    float *sDA = sP + CC, *sY = sDA + CC, *sX0 = sY + CC, *sX1 = sX0 + CC, *sX2 = sX1 + CC, *sX3 = sX2 + CC;
    float *sX4 = sX3 + CC, *sInv = sX4 + CC, *sG = sInv + 768, *sB = sG + TC_C, *sE = sB + TC_C, *sR = sE + TC_C;
    const int n = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    const long long rk = (long long)H * K;
    const float *Wn = wsW + ((long long)bh * NT + n) * TC_C * K;

    if (tid < TC_C) sB[tid] = tid < L ? tc_gdn_get(beta + (row0 + tid) * H + h) : 0.f;
    tc_gate_cumsum<true>(g, row0 * H + h, H, L, sG); /* synchronises: sB too */
    if (tid < TC_C) sE[tid] = expf(sG[tid]);
    /* K K^T, Q K^T and dW K^T over all channels, in channel order (fp32 FMA) */
    float dw[4][4];
    float mk[4][4], sq[4][4];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) mk[r][c] = sq[r][c] = dw[r][c] = 0.f;
    for (int c0 = 0; c0 < K; c0 += TC_C) {
        tc_gdn_tile(q + (row0 * H + h) * K + c0, rk, L, sX0);
        tc_gdn_tile(k + (row0 * H + h) * K + c0, rk, L, sX1);
        tc_gdn_tile(Wn + c0, K, L, sX2);
        __syncthreads();
        for (int kk = 0; kk < TC_C; kk++) {
            float kj[4];
#pragma unroll
            for (int c = 0; c < 4; c++) kj[c] = sX1[(tx + 16 * c) * P + kk];
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int i = ty + 16 * r;
                const float ki = sX1[i * P + kk], qi = sX0[i * P + kk], wi = sX2[i * P + kk];
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    mk[r][c] = fmaf(ki, kj[c], mk[r][c]);
                    sq[r][c] = fmaf(qi, kj[c], sq[r][c]);
                    dw[r][c] = fmaf(wi, kj[c], dw[r][c]);
                }
            }
        }
        __syncthreads(); /* the tiles are rewritten next */
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = ty + 16 * r, j = tx + 16 * c, at = i * P + j;
            const float E = expf(sG[i] - sG[j]);
            const float m = (j < i && i < L) ? mk[r][c] * E : 0.f;
            sM[at] = m;
            sA[at] = m * sB[i];
            sS[at] = (j <= i && i < L) ? sq[r][c] : 0.f; /* q_i . k_j: sP below carries E */
        }
    __syncthreads();
    tc_gdn_invert(sA, sT, sInv); /* synchronises; sA is free */

    /* over V: dP = scale E (dO u^T), du v^T; dv_j = beta_j (T^T du)_j and its part of db */
    float dp[4][4], da[4][4], dbv[4];
    tc_gdn_bwy_over_v(v, dO, u, du, sT, sB, sX0, dv, L, H, h, V, row0, dp, da, dbv);
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = ty + 16 * r;
            const int j = tx + 16 * c, at = i * P + j;
            const bool on = j <= i && i < L;
            sP[at] = on ? scale * dp[r][c] * expf(sG[i] - sG[j]) : 0.f;
            sDA[at] = on ? sB[j] * fmaf(dw[r][c], sE[j], da[r][c]) : 0.f;
        }
    __syncthreads();
    /* Y = dA T^T (Y_ml = sum_{j <= min(m, l)} dA_mj T_lj), then dTm = -T^T Y strictly below the
     * diagonal into sA, then dM_ij = beta_i dTm_ij E_ij into sY */
    tc_gdn_bwy_dtm(sDA, sT, sY, sA, L);
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = ty + 16 * r, j = tx + 16 * c;
            sY[i * P + j] = (j < i && i < L) ? sB[i] * sA[i * P + j] * expf(sG[i] - sG[j]) : 0.f;
        }
    __syncthreads();

    /* over K: dq, dk, and the rows' parts of dG and db */
    float gq[4] = {0.f, 0.f, 0.f, 0.f}, gb[4] = {0.f, 0.f, 0.f, 0.f}, gk[4] = {0.f, 0.f, 0.f, 0.f};
    for (int c0 = 0; c0 < K; c0 += TC_C) {
        tc_gdn_bwy_ktiles(q, k, Wn, dqh, dks, row0, H, h, K, c0, L, sX0);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = ty + 16 * r;
            if (i >= L) continue;
            const float be = sB[i] * sE[i];
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int cc = tx + 16 * c;
                const float qh = sX3[i * P + cc], kh = sX4[i * P + cc], qi = sX0[i * P + cc], ki = sX1[i * P + cc];
                float xq = qh;
                for (int j = 0; j <= i; j++) xq = fmaf(sP[i * P + j], sX1[j * P + cc], xq);
                float bk = 0.f;
                for (int m = i; m < L; m++) bk = fmaf(sT[m * P + i], sX2[m * P + cc], bk);
                float xk = kh;
                for (int m = i; m < L; m++) xk = fmaf(sP[m * P + i], sX0[m * P + cc], xk);
                xk = fmaf(be, bk, xk);
                for (int j = 0; j < i; j++) xk = fmaf(sY[i * P + j], sX1[j * P + cc], xk);
                for (int m = i + 1; m < L; m++) xk = fmaf(sY[m * P + i], sX1[m * P + cc], xk);
                tc_gdn_put(dq + ((row0 + i) * H + h) * K + c0 + cc, xq);
                tc_gdn_put(dk + ((row0 + i) * H + h) * K + c0 + cc, xk);
                gq[r] = fmaf(qi, qh, gq[r]);
                gq[r] = fmaf(-ki, kh, gq[r]);
                gq[r] = fmaf(be * ki, bk, gq[r]);
                gb[r] = fmaf(sE[i] * ki, bk, gb[r]);
                gk[r] = fmaf(ki, kh, gk[r]);
            }
        }
        __syncthreads(); /* the tiles are rewritten next */
    }
    if (!dg && !db) return;
    /* per row: the partials in tx order, then the 64 x 64 terms by one thread a row */
    float *rq = sX0, *rb = sX0 + TC_C, *rk2 = sX0 + 2 * TC_C, *rdv = sX0 + 3 * TC_C, *dG = sX0 + 4 * TC_C;
    tc_gdn_rowsum(gq, sR, rq);
    tc_gdn_rowsum(gb, sR, rb);
    tc_gdn_rowsum(gk, sR, rk2);
    tc_gdn_rowsum(dbv, sR, rdv);
    if (tid < TC_C) {
        const int i = tid;
        float x = rq[i], y = rdv[i] + rb[i];
        for (int j = 0; j < TC_C; j++) {
            const float rij = fmaf(sP[i * P + j], sS[i * P + j], sB[i] * sA[i * P + j] * sM[i * P + j]);
            const float rji = fmaf(sP[j * P + i], sS[j * P + i], sB[j] * sA[j * P + i] * sM[j * P + i]);
            x += rij - rji;
            y = fmaf(sA[i * P + j], sM[i * P + j], y);
        }
        dG[i] = x, rb[i] = y;
    }
    __syncthreads();
    if (tid == 0)
        tc_gdn_bwy_dgdb(rk2, dG, rb, sG, hdh + ((long long)bh * NT + n) * (K / TC_C), K, L, H, h, row0, dg, db);
}

/* Pass 6 for bf16 inputs: tc_gdn_bwy_f32's outputs, its products on tensor cores, two CTAs an SM
 * (tc_gdn_bwy_bf16_smem). grid (NT, B*H), 256 threads; warp w's 16 x 32 block of each 64 x 64
 * product, rows mw .., columns nw .., acc[m] the m16n8 tile of columns nw + 8m (lane: gi, ti):
 * the same (i, j) in every product, so the fp32 matrix sSM is only ever read and written at the
 * elements of the thread that holds them, up to the dg/db epilogue. q, k, v, beta, dO and dq, dk,
 * dv in bf16 (the inputs as the caller gave them), dg, db fp32 (either may be NULL); u as the
 * forward's bf16 hi + lo planes u, u_lo. Of the 64 x 64 matrices only T keeps planes from the
 * inversion to the end (T^T's fragments by ldmatrix.trans); S and M wait in sSM's two triangles
 * for dP and dTm, which turn them into the epilogue's terms; dW K^T starts dA's accumulators. */
__global__ void TC_BOUNDS(256, tc_gdn_bwy_bf16_smem())
    tc_gdn_bwy_bf16(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v, const __nv_bfloat16 *beta,
                    const float *g, const __nv_bfloat16 *dO, const __nv_bfloat16 *u, const __nv_bfloat16 *u_lo,
                    const float *du, const float *wsW, const float *dqh, const float *dks, const float *hdh,
                    __nv_bfloat16 *dq, __nv_bfloat16 *dk, __nv_bfloat16 *dv, float *dg, float *db, int T, int H, int K,
                    int V, int NT, float scale)
{
    constexpr int P = TC_F32P, CC = TC_C * TC_F32P, CT = TC_C * TC_TP;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sSM = reinterpret_cast<float *>(tc_smem);
    __nv_bfloat16 *aT = reinterpret_cast<__nv_bfloat16 *>(sSM + CC), *wk = aT + 2 * CT; /* T's planes, the work area */
    float *sG = reinterpret_cast<float *>(wk + TC_BWY_WORK * CT), *sB = sG + TC_C, *sE = sB + TC_C, *rdv = sE + TC_C;
    const int n = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int wr = (tid >> 5) & 3, mw = 16 * wr, nw = 32 * (tid >> 7); /* wr: this warp's row block */
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    const float *Wn = wsW + ((long long)bh * NT + n) * TC_C * K;

    if (tid < TC_C) sB[tid] = tid < L ? __bfloat162float(beta[(row0 + tid) * H + h]) : 0.f;
    tc_gate_cumsum<true>(g, row0 * H + h, H, L, sG); /* synchronises: sB too */
    if (tid < TC_C) sE[tid] = expf(sG[tid]);
    /* K K^T, Q K^T and dW K^T over all channels, in channel order, on tensor cores: q and k exact
     * in bf16, dW as hi + lo, in the work area */
    float dw[4][4], da[4][4];
    {
        __nv_bfloat16 *bQ = wk, *bK = bQ + CT, *bW = bK + CT; /* bW: hi, lo */
        float mk[4][4], sq[4][4];
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) mk[m][e] = sq[m][e] = dw[m][e] = 0.f;
        for (int c0 = 0; c0 < K; c0 += TC_C) {
            for (int i0 = 0; i0 < TC_C * TC_C / 256; i0 += TC_BWY_LD) {
                float x[TC_BWY_LD];
                __nv_bfloat16 xq[TC_BWY_LD], xk[TC_BWY_LD];
                const __nv_bfloat16 zero = __float2bfloat16_rn(0.f);
#pragma unroll
                for (int it = 0; it < TC_BWY_LD; it++) { /* the loads first: TC_BWY_LD of each in flight */
                    const int idx = tid + 256 * (i0 + it), j = idx / TC_C, c = idx % TC_C;
                    const long long src = ((row0 + j) * H + h) * K + c0 + c;
                    x[it] = j < L ? Wn[j * K + c0 + c] : 0.f;
                    xq[it] = j < L ? q[src] : zero;
                    xk[it] = j < L ? k[src] : zero;
                }
#pragma unroll
                for (int it = 0; it < TC_BWY_LD; it++) {
                    const int idx = tid + 256 * (i0 + it), at = idx / TC_C * TC_TP + idx % TC_C;
                    const __nv_bfloat16 hi = __float2bfloat16_rn(x[it]);
                    bQ[at] = xq[it];
                    bK[at] = xk[it];
                    bW[at] = hi;
                    bW[CT + at] = __float2bfloat16_rn(x[it] - __bfloat162float(hi));
                }
            }
            __syncthreads();
#pragma unroll
            for (int ks = 0; ks < 4; ks++) {
                /* K's four B fragments, then one A fragment at a time (12 registers, not 18) */
                uint32_t bk[4][2], fa[4];
#pragma unroll
                for (int m = 0; m < 4; m++) tc_frag_b(&bk[m][0], &bk[m][1], bK, TC_TP, nw + 8 * m, 16 * ks);
                tc_frag_a(fa, bK, TC_TP, mw, 16 * ks);
#pragma unroll
                for (int m = 0; m < 4; m++) tc_mma(mk[m], fa, bk[m][0], bk[m][1]);
                tc_frag_a(fa, bQ, TC_TP, mw, 16 * ks);
#pragma unroll
                for (int m = 0; m < 4; m++) tc_mma(sq[m], fa, bk[m][0], bk[m][1]);
                tc_frag_a(fa, bW, TC_TP, mw, 16 * ks);
#pragma unroll
                for (int m = 0; m < 4; m++) tc_mma(dw[m], fa, bk[m][0], bk[m][1]);
                tc_frag_a(fa, bW + CT, TC_TP, mw, 16 * ks);
#pragma unroll
                for (int m = 0; m < 4; m++) tc_mma(dw[m], fa, bk[m][0], bk[m][1]);
            }
            __syncthreads(); /* the tiles are rewritten next */
        }
        /* A (fp32, for the inversion) in the work area; S_ij (j <= i) at sSM[i][j], M_ij (j < i) at
         * sSM[j][i]; dA's accumulators start as dW K^T Diag(e) */
        float *sA = reinterpret_cast<float *>(wk);
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = mw + gi + 8 * (e >> 1), j = nw + 8 * m + 2 * ti + (e & 1);
                const float E = expf(sG[i] - sG[j]);
                const float x = (j < i && i < L) ? mk[m][e] * E : 0.f;
                sA[i * P + j] = x * sB[i];
                if (j <= i) sSM[i * P + j] = i < L ? sq[m][e] : 0.f;
                if (j < i) sSM[j * P + i] = x;
                da[m][e] = dw[m][e] * sE[j];
            }
    }
    __syncthreads();
    {
        float *sA = reinterpret_cast<float *>(wk), *sT = sA + CC, *sInv = sT + CC;
        tc_gdn_invert(sA, sT, sInv); /* synchronises */
        /* T (zero above its diagonal) as hi + lo planes: T^T's fragments come from them by ldmatrix.trans */
        for (int idx = tid; idx < TC_C * TC_C; idx += 256) {
            const int i = idx / TC_C, j = idx % TC_C;
            const float x = sT[i * P + j];
            const __nv_bfloat16 hi = __float2bfloat16_rn(x);
            aT[i * TC_TP + j] = hi;
            aT[CT + i * TC_TP + j] = __float2bfloat16_rn(x - __bfloat162float(hi));
        }
    }
    __syncthreads(); /* sT read: the V tiles take its memory */

    /* over V: dP = scale E (dO u^T), dA += du v^T; dv_j = beta_j (T^T du)_j and its part of db. dO
     * and v exact in bf16, u as the forward's hi + lo, du split into hi + lo (its rows: du as A, and
     * du as T^T du's B by ldmatrix.trans) */
    float dp[4][4], dbv[2] = {0.f, 0.f};
#pragma unroll
    for (int m = 0; m < 4; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) dp[m][e] = 0.f;
    __nv_bfloat16 *bO = wk, *bV = bO + CT, *bU = bV + CT, *bD = bU + 2 * CT;
    for (int c0 = 0; c0 < V; c0 += TC_C) {
        for (int i0 = 0; i0 < TC_C * TC_C / 256; i0 += TC_BWY_LD) {
            float x[TC_BWY_LD];
            __nv_bfloat16 xo[TC_BWY_LD], xv[TC_BWY_LD], xu[TC_BWY_LD], xl[TC_BWY_LD];
            const __nv_bfloat16 zero = __float2bfloat16_rn(0.f);
#pragma unroll
            for (int it = 0; it < TC_BWY_LD; it++) { /* the loads first: TC_BWY_LD of each in flight */
                const int idx = tid + 256 * (i0 + it), j = idx / TC_C, c = idx % TC_C;
                const long long src = ((row0 + j) * H + h) * V + c0 + c;
                const bool in = j < L;
                x[it] = in ? du[src] : 0.f;
                xo[it] = in ? dO[src] : zero;
                xv[it] = in ? v[src] : zero;
                xu[it] = in ? u[src] : zero;
                xl[it] = in ? u_lo[src] : zero;
            }
#pragma unroll
            for (int it = 0; it < TC_BWY_LD; it++) {
                const int idx = tid + 256 * (i0 + it), at = idx / TC_C * TC_TP + idx % TC_C;
                const __nv_bfloat16 hi = __float2bfloat16_rn(x[it]);
                bO[at] = xo[it];
                bV[at] = xv[it];
                bU[at] = xu[it];
                bU[CT + at] = xl[it];
                bD[at] = hi;
                bD[CT + at] = __float2bfloat16_rn(x[it] - __bfloat162float(hi));
            }
        }
        __syncthreads();
        float tdu[4][4]; /* T^T du */
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) tdu[m][e] = 0.f;
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {
            if (ks >= wr) { /* warp-uniform: T^T is zero left of the diagonal block */
                uint32_t fa[4], fl[4];
                tc_frag_at_ldsm(fa, aT, TC_TP, mw, 16 * ks);
                tc_frag_at_ldsm(fl, aT + CT, TC_TP, mw, 16 * ks);
#pragma unroll
                for (int m = 0; m < 4; m++) { /* tc_mma3's order: hi hi, lo hi, hi lo */
                    uint32_t bd[4];
                    tc_frag_b_kn2_ldsm(bd, bD, CT, TC_TP, nw + 8 * m, 16 * ks);
                    tc_mma(tdu[m], fa, bd[0], bd[1]);
                    tc_mma(tdu[m], fl, bd[0], bd[1]);
                    tc_mma(tdu[m], fa, bd[2], bd[3]);
                }
            }
            uint32_t fo[4];
            tc_frag_a(fo, bO, TC_TP, mw, 16 * ks);
#pragma unroll
            for (int m = 0; m < 4; m++) {
                uint32_t b0, b1;
                tc_frag_b(&b0, &b1, bU, TC_TP, nw + 8 * m, 16 * ks);
                tc_mma(dp[m], fo, b0, b1);
                tc_frag_b(&b0, &b1, bU + CT, TC_TP, nw + 8 * m, 16 * ks);
                tc_mma(dp[m], fo, b0, b1);
            }
            tc_bwy_mma2(da, bD, bV, mw, nw, ks);
        }
        /* dv_j = beta_j (T^T du)_j, and (T^T du)_j . v_j into db's rows; a lane's two adjacent
         * columns (e, e + 1) as one bf16 pair */
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int j = mw + gi + 8 * r;
                if (j >= L) continue;
                const long long at = ((row0 + j) * H + h) * V + c0 + nw + 8 * m + 2 * ti;
                const float t0 = tdu[m][2 * r], t1 = tdu[m][2 * r + 1];
                const __nv_bfloat162 v2 = *reinterpret_cast<const __nv_bfloat162 *>(v + at);
                *reinterpret_cast<__nv_bfloat162 *>(dv + at) = __floats2bfloat162_rn(sB[j] * t0, sB[j] * t1);
                dbv[r] = fmaf(t0, __bfloat162float(v2.x), dbv[r]);
                dbv[r] = fmaf(t1, __bfloat162float(v2.y), dbv[r]);
            }
        __syncthreads(); /* the tiles are rewritten next */
    }
    tc_gdn_rowsum_mma(dbv, reinterpret_cast<float *>(wk), rdv); /* db's dv part, out of the registers */
    /* dP and dA (on and below the diagonal) leave the accumulators as hi + lo planes, dP also in
     * fp32 (sPf, after the planes of dP, dA and Y^T) for the dg epilogue's terms */
    __nv_bfloat16 *aP = wk, *aDA = aP + 2 * CT, *aYt = aDA + 2 * CT;
    float *sPf = reinterpret_cast<float *>(aYt + 2 * CT);
    static_assert((TC_BWY_WORK - 6) * TC_C * TC_TP * 2 >= 4 * CC, "dP in fp32 fits after the planes");
#pragma unroll
    for (int m = 0; m < 4; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int i = mw + gi + 8 * (e >> 1), j = nw + 8 * m + 2 * ti + (e & 1), at = i * TC_TP + j;
            const bool on = j <= i && i < L;
            const float x[2] = {on ? scale * dp[m][e] * expf(sG[i] - sG[j]) : 0.f, on ? sB[j] * da[m][e] : 0.f};
            __nv_bfloat16 *dst[2] = {aP, aDA};
#pragma unroll
            for (int p = 0; p < 2; p++) {
                const __nv_bfloat16 hi = __float2bfloat16_rn(x[p]);
                dst[p][at] = hi;
                dst[p][CT + at] = __float2bfloat16_rn(x[p] - __bfloat162float(hi));
            }
            if (j <= i) sPf[i * P + j] = x[0];
        }
    __syncthreads();
    /* Y = dA T^T (Y_ml = sum_{j <= min(m, l)} dA_mj T_lj), leaving the accumulators as Y^T hi + lo
     * planes; then dTm = -T^T Y strictly below the diagonal, warps skipping the 16-row blocks
     * where dA (right of the diagonal) or T^T (left of it) is zero */
    {
        float y[4][4];
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) y[m][e] = 0.f;
#pragma unroll
        for (int ks = 0; ks < 4; ks++)
            if (ks <= wr) tc_bwy_mma3(y, aDA, aT, mw, nw, ks); /* warp-uniform: Y = dA T^T */
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = mw + gi + 8 * (e >> 1), j = nw + 8 * m + 2 * ti + (e & 1), at = j * TC_TP + i;
                const __nv_bfloat16 hi = __float2bfloat16_rn(y[m][e]);
                aYt[at] = hi;
                aYt[CT + at] = __float2bfloat16_rn(y[m][e] - __bfloat162float(hi));
            }
    }
    __syncthreads(); /* dA read: dM takes its planes */
    /* dM_ij = beta_i dTm_ij E_ij as the symmetric dM + dM^T (hi + lo planes, in dA's); in sSM, R_ij
     * = dP_ij S_ij + beta_i dTm_ij M_ij on and below the diagonal (tc_gdn_bwy_f32's rounding), and
     * dTm_ij M_ij (db's) in M_ij's place above it */
    __nv_bfloat16 *aY = aDA;
    {
        float d[4][4];
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) d[m][e] = 0.f;
#pragma unroll
        for (int ks = 0; ks < 4; ks++)
            if (ks >= wr) tc_bwy_mma3t(d, aT, aYt, mw, nw, ks); /* warp-uniform: dTm = -T^T Y */
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = mw + gi + 8 * (e >> 1), j = nw + 8 * m + 2 * ti + (e & 1);
                if (j > i) continue; /* written by the thread of (j, i) */
                const float dtm = (j < i && i < L) ? -d[m][e] : 0.f, bd = sB[i] * dtm;
                const float x = bd * expf(sG[i] - sG[j]);
                const __nv_bfloat16 hi = __float2bfloat16_rn(x), lo = __float2bfloat16_rn(x - __bfloat162float(hi));
                const float mij = j < i ? sSM[j * P + i] : 0.f;
                aY[i * TC_TP + j] = hi;
                aY[CT + i * TC_TP + j] = lo;
                sSM[i * P + j] = fmaf(sPf[i * P + j], sSM[i * P + j], bd * mij);
                if (j == i) continue;
                aY[j * TC_TP + i] = hi;
                aY[CT + j * TC_TP + i] = lo;
                sSM[j * P + i] = dtm * mij;
            }
    }
    __syncthreads(); /* Y^T and sPf read: the K^T, Q^T, dW^T planes take their memory */

    /* over K: dq, dk, and the rows' parts of dG and db, on tensor cores, per K tile dQ = dqh + P K,
     * BK = T^T dW, dK = dks + P^T Q + (dM + dM^T) K + Diag(beta e) BK; K^T, Q^T exact and dW^T as
     * hi + lo per tile; P^T's and T^T's fragments by ldmatrix.trans */
    float gq[2] = {0.f, 0.f}, gb[2] = {0.f, 0.f}, gk[2] = {0.f, 0.f};
    __nv_bfloat16 *bKt = aY + 2 * CT, *bQt = bKt + CT, *bWt = bQt + CT;
    for (int c0 = 0; c0 < K; c0 += TC_C) {
        /* transposed: element (j, c) to [c][j]; a warp reads along the channels */
        for (int i0 = 0; i0 < TC_C * TC_C / 256; i0 += TC_BWY_LD) {
            float x[TC_BWY_LD];
            __nv_bfloat16 xk[TC_BWY_LD], xq[TC_BWY_LD];
            const __nv_bfloat16 zero = __float2bfloat16_rn(0.f);
#pragma unroll
            for (int it = 0; it < TC_BWY_LD; it++) { /* the loads first: TC_BWY_LD of each in flight */
                const int idx = tid + 256 * (i0 + it), j = idx / TC_C, c = idx % TC_C;
                const long long src = ((row0 + j) * H + h) * K + c0 + c;
                const bool in = j < L;
                x[it] = in ? Wn[j * K + c0 + c] : 0.f;
                xk[it] = in ? k[src] : zero;
                xq[it] = in ? q[src] : zero;
            }
#pragma unroll
            for (int it = 0; it < TC_BWY_LD; it++) {
                const int idx = tid + 256 * (i0 + it), at = idx % TC_C * TC_TP + idx / TC_C;
                const __nv_bfloat16 hi = __float2bfloat16_rn(x[it]);
                bKt[at] = xk[it];
                bQt[at] = xq[it];
                bWt[at] = hi;
                bWt[CT + at] = __float2bfloat16_rn(x[it] - __bfloat162float(hi));
            }
        }
        __syncthreads();
        /* the warp's 32 columns in two halves of 16, one after the other (24 accumulators, not 48,
         * beside the fragments: within ptxas's 128 registers); every sum in the same order */
#pragma unroll 1
        for (int n1 = nw; n1 < nw + 32; n1 += 16) {
            float xq[2][4], xk[2][4], bk[2][4];
#pragma unroll
            for (int m = 0; m < 2; m++)
#pragma unroll
                for (int e = 0; e < 4; e++) xq[m][e] = xk[m][e] = bk[m][e] = 0.f;
#pragma unroll
            for (int ks = 0; ks < 4; ks++) {
                if (ks <= wr) tc_bwy_mma2(xq, aP, bKt, mw, n1, ks); /* warp-uniform */
                if (ks >= wr) {
                    tc_bwy_mma3t(bk, aT, bWt, mw, n1, ks);
                    tc_bwy_mma2t(xk, aP, bQt, mw, n1, ks);
                }
                tc_bwy_mma2(xk, aY, bKt, mw, n1, ks);
            }
            /* a lane's two adjacent columns (e, e + 1) at once: fp32 pairs of dqh, dks, bf16 pairs of
             * q, k, dq, dk; the row sums in the order e, e + 1 */
#pragma unroll
            for (int m = 0; m < 2; m++)
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    const int i = mw + gi + 8 * r;
                    if (i >= L) continue;
                    const long long at = ((row0 + i) * H + h) * K + c0 + n1 + 8 * m + 2 * ti;
                    const float2 qh2 = *reinterpret_cast<const float2 *>(dqh + at);
                    const float2 kh2 = *reinterpret_cast<const float2 *>(dks + at);
                    const __nv_bfloat162 q2 = *reinterpret_cast<const __nv_bfloat162 *>(q + at);
                    const __nv_bfloat162 k2 = *reinterpret_cast<const __nv_bfloat162 *>(k + at);
                    const float qh[2] = {qh2.x, qh2.y}, kh[2] = {kh2.x, kh2.y};
                    const float qi[2] = {__bfloat162float(q2.x), __bfloat162float(q2.y)};
                    const float ki[2] = {__bfloat162float(k2.x), __bfloat162float(k2.y)};
                    const float be = sB[i] * sE[i], bb[2] = {bk[m][2 * r], bk[m][2 * r + 1]};
                    *reinterpret_cast<__nv_bfloat162 *>(dq + at) =
                        __floats2bfloat162_rn(qh[0] + xq[m][2 * r], qh[1] + xq[m][2 * r + 1]);
                    *reinterpret_cast<__nv_bfloat162 *>(dk + at) = __floats2bfloat162_rn(
                        fmaf(be, bb[0], kh[0] + xk[m][2 * r]), fmaf(be, bb[1], kh[1] + xk[m][2 * r + 1]));
#pragma unroll
                    for (int x = 0; x < 2; x++) {
                        gq[r] = fmaf(qi[x], qh[x], gq[r]);
                        gq[r] = fmaf(-ki[x], kh[x], gq[r]);
                        gq[r] = fmaf(be * ki[x], bb[x], gq[r]);
                        gb[r] = fmaf(sE[i] * ki[x], bb[x], gb[r]);
                        gk[r] = fmaf(ki[x], kh[x], gk[r]);
                    }
                }
        }
        __syncthreads(); /* the planes are rewritten next */
    }
    if (!dg && !db) return;
    /* per row: the partials in fragment order, then sSM's terms by one thread a row (R_ij for j <= i
     * below the diagonal, R_ji for j >= i in its column, dTm_ij M_ij for j < i above it); all in
     * the work area */
    float *sR = reinterpret_cast<float *>(wk), *rq = sR + TC_C * 17, *rb = rq + TC_C, *rk2 = rb + TC_C;
    float *dG = rk2 + TC_C;
    tc_gdn_rowsum_mma(gq, sR, rq);
    tc_gdn_rowsum_mma(gb, sR, rb);
    tc_gdn_rowsum_mma(gk, sR, rk2);
    if (tid < TC_C) {
        const int i = tid;
        float x = rq[i], y = rdv[i] + rb[i];
        for (int j = 0; j < TC_C; j++) {
            const float rij = j <= i ? sSM[i * P + j] : 0.f, rji = j >= i ? sSM[j * P + i] : 0.f;
            x += rij - rji;
            if (j < i) y += sSM[j * P + i];
        }
        dG[i] = x, rb[i] = y;
    }
    __syncthreads();
    if (tid == 0)
        tc_gdn_bwy_dgdb(rk2, dG, rb, sG, hdh + ((long long)bh * NT + n) * (K / TC_C), K, L, H, h, row0, dg, db);
}

#endif
