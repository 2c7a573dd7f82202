/* chunk_bwd_kda_tc.cuh: the chunk-parallel backward of KDA (the gated delta rule with a log gate
 * per key channel, g [B,T,H,K], and one beta per (b, t, h)); fp32 inputs, every pass on CUDA
 * cores in exact fp32 (no TF32), for correctness and determinism first. K <= 128 (the chunk's
 * gates of every channel sit in shared memory, as in KDA's forward). bf16 inputs (since
 * 2026-12-07): passes 1, 2 and 4 on tensor cores -- the bf16 forward's tc_gdn_prep_bf16<K, true>
 * and tc_gdn_state_bf16<K, true>, whose H and u planes tc_kda_unsplit turns into the fp32
 * sections passes 5 and 6 read, and GDN's tc_gdn_bscan_bf16<K, true> reading W's planes;
 * tc_kda_widen copies q, k, v, beta, dO into fp32 workspace copies, the fp32 passes 3, 5, 6 run
 * on them and pass 6 rounds dq, dk, dv to bf16 as it stores them; or, with GDN_KDA_BWY=tc in the
 * environment, pass 6 is tc_kda_bwy_bf16<K> (its products on tensor cores, reading the bf16
 * inputs; emulated and ptxas-checked, never yet run on a GPU). Launched by
 * gdn/libgdn_tc.cu (gdn_cuda_bwd_tc, GDN_KDA); runs on the host through gdn/tc_emu.h with
 * TC_HOST_EMU (gdn/tc_emu_check.cc). Emulated, then run on an H100 (tests/gpu/test_gdn_tc passes,
 * 2026-12-07); never timed (see gdn/README.md).
 *
 * The math is gdn/chunk_host_impl.h's stages 6-10 with per-channel gates, in
 * chunk_bwd_gdn_tc.cuh's notation: chunk n (steps t0 .. t0 + L - 1), G_ic the chunk-local
 * inclusive cumsum of channel c, e_ic = exp(G_ic), E_ijc = exp(G_ic - G_jc) (j <= i), H the state
 * entering the chunk and H' = dL/dH_{n+1}; M_ij = sum_c k_ic k_jc E_ijc, A_ij = beta_i M_ij (j <
 * i), T = (I + A)^{-1}, W = T Diag(beta) (K * e), U0 = T Diag(beta) V, u = U0 - W H. Backward:
 *   du_j = scale sum_{i >= j} P_ij dO_i + (k_j * exp(G_{L-1} - G_j))^T H',  P_ij = sum_c q_ic k_jc E_ijc
 *   dH   = Diag(e_{L-1}) H' + scale sum_i (q_i * e_i) dO_i^T - W^T du
 * With dP_ij = scale dO_i . u_j (j <= i; no decay: it sits per channel in E) and dM_ij = beta_i
 * dTm_ij (j < i), dTm = -T^T dA T^T strictly below the diagonal, dA = du (Diag(beta) V)^T + dW
 * (Diag(beta) (K * e))^T on and below it, dW = -du H^T, dBk = T^T dW:
 *   dq_ic = scale e_ic (H dO_i)_c + sum_{j <= i} dP_ij k_jc E_ijc
 *   dk_ic = exp(G_{L-1,c} - G_ic) (H' u_i)_c + sum_{m >= i} dP_mi q_mc E_mic + beta_i e_ic dBk_ic
 *           + sum_{j < i} dM_ij k_jc E_ijc + sum_{m > i} dM_mi k_mc E_mic
 *   dv_j = beta_j (T^T du)_j,  db_i = (T^T du)_i . v_i + sum_c e_ic k_ic dBk_ic + sum_{j<i} dTm_ij M_ij
 * and the gradient of G_ic collects every exp(+-G) per element, the y terms of stage 8 and 9
 * reducing to products of an input with its own gradient's parts:
 *   dG_ic = q_ic dq_ic - k_ic (dks_ic + dkP_ic) + beta_i e_ic k_ic dBk_ic + k_ic (dkMrow_ic - dkMcol_ic)
 * (dks: the state term of dk, dkP the sum over dP, dkMrow / dkMcol the sums over j < i / m > i),
 * and at i = L-1 also z_c = sum_j k_jc dks_jc + e_{L-1,c} (H . H')_c, which carries every later
 * step's dependence on the chunk's gates; dg is the reverse cumsum of dG within the chunk, per
 * channel (chunk_bwd_gla_tc.cuh's argument: the cancellation of q dq - k dk stays within 64
 * steps). Six launches (seven with bf16's widening):
 *   1, 2. the forward's tc_gdn_prep_f32<K, true> and tc_gdn_state_f32<K, true> (W, U0, H of
 *      every chunk, u); bf16: tc_gdn_prep_bf16<K, true>, tc_gdn_state_bf16<K, true, true> (hi + lo
 *      products, as GDN's backward), W's planes
 *      in W's bytes (pass 4 reads them), H's and u's left where nothing is yet (dh's, du's bytes)
 *      and widened to hi + lo in fp32 into hs, u by tc_kda_unsplit;
 *   3. tc_kda_bdu_f32, one CTA per (chunk, b, h): du's local term, P summed term by term;
 *   4. GDN's tc_gdn_bscan_f32<K, true> (chunk_bwd_gdn_tc.cuh: PC, a gate per key channel; bf16:
 *      tc_gdn_bscan_bf16<K, true>, tensor cores), one CTA per (64-column V tile, b, h) walking
 *      the chunks backwards: H' into dh, du += the state term, dS0;
 *   5. tc_kda_bdh_f32, one CTA per (64-row K tile, chunk, b, h): dqh, dks, dW = -du H^T (over W)
 *      and the per-channel (H . H')_c (hdh: a K-vector per chunk, summed in a fixed order);
 *   6. tc_kda_bwy_f32<K, TO> (bf16 with GDN_KDA_BWY=tc: tc_kda_bwy_bf16<K>), one CTA per (chunk,
 *      b, h): M and T again, dP, dA, dTm, then dq, dk, dv, db, dG and dg (the per-channel reverse
 *      cumsum, last row with z).
 * Deterministic: one writer per element, every sum in a fixed order, no atomics. Tail chunk: rows
 * >= L are zeros (beta 0) and never written. Every sum over steps runs over its causal range
 * only, so the NaN positions are those of the chunked algorithm (not yet compared position by
 * position). Supported: K in {64, 128}, V in {64, 128, 256}. */
#ifndef GDN_CHUNK_BWD_KDA_TC_CUH
#define GDN_CHUNK_BWD_KDA_TC_CUH

#include "chunk_bwd_gdn_tc.cuh"

// ---- the workspace ------------------------------------------------------------------------------

/* Byte offsets of KDA's backward workspace: GDN's (tc_gdn_bwd_layout, fp32) with hdh a K-vector
 * per chunk ([BH][NT][K]), then for bf16 inputs the fp32 copies of q, k ([B,T,H,K]), v, dO
 * ([B,T,H,V]) and beta ([B,T,H]). Every section a multiple of 16 bytes. bf16: W is the planes
 * [BH][NT][2][64][K] until pass 5 writes dW (fp32) over them; passes 1 and 2 leave H's planes
 * ([BH][NT][2][V][K]) in dh and u's (hi then lo [B,T,H,V]) in du, sections not yet written (each
 * fits), until tc_kda_unsplit has read them. */
struct tc_kda_bws {
    tc_gdn_bws g;
    unsigned long long q, k, v, dO, beta, total;
};

__host__ __device__ inline tc_kda_bws tc_kda_bwd_layout(bool bf16, long long BH, long long T, int K, int V)
{
    const unsigned long long nt = (unsigned long long)((T + TC_C - 1) / TC_C), bh = (unsigned long long)BH;
    const unsigned long long rows = bh * (unsigned long long)T;
    auto up = [](unsigned long long x) { return (x + 15) / 16 * 16; };
    tc_kda_bws l;
    l.g = tc_gdn_bwd_layout(false, BH, T, K, V);
    l.g.total = up(l.g.hdh + bh * nt * K * 4);
    l.q = l.g.total;
    l.k = l.q + (bf16 ? rows * K * 4 : 0);
    l.v = l.k + (bf16 ? rows * K * 4 : 0);
    l.dO = l.v + (bf16 ? rows * V * 4 : 0);
    l.beta = l.dO + (bf16 ? rows * V * 4 : 0);
    l.total = up(l.beta + (bf16 ? rows * 4 : 0));
    return l;
}

/* bf16 inputs: n elements of x widened to fp32 (exact) into y; grid-stride, any grid */
__global__ void tc_kda_widen(const __nv_bfloat16 *x, float *y, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = __bfloat162float(x[i]);
}

/* bf16 inputs: n fp32 elements of dst from bf16 hi + lo planes (dst = hi + lo, exact in fp32),
 * as the bf16 forward kernels leave W, H and u: src holds blocks of 2 blk elements, the hi plane
 * of blk then the lo plane. nv > 0: a block is [blk / nv][nv] in dst and its transpose in src
 * (hs: [K][V] fp32 from [2][V][K]); nv = 0: the same order. Grid-stride, any grid. */
__global__ void tc_kda_unsplit(const __nv_bfloat16 *src, float *dst, long long n, long long blk, int nv)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long nb = i / blk, r = i % blk;
        const long long s = nb * 2 * blk + (nv > 0 ? (r % nv) * (blk / nv) + r / nv : r);
        dst[i] = __bfloat162float(src[s]) + __bfloat162float(src[s + blk]);
    }
}

// ---- pass 3: du's local term --------------------------------------------------------------------

/* Dynamic shared memory of tc_kda_bdu_f32: q, k tiles (then dO), P, the gates of a 64-channel tile
 * [64][65] */
__host__ __device__ constexpr unsigned tc_kda_bdu_f32_smem()
{
    return (unsigned)(4 * 4 * TC_C * TC_F32P);
}

/* grid (NT, B*H), 256 threads; thread (tx, ty) = (tid % 16, tid / 16) owns rows ty + 16r and
 * columns tx + 16c of each 64 x 64 tile. P_ij = scale sum_c q_ic k_jc E_ijc for j <= i < L (term
 * by term, channels in increasing order, 64 at a time with their gates), then du_j = sum_{i =
 * j}^{L-1} P_ij dO_i into du [B,T,H,V] (rows j < L). */
__global__ void TC_BOUNDS(256, tc_kda_bdu_f32_smem())
    tc_kda_bdu_f32(const float *q, const float *k, const float *g, const float *dO, float *du, int T, int H, int K,
                   int V, float scale)
{
    constexpr int P = TC_F32P;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sX = reinterpret_cast<float *>(tc_smem), *sY = sX + TC_C * P, *sP = sY + TC_C * P, *sG = sP + TC_C * P;
    const int n = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    float p[4][4];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) p[r][c] = 0.f;
    for (int c0 = 0; c0 < K; c0 += TC_C) {
        tc_gdn_tile(q + (row0 * H + h) * K + c0, (long long)H * K, L, sX);
        tc_gdn_tile(k + (row0 * H + h) * K + c0, (long long)H * K, L, sY);
        tc_gla_cumsum(g, row0 * H + h, H, K, c0, TC_C, L, sG, P); /* synchronises: the tiles too */
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int i = ty + 16 * r, j = tx + 16 * c;
                if (j <= i && i < L)
                    for (int kk = 0; kk < TC_C; kk++)
                        p[r][c] = fmaf(sX[i * P + kk] * sY[j * P + kk], expf(sG[i * P + kk] - sG[j * P + kk]), p[r][c]);
            }
        __syncthreads(); /* the tiles and gates are rewritten next */
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = ty + 16 * r, j = tx + 16 * c;
            sP[i * P + j] = (j <= i && i < L) ? scale * p[r][c] : 0.f;
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
                for (int i = j; i < L; i++) x = fmaf(sP[i * P + j], sX[i * P + tx + 16 * c], x);
                du[((row0 + j) * H + h) * V + c0 + tx + 16 * c] = x;
            }
        }
        __syncthreads(); /* the dO tile is rewritten next */
    }
}

// ---- pass 5: the products with H and H' ---------------------------------------------------------

/* Dynamic shared memory of tc_kda_bdh_f32: H, H' [64][65] (rows: key channels), dO, du, u
 * [64][65] (rows: steps), the gates of this K tile [64][65], the row sums [64][17] and [64]. */
__host__ __device__ constexpr unsigned tc_kda_bdh_f32_smem()
{
    return (unsigned)(4 * (6 * TC_C * TC_F32P + TC_C * 17 + TC_C));
}

/* grid (K/64, NT, B*H), 256 threads; tc_gdn_bdh_f32 with a gate per key channel: thread (tx, ty)
 * owns rows i = ty + 16r (steps) and key channels c = kt 64 + tx + 16cc of the outputs, summed
 * over all V in increasing column order,
 *   dqh_ic = scale e_ic (H dO_i)_c,   dks_ic = exp(G_{L-1,c} - G_ic) (H' u_i)_c   ([B,T,H,K], i < L),
 *   dW_ic  = -(H du_i)_c (wsW's chunk block, every row: du is 0 past L),
 * and hdh[bh][n][c] = (H . H')_c, the sum over V of channel c's row (each thread its columns in
 * order, the 16 partials of a row in thread order). */
__global__ void TC_BOUNDS(256, tc_kda_bdh_f32_smem())
    tc_kda_bdh_f32(const float *g, const float *dO, const float *hs, const float *dh, const float *u, const float *du,
                   float *wsW, float *dqh, float *dks, float *hdh, int T, int H, int K, int V, int NT, float scale)
{
    constexpr int P = TC_F32P;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sH = reinterpret_cast<float *>(tc_smem), *sD = sH + TC_C * P, *sO = sD + TC_C * P;
    float *sDU = sO + TC_C * P, *sU = sDU + TC_C * P, *sG = sU + TC_C * P, *sR = sG + TC_C * P;
    float *sHD = sR + TC_C * 17;
    const int kt = (int)blockIdx.x, n = (int)blockIdx.y, bh = (int)blockIdx.z, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    tc_gla_cumsum(g, row0 * H + h, H, K, kt * TC_C, TC_C, L, sG, P); /* synchronises */
    float aq[4][4], ak[4][4], aw[4][4], hd[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) aq[r][c] = ak[r][c] = aw[r][c] = 0.f;
    const float *Hn = hs + (((long long)bh * NT + n) * K + kt * TC_C) * V;
    const float *Dn = dh + (((long long)bh * NT + n) * K + kt * TC_C) * V;
    for (int v0 = 0; v0 < V; v0 += TC_C) {
        tc_gdn_bdh_f32_cols(Hn, Dn, dO, du, u, row0, H, h, V, v0, L, sH, aq, aw, ak);
        /* this thread's H . H' elements: channels ty + 16r, columns tx + 16c of the tile */
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int at = (ty + 16 * r) * P + tx + 16 * c;
                hd[r] = fmaf(sH[at], sD[at], hd[r]);
            }
        __syncthreads(); /* the tiles are rewritten next */
    }
    const float *gl = sG + (L - 1) * P;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = ty + 16 * r;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int cl = tx + 16 * c, cc = kt * TC_C + cl;
            wsW[(((long long)bh * NT + n) * TC_C + i) * K + cc] = -aw[r][c];
            if (i < L) {
                dqh[((row0 + i) * H + h) * K + cc] = scale * expf(sG[i * P + cl]) * aq[r][c];
                dks[((row0 + i) * H + h) * K + cc] = expf(gl[cl] - sG[i * P + cl]) * ak[r][c];
            }
        }
    }
    tc_gdn_rowsum(hd, sR, sHD); /* synchronises */
    if (tid < TC_C) hdh[((long long)bh * NT + n) * K + kt * TC_C + tid] = sHD[tid];
}

// ---- pass 6: the WY part and the chunk's gradients ----------------------------------------------

/* Dynamic shared memory of tc_kda_bwy_f32<K>: six 64 x 64 matrices [64][65] (A then dTm, T, M, dP,
 * dA then dG, Y then dM), five tiles [64][65], the inversion's scratch [768], G [64][K+1], beta
 * [64] and the row reduction [64][17]: 223,744 B at K = 128, 207,360 at K = 64 (one CTA an SM). */
__host__ __device__ constexpr unsigned tc_kda_bwy_f32_smem(int K)
{
    return (unsigned)(4 * (11 * TC_C * TC_F32P + 768 + TC_C * (K + 1) + TC_C + TC_C * 17));
}

/* grid (NT, B*H), 256 threads; thread (tx, ty) owns rows ty + 16r, columns tx + 16c of every
 * 64 x 64 matrix and tile. q, k, v, beta, dO fp32 (bf16 inputs: tc_kda_widen's copies), dq, dk,
 * dv in TO (fp32 or bf16, rounded once), dg, db fp32 (either may be NULL). Reads pass 5's dW
 * (wsW), dqh, dks, hdh, pass 4's du and the forward's u. M_ij and every E-weighted sum term by
 * term, channels (and steps) in increasing order. */
template <int K, class TO>
__global__ void TC_BOUNDS(256, tc_kda_bwy_f32_smem(K))
    tc_kda_bwy_f32(const float *q, const float *k, const float *v, const float *beta, const float *g, const float *dO,
                   const float *u, const float *du, const float *wsW, const float *dqh, const float *dks,
                   const float *hdh, TO *dq, TO *dk, TO *dv, float *dg, float *db, int T, int H, int V, int NT,
                   float scale)
{
    constexpr int P = TC_F32P, CC = TC_C * TC_F32P, LD = K + 1;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sA = reinterpret_cast<float *>(tc_smem), *sT = sA + CC, *sM = sT + CC, *sP = sM + CC, *sDA = sP + CC;
    float *sY = sDA + CC, *sX0 = sY + CC, *sX1 = sX0 + CC, *sX2 = sX1 + CC, *sX3 = sX2 + CC, *sX4 = sX3 + CC;
    float *sInv = sX4 + CC, *sG = sInv + 768, *sB = sG + TC_C * LD, *sR = sB + TC_C;
    const int n = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    const long long rk = (long long)H * K;
    const float *Wn = wsW + ((long long)bh * NT + n) * TC_C * K;

    if (tid < TC_C) sB[tid] = tid < L ? beta[(row0 + tid) * H + h] : 0.f;
    tc_gla_cumsum(g, row0 * H + h, H, K, 0, K, L, sG, LD); /* synchronises: sB too */
    /* M_ij = sum_c k_ic k_jc E_ijc (j < i) and dW (K * e)^T (j <= i), channels in order */
    float mk[4][4], dw[4][4];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) mk[r][c] = dw[r][c] = 0.f;
    for (int c0 = 0; c0 < K; c0 += TC_C) {
        tc_gdn_tile(k + (row0 * H + h) * K + c0, rk, L, sX1);
        tc_gdn_tile(Wn + c0, K, L, sX2);
        __syncthreads();
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int i = ty + 16 * r, j = tx + 16 * c;
                if (i >= L || j > i) continue;
                const float *gi = sG + i * LD + c0, *gj = sG + j * LD + c0;
                float m = mk[r][c], x = dw[r][c];
                for (int kk = 0; kk < TC_C; kk++) {
                    const float kj = sX1[j * P + kk];
                    if (j < i) m = fmaf(sX1[i * P + kk] * kj, expf(gi[kk] - gj[kk]), m);
                    x = fmaf(sX2[i * P + kk], kj * expf(gj[kk]), x);
                }
                mk[r][c] = m, dw[r][c] = x;
            }
        __syncthreads(); /* the tiles are rewritten next */
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = ty + 16 * r, j = tx + 16 * c, at = i * P + j;
            const float m = (j < i && i < L) ? mk[r][c] : 0.f;
            sM[at] = m;
            sA[at] = m * sB[i];
        }
    __syncthreads();
    tc_gdn_invert(sA, sT, sInv); /* synchronises; sA is free */

    /* over V: dP = scale dO u^T, du v^T; dv_j = beta_j (T^T du)_j and its part of db */
    float dp[4][4], da[4][4], dbv[4];
    tc_gdn_bwy_over_v(v, dO, u, du, sT, sB, sX0, dv, L, H, h, V, row0, dp, da, dbv);
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = ty + 16 * r, j = tx + 16 * c, at = i * P + j;
            const bool on = j <= i && i < L;
            sP[at] = on ? scale * dp[r][c] : 0.f;
            sDA[at] = on ? sB[j] * (dw[r][c] + da[r][c]) : 0.f;
        }
    __syncthreads();
    /* Y = dA T^T (Y_ml = sum_{j <= min(m, l)} dA_mj T_lj), then dTm = -T^T Y strictly below the
     * diagonal into sA, then dM_ij = beta_i dTm_ij into sY */
    tc_gdn_bwy_dtm(sDA, sT, sY, sA, L);
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = ty + 16 * r, j = tx + 16 * c;
            sY[i * P + j] = (j < i && i < L) ? sB[i] * sA[i * P + j] : 0.f;
        }
    __syncthreads();

    /* over K, 64 channels at a time: dq, dk, dG and the rows' part of db; dg as the per-channel
     * reverse cumsum of dG (in sDA) */
    float gb[4] = {0.f, 0.f, 0.f, 0.f};
    float *sDG = sDA;
    const float *gl = sG + (L - 1) * LD;
    for (int c0 = 0; c0 < K; c0 += TC_C) {
        tc_gdn_bwy_ktiles(q, k, Wn, dqh, dks, row0, H, h, K, c0, L, sX0);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = ty + 16 * r;
            if (i >= L) continue;
            const float bi = sB[i];
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int cc = tx + 16 * c;
                const float *G = sG + c0 + cc, gi = G[i * LD];
                const float qi = sX0[i * P + cc], ki = sX1[i * P + cc], ei = expf(gi);
                float xq = sX3[i * P + cc]; /* dq: the state term, then sum_{j <= i} dP_ij k_jc E_ijc */
                for (int j = 0; j <= i; j++) xq = fmaf(sP[i * P + j], sX1[j * P + cc] * expf(gi - G[j * LD]), xq);
                float xk = sX4[i * P + cc]; /* dk's state and dP terms: sum_{m >= i} dP_mi q_mc E_mic */
                for (int m = i; m < L; m++) xk = fmaf(sP[m * P + i], sX0[m * P + cc] * expf(G[m * LD] - gi), xk);
                float bk = 0.f; /* dBk_ic = sum_{m >= i} T_mi dW_mc */
                for (int m = i; m < L; m++) bk = fmaf(sT[m * P + i], sX2[m * P + cc], bk);
                float mr = 0.f; /* sum_{j < i} dM_ij k_jc E_ijc */
                for (int j = 0; j < i; j++) mr = fmaf(sY[i * P + j], sX1[j * P + cc] * expf(gi - G[j * LD]), mr);
                float mc = 0.f; /* sum_{m > i} dM_mi k_mc E_mic */
                for (int m = i + 1; m < L; m++) mc = fmaf(sY[m * P + i], sX1[m * P + cc] * expf(G[m * LD] - gi), mc);
                const float wk = bi * ei * bk;
                tc_gdn_put(dq + ((row0 + i) * H + h) * K + c0 + cc, xq);
                tc_gdn_put(dk + ((row0 + i) * H + h) * K + c0 + cc, xk + wk + mr + mc);
                sDG[i * P + cc] = qi * xq + ki * (wk + mr - mc - xk);
                gb[r] = fmaf(ei * ki, bk, gb[r]);
            }
        }
        __syncthreads(); /* sDG complete */
        if (dg && tid < TC_C) {
            const int c = tid;
            float z = 0.f; /* z_c = sum_j k_jc dks_jc + e_{L-1,c} (H . H')_c */
            for (int j = 0; j < L; j++) z = fmaf(sX1[j * P + c], sX4[j * P + c], z);
            z = fmaf(expf(gl[c0 + c]), hdh[((long long)bh * NT + n) * K + c0 + c], z);
            float run = z;
            for (int i = L - 1; i >= 0; i--) {
                run += sDG[i * P + c];
                dg[((row0 + i) * H + h) * K + c0 + c] = run;
            }
        }
        __syncthreads(); /* the tiles and sDG are rewritten next */
    }
    if (!db) return;
    /* db_i = (T^T du)_i . v_i + sum_c e_ic k_ic dBk_ic + sum_{j < i} dTm_ij M_ij */
    float *rb = sX0, *rdv = sX0 + TC_C;
    tc_gdn_rowsum(gb, sR, rb);
    tc_gdn_rowsum(dbv, sR, rdv);
    if (tid < L) {
        const int i = tid;
        float y = rdv[i] + rb[i];
        for (int j = 0; j < i; j++) y = fmaf(sA[i * P + j], sM[i * P + j], y);
        db[(row0 + i) * H + h] = y;
    }
}

/* Pass 6 for bf16 inputs on tensor cores (tc_kda_bwy_bf16<K>): tc_kda_bwy_f32's outputs, its
 * products as mma.sync m16n8k16 with fp32 accumulation, fp32 operands as bf16 hi + lo (tc_mma3's
 * hi hi, lo hi, hi lo), bf16 inputs as they are. GDN's pass 6 (tc_gdn_bwy_bf16) with KDA's gates
 * per key channel: a product that carries E_ijc = exp(G_ic - G_jc) cannot take the decay out of
 * the sum over c (M) or over j (dq, dk), so, as the forward's A (tc_gdn_prep_bf16<K, true>), the
 * 16 x 16 diagonal blocks are summed term by term on CUDA cores and the blocks off them on tensor
 * cores through a reference row r = 16s (s = 1, 2, 3) between the two indices: E_ijc =
 * exp(G_ic - G_rc) exp(G_rc - G_jc) for j < r <= i, each factor <= 1 (the gates are <= 0), so
 * nothing overflows. R_s = K * exp(-|G - G_r|) (per row and channel: k_jc exp(G_rc - G_jc) above
 * row r, k_jc exp(G_jc - G_rc) from it on) and Q_s = Q * exp(G - G_r) (rows >= r) are staged per
 * 32 key channels; block row I (rows 16I ..) takes r = 16I for the blocks left of its diagonal
 * (M, dq and dk's sum over dM_ij, j < i) and r = 16(I + 1) for those right of it (dk's sums over
 * dP_mi, dM_mi, m > i), the factor of the row index applied to the accumulators. The products
 * without a decay in them are GDN's: dW (K * e)^T, dO u^T, du v^T, T^T du, Y = dA T^T, dTm =
 * -T^T Y, T^T dW. dP and dM leave their accumulators as the symmetric dP + dP^T and dM + dM^T
 * (hi + lo planes): the blocks left of a row block's diagonal hold dP_ij, those right of it dP_mi,
 * so one A operand serves both sides. Inputs and outputs as tc_kda_bwy_f32<K, bf16>'s but q, k, v,
 * beta, dO read as the caller's bf16 (no widened copies). */

/* Row stride of the 32-channel bf16 planes of tc_kda_bwy_bf16 (80 bytes: a 16-byte multiple for
 * ldmatrix; 20 words, eight rows at 8 distinct 4-word bank groups) */
#define TC_KBWY_NP 40

/* The work area of tc_kda_bwy_bf16 in bytes: the largest of the phases -- the last: the planes of
 * dP + dP^T and dM + dM^T [64][72] x 4, then per 32 key channels R_1..3, Q_1..3, dW (hi + lo each)
 * and k, q [64][40] x 16, and dG [64][33] fp32 */
#define TC_KBWY_WORK (4 * TC_C * TC_TP * 2 + 16 * TC_C * TC_KBWY_NP * 2 + TC_C * 33 * 4)

/* Dynamic shared memory of tc_kda_bwy_bf16<K>: M then dTm M in fp32 [64][65], T's hi + lo planes,
 * the work area, G [64][K+1], beta and db's dv part [64], the diagonal blocks of dP and dM in fp32
 * [2][4][16][17]: 204,544 B at K = 128, 188,160 at K = 64 (one CTA an SM). */
__host__ __device__ constexpr unsigned tc_kda_bwy_bf16_smem(int K)
{
    return (unsigned)(4 * TC_C * TC_F32P + 2 * TC_C * TC_TP * 2 + TC_KBWY_WORK + 4 * TC_C * (K + 1) + 4 * 2 * TC_C +
                      4 * 2 * 4 * 16 * 17);
}
static_assert(TC_KBWY_WORK >= 4 * (2 * TC_C * TC_F32P + 768) && TC_KBWY_WORK >= 6 * TC_C * TC_TP * 2 &&
                  TC_KBWY_WORK >= 11 * TC_C * TC_KBWY_NP * 2,
              "the work area holds A, T and the inversion's scratch, the V tiles, phase 1's planes");
static_assert(tc_kda_bwy_bf16_smem(128) <= 227 * 1024, "pass 6 (bf16, tensor cores) fits a CTA's 227 KB at K = 128");

/* (x as bf16 hi + lo) into dst[at] and dst[pl + at] */
__device__ __forceinline__ void tc_kbwy_split(__nv_bfloat16 *dst, int pl, int at, float x)
{
    const __nv_bfloat16 hi = __float2bfloat16_rn(x);
    dst[at] = hi;
    dst[pl + at] = __float2bfloat16_rn(x - __bfloat162float(hi));
}

/* acc[m] (m < NM, columns n0 + 8m) += A B, A's hi + lo fragments fa, fl (rows r0 .., the k block
 * k0), B = X stored [k][n] as hi + lo planes (X, X + pl, stride ld) by ldmatrix.trans: tc_mma3's
 * order (hi hi, lo hi, hi lo), LL adding lo lo. The products over the channel tiles (dq, dk, dBk)
 * take LL: without it dg was up to 8.9e-6 emulated, with it 5.6e-6 (the lo lo term in M, dW (K e)^T
 * or T^T du changed nothing) */
template <int NM, bool LL>
__device__ __forceinline__ void tc_kbwy_mma3kn(float (&acc)[NM][4], const uint32_t fa[4], const uint32_t fl[4],
                                               const __nv_bfloat16 *X, int pl, int ld, int n0, int k0)
{
#pragma unroll
    for (int m = 0; m < NM; m++) {
        uint32_t b[4];
        tc_frag_b_kn2_ldsm(b, X, pl, ld, n0 + 8 * m, k0);
        tc_mma(acc[m], fa, b[0], b[1]);
        tc_mma(acc[m], fl, b[0], b[1]);
        tc_mma(acc[m], fa, b[2], b[3]);
        if (LL) tc_mma(acc[m], fl, b[2], b[3]);
    }
}

/* grid (NT, B*H), 256 threads. The 64 x 64 products (M, dW (K e)^T, dP, dA, T^T du, Y, dTm): warp
 * w's 16 x 32 block, rows mw = 16 (w % 4) .., columns nw = 32 (w / 4) .., as tc_gdn_bwy_bf16 (the
 * same (i, j) in every one, so sM is only read and written at its own thread's elements until the
 * db epilogue); the products over a 32-channel tile (dq, dk, T^T dW): rows mw .., channels 16 (w /
 * 4) .. of the tile. Every sum in a fixed order; deterministic. */
template <int K>
__global__ void TC_BOUNDS(256, tc_kda_bwy_bf16_smem(K))
    tc_kda_bwy_bf16(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v, const __nv_bfloat16 *beta,
                    const float *g, const __nv_bfloat16 *dO, const float *u, const float *du, const float *wsW,
                    const float *dqh, const float *dks, const float *hdh, __nv_bfloat16 *dq, __nv_bfloat16 *dk,
                    __nv_bfloat16 *dv, float *dg, float *db, int T, int H, int V, int NT, float scale)
{
    constexpr int P = TC_F32P, CC = TC_C * TC_F32P, CT = TC_C * TC_TP, NP = TC_KBWY_NP, CH = TC_C * NP, LG = K + 1;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sM = reinterpret_cast<float *>(tc_smem);
    __nv_bfloat16 *aT = reinterpret_cast<__nv_bfloat16 *>(sM + CC), *wk = aT + 2 * CT; /* T's planes, the work area */
    float *sG = reinterpret_cast<float *>(reinterpret_cast<unsigned char *>(wk) + TC_KBWY_WORK);
    float *sB = sG + TC_C * LG, *rdv = sB + TC_C, *sDP = rdv + TC_C, *sDM = sDP + 4 * 16 * 17;
    const int n = (int)blockIdx.x, bh = (int)blockIdx.y, b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int wr = (tid >> 5) & 3, mw = 16 * wr, nw = 32 * (tid >> 7); /* wr: this warp's row block */
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    const float *Wn = wsW + ((long long)bh * NT + n) * TC_C * K;
    const __nv_bfloat16 zero = __float2bfloat16_rn(0.f);

    if (tid < TC_C) sB[tid] = tid < L ? __bfloat162float(beta[(row0 + tid) * H + h]) : 0.f;
    tc_gla_cumsum(g, row0 * H + h, H, K, 0, K, L, sG, LG); /* synchronises: sB too */
    /* M_ij = sum_c k_ic k_jc E_ijc (j < i) and dW (K * e)^T, 32 channels at a time in channel
     * order: M's blocks left of the diagonal as R_I R_I^T (tensor cores), its diagonal blocks term
     * by term (CUDA cores, the warps of the column half that holds them), dW (K * e)^T with both
     * factors as hi + lo */
    float dw[4][4], da[4][4];
    {
        __nv_bfloat16 *bR = wk, *bW = bR + 6 * CH, *bE = bW + 2 * CH, *bK = bE + 2 * CH; /* R_s: bR + 2 (s - 1) CH */
        float mk[4][4];
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) mk[m][e] = dw[m][e] = 0.f;
        for (int c0 = 0; c0 < K; c0 += 32) {
            for (int idx = tid; idx < TC_C * 32; idx += 256) {
                const int j = idx / 32, c = idx % 32, at = j * NP + c;
                const bool in = j < L;
                const __nv_bfloat16 kb = in ? k[((row0 + j) * H + h) * K + c0 + c] : zero;
                const float kv = __bfloat162float(kb), gj = sG[j * LG + c0 + c];
                bK[at] = kb;
#pragma unroll
                for (int s = 1; s < 4; s++) {
                    const float gr = sG[16 * s * LG + c0 + c];
                    tc_kbwy_split(bR + 2 * (s - 1) * CH, CH, at, in ? kv * expf(j < 16 * s ? gr - gj : gj - gr) : 0.f);
                }
                tc_kbwy_split(bE, CH, at, in ? kv * expf(gj) : 0.f);
                tc_kbwy_split(bW, CH, at, in ? Wn[j * K + c0 + c] : 0.f);
            }
            __syncthreads();
#pragma unroll
            for (int ks = 0; ks < 2; ks++) {
                uint32_t fa[4], fl[4];
                tc_frag_a(fa, bW, NP, mw, 16 * ks);
                tc_frag_a(fl, bW + CH, NP, mw, 16 * ks);
#pragma unroll
                for (int m = 0; m < 4; m++)
                    if (nw + 8 * m < mw + 16) tc_mma3(dw[m], fa, fl, bE, bE + CH, NP, nw + 8 * m, 16 * ks);
                if (wr > 0) { /* warp-uniform: M's blocks left of the diagonal, r = 16 wr */
                    const __nv_bfloat16 *R = bR + 2 * (wr - 1) * CH;
                    tc_frag_a(fa, R, NP, mw, 16 * ks);
                    tc_frag_a(fl, R + CH, NP, mw, 16 * ks);
#pragma unroll
                    for (int m = 0; m < 4; m++)
                        if (nw + 8 * m < mw) tc_mma3(mk[m], fa, fl, R, R + CH, NP, nw + 8 * m, 16 * ks);
                }
            }
            /* the diagonal block's elements j < i < L, term by term */
#pragma unroll
            for (int m = 0; m < 4; m++) {
                if (nw + 8 * m < mw || nw + 8 * m >= mw + 16) continue; /* warp-uniform */
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int i = mw + gi + 8 * (e >> 1), j = nw + 8 * m + 2 * ti + (e & 1);
                    if (j >= i || i >= L) continue;
                    float x = mk[m][e];
                    for (int c = 0; c < 32; c++)
                        x = fmaf(__bfloat162float(bK[i * NP + c]) * __bfloat162float(bK[j * NP + c]),
                                 expf(sG[i * LG + c0 + c] - sG[j * LG + c0 + c]), x);
                    mk[m][e] = x;
                }
            }
            __syncthreads(); /* the tiles are rewritten next */
        }
        /* A = Diag(beta) M (fp32, for the inversion) in the work area, M (j < i < L) in sM, dA's
         * accumulators start as dW (K * e)^T */
        float *sA = reinterpret_cast<float *>(wk);
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = mw + gi + 8 * (e >> 1), j = nw + 8 * m + 2 * ti + (e & 1);
                const float x = (j < i && i < L) ? mk[m][e] : 0.f;
                sA[i * P + j] = x * sB[i];
                sM[i * P + j] = x;
                da[m][e] = dw[m][e];
            }
    }
    __syncthreads();
    {
        float *sA = reinterpret_cast<float *>(wk), *sT = sA + CC, *sInv = sT + CC;
        tc_gdn_invert(sA, sT, sInv); /* synchronises */
        for (int idx = tid; idx < TC_C * TC_C; idx += 256) {
            const int i = idx / TC_C, j = idx % TC_C;
            tc_kbwy_split(aT, CT, i * TC_TP + j, sT[i * P + j]);
        }
    }
    __syncthreads(); /* sT read: the V tiles take its memory */

    /* over V: dP = scale dO u^T, dA += du v^T; dv_j = beta_j (T^T du)_j and its part of db (as
     * tc_gdn_bwy_bf16; u, fp32 here, split into hi + lo as du is) */
    float dp[4][4], dbv[2] = {0.f, 0.f};
#pragma unroll
    for (int m = 0; m < 4; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) dp[m][e] = 0.f;
    {
        __nv_bfloat16 *bO = wk, *bV = bO + CT, *bU = bV + CT, *bD = bU + 2 * CT;
        for (int c0 = 0; c0 < V; c0 += TC_C) {
            for (int idx = tid; idx < TC_C * TC_C; idx += 256) {
                const int j = idx / TC_C, c = idx % TC_C, at = j * TC_TP + c;
                const long long src = ((row0 + j) * H + h) * V + c0 + c;
                const bool in = j < L;
                bO[at] = in ? dO[src] : zero;
                bV[at] = in ? v[src] : zero;
                tc_kbwy_split(bU, CT, at, in ? u[src] : 0.f);
                tc_kbwy_split(bD, CT, at, in ? du[src] : 0.f);
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
                    tc_kbwy_mma3kn<4, false>(tdu, fa, fl, bD, CT, TC_TP, nw, 16 * ks);
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
#pragma unroll
            for (int m = 0; m < 4; m++)
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    const int j = mw + gi + 8 * r;
                    if (j >= L) continue;
                    const long long at = ((row0 + j) * H + h) * V + c0 + nw + 8 * m + 2 * ti;
                    const float x0 = tdu[m][2 * r], x1 = tdu[m][2 * r + 1];
                    const __nv_bfloat162 v2 = *reinterpret_cast<const __nv_bfloat162 *>(v + at);
                    *reinterpret_cast<__nv_bfloat162 *>(dv + at) = __floats2bfloat162_rn(sB[j] * x0, sB[j] * x1);
                    dbv[r] = fmaf(x0, __bfloat162float(v2.x), dbv[r]);
                    dbv[r] = fmaf(x1, __bfloat162float(v2.y), dbv[r]);
                }
            __syncthreads(); /* the tiles are rewritten next */
        }
    }
    tc_gdn_rowsum_mma(dbv, reinterpret_cast<float *>(wk), rdv); /* db's dv part, out of the registers */
    /* dP as the symmetric dP + dP^T (hi + lo planes; its diagonal blocks in fp32 too, sDP) and dA
     * (on and below the diagonal) leave the accumulators */
    __nv_bfloat16 *aP = wk, *aDA = aP + 2 * CT, *aYt = aDA + 2 * CT;
#pragma unroll
    for (int m = 0; m < 4; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int i = mw + gi + 8 * (e >> 1), j = nw + 8 * m + 2 * ti + (e & 1);
            const bool on = j <= i && i < L;
            const float x = on ? scale * dp[m][e] : 0.f;
            tc_kbwy_split(aDA, CT, i * TC_TP + j, on ? sB[j] * da[m][e] : 0.f);
            if (i / 16 == j / 16) sDP[(i / 16 * 16 + i % 16) * 17 + j % 16] = x;
            if (j > i) continue; /* written by the thread of (j, i) */
            tc_kbwy_split(aP, CT, i * TC_TP + j, x);
            if (j < i) tc_kbwy_split(aP, CT, j * TC_TP + i, x);
        }
    __syncthreads();
    /* Y = dA T^T into Y^T's planes, then dTm = -T^T Y (tc_gdn_bwy_bf16's) */
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
                const int i = mw + gi + 8 * (e >> 1), j = nw + 8 * m + 2 * ti + (e & 1);
                tc_kbwy_split(aYt, CT, j * TC_TP + i, y[m][e]);
            }
    }
    __syncthreads(); /* dA read: dM takes its planes */
    /* dM_ij = beta_i dTm_ij (j < i < L) as the symmetric dM + dM^T (hi + lo planes, in dA's; its
     * diagonal blocks in fp32 too, sDM), and dTm_ij M_ij (db's) over M_ij in sM */
    __nv_bfloat16 *aMs = aDA;
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
                const float dtm = (j < i && i < L) ? -d[m][e] : 0.f, x = sB[i] * dtm;
                if (i / 16 == j / 16) sDM[(i / 16 * 16 + i % 16) * 17 + j % 16] = x;
                sM[i * P + j] = dtm * sM[i * P + j];
                tc_kbwy_split(aMs, CT, i * TC_TP + j, x);
                if (j < i) tc_kbwy_split(aMs, CT, j * TC_TP + i, x);
            }
    }
    __syncthreads(); /* Y^T read: the channel tiles take its memory */

    /* over K, 32 channels at a time: dq, dk, dG and the rows' part of db; dg as the per-channel
     * reverse cumsum of dG. Row block wr's sums: left of its diagonal (r = 16 wr) dq's P R and dk's
     * dM R, right of it (r = 16 (wr + 1)) dk's P^T Q and dM^T R, from wr on T^T dW; the diagonal
     * block term by term */
    float gb[2] = {0.f, 0.f};
    __nv_bfloat16 *bR = aMs + 2 * CT, *bQ = bR + 6 * CH, *bW = bQ + 6 * CH, *bK = bW + 2 * CH, *bQr = bK + CH;
    float *sDG = reinterpret_cast<float *>(bQr + CH);
    const int n1 = nw / 2; /* this warp's 16 channels of the tile */
    for (int c0 = 0; c0 < K; c0 += 32) {
        for (int idx = tid; idx < TC_C * 32; idx += 256) {
            const int j = idx / 32, c = idx % 32, at = j * NP + c;
            const long long src = ((row0 + j) * H + h) * K + c0 + c;
            const bool in = j < L;
            const __nv_bfloat16 kb = in ? k[src] : zero, qb = in ? q[src] : zero;
            const float kv = __bfloat162float(kb), qv = __bfloat162float(qb), gj = sG[j * LG + c0 + c];
            bK[at] = kb;
            bQr[at] = qb;
#pragma unroll
            for (int s = 1; s < 4; s++) {
                const float gr = sG[16 * s * LG + c0 + c];
                tc_kbwy_split(bR + 2 * (s - 1) * CH, CH, at, in ? kv * expf(j < 16 * s ? gr - gj : gj - gr) : 0.f);
                tc_kbwy_split(bQ + 2 * (s - 1) * CH, CH, at, in && j >= 16 * s ? qv * expf(gj - gr) : 0.f);
            }
            tc_kbwy_split(bW, CH, at, in ? Wn[j * K + c0 + c] : 0.f);
        }
        __syncthreads();
        float aq[2][4], amr[2][4], akp[2][4], amc[2][4], bk[2][4];
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) aq[m][e] = amr[m][e] = akp[m][e] = amc[m][e] = bk[m][e] = 0.f;
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {
            if (ks == wr) continue; /* warp-uniform: the diagonal block is the CUDA cores' */
            const __nv_bfloat16 *R = bR + 2 * (ks < wr ? wr - 1 : wr) * CH;
            uint32_t fa[4], fl[4];
            tc_frag_a(fa, aP, TC_TP, mw, 16 * ks);
            tc_frag_a(fl, aP + CT, TC_TP, mw, 16 * ks);
            if (ks < wr)
                tc_kbwy_mma3kn<2, true>(aq, fa, fl, R, CH, NP, n1, 16 * ks);
            else
                tc_kbwy_mma3kn<2, true>(akp, fa, fl, bQ + 2 * wr * CH, CH, NP, n1, 16 * ks);
            tc_frag_a(fa, aMs, TC_TP, mw, 16 * ks);
            tc_frag_a(fl, aMs + CT, TC_TP, mw, 16 * ks);
            if (ks < wr)
                tc_kbwy_mma3kn<2, true>(amr, fa, fl, R, CH, NP, n1, 16 * ks);
            else
                tc_kbwy_mma3kn<2, true>(amc, fa, fl, R, CH, NP, n1, 16 * ks);
        }
#pragma unroll
        for (int ks = 0; ks < 4; ks++)
            if (ks >= wr) { /* warp-uniform: dBk = T^T dW */
                uint32_t fa[4], fl[4];
                tc_frag_at_ldsm(fa, aT, TC_TP, mw, 16 * ks);
                tc_frag_at_ldsm(fl, aT + CT, TC_TP, mw, 16 * ks);
                tc_kbwy_mma3kn<2, true>(bk, fa, fl, bW, CH, NP, n1, 16 * ks);
            }
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int i = mw + gi + 8 * r;
                if (i >= L) continue;
                const int cl = n1 + 8 * m + 2 * ti; /* the lane's two adjacent channels cl, cl + 1 */
                const long long at = ((row0 + i) * H + h) * K + c0 + cl;
                const float2 qh2 = *reinterpret_cast<const float2 *>(dqh + at);
                const float2 kh2 = *reinterpret_cast<const float2 *>(dks + at);
                const float qh[2] = {qh2.x, qh2.y}, kh[2] = {kh2.x, kh2.y};
                float oq[2], ok[2];
#pragma unroll
                for (int x = 0; x < 2; x++) {
                    const int c = cl + x, e = 2 * r + x;
                    const float *G = sG + c0 + c, gic = G[i * LG];
                    const float qi = __bfloat162float(bQr[i * NP + c]), ki = __bfloat162float(bK[i * NP + c]);
                    const float fl = wr > 0 ? expf(gic - G[mw * LG]) : 0.f;
                    const float fr = wr < 3 ? expf(G[(mw + 16) * LG] - gic) : 0.f;
                    float xq = fmaf(fl, aq[m][e], qh[x]), mr = fl * amr[m][e];
                    float xk = fmaf(fr, akp[m][e], kh[x]), mc = fr * amc[m][e];
                    /* the diagonal block: sum_{j <= i} dP_ij k_jc E_ijc, sum_{j < i} dM_ij k_jc E_ijc */
                    const float *dPi = sDP + (mw + i % 16) * 17, *dMi = sDM + (mw + i % 16) * 17;
                    for (int j = mw; j <= i; j++) {
                        const float kE = __bfloat162float(bK[j * NP + c]) * expf(gic - G[j * LG]);
                        xq = fmaf(dPi[j - mw], kE, xq);
                        if (j < i) mr = fmaf(dMi[j - mw], kE, mr);
                    }
                    /* sum_{m >= i} dP_mi q_mc E_mic, sum_{m > i} dM_mi k_mc E_mic */
                    const int me = min(mw + 16, L);
                    for (int mm = i; mm < me; mm++) {
                        const float E = expf(G[mm * LG] - gic), *dPm = sDP + (mw + mm % 16) * 17 + i % 16;
                        xk = fmaf(dPm[0], __bfloat162float(bQr[mm * NP + c]) * E, xk);
                        if (mm > i)
                            mc = fmaf(sDM[(mw + mm % 16) * 17 + i % 16], __bfloat162float(bK[mm * NP + c]) * E, mc);
                    }
                    const float ei = expf(gic), wkx = sB[i] * ei * bk[m][e];
                    oq[x] = xq;
                    ok[x] = xk + wkx + mr + mc;
                    sDG[i * 33 + c] = qi * xq + ki * (wkx + mr - mc - xk);
                    gb[r] = fmaf(ei * ki, bk[m][e], gb[r]);
                }
                *reinterpret_cast<__nv_bfloat162 *>(dq + at) = __floats2bfloat162_rn(oq[0], oq[1]);
                *reinterpret_cast<__nv_bfloat162 *>(dk + at) = __floats2bfloat162_rn(ok[0], ok[1]);
            }
        __syncthreads(); /* every row of sDG stored: the column threads sum it */
        if (dg && tid < 32) {
            const int c = tid;
            float z = 0.f; /* z_c = sum_j k_jc dks_jc + e_{L-1,c} (H . H')_c */
            for (int j = 0; j < L; j++)
                z = fmaf(__bfloat162float(bK[j * NP + c]), dks[((row0 + j) * H + h) * K + c0 + c], z);
            z = fmaf(expf(sG[(L - 1) * LG + c0 + c]), hdh[((long long)bh * NT + n) * K + c0 + c], z);
            float acc = z; /* the reverse cumsum, from the last row (which takes z) */
            for (int i = L - 1; i >= 0; i--) {
                acc += sDG[i * 33 + c];
                dg[((row0 + i) * H + h) * K + c0 + c] = acc;
            }
        }
        __syncthreads(); /* the tiles and sDG are rewritten next */
    }
    if (!db) return;
    /* db_i = (T^T du)_i . v_i + sum_c e_ic k_ic dBk_ic + sum_{j < i} dTm_ij M_ij */
    float *sR = reinterpret_cast<float *>(wk), *rb = sR + TC_C * 17;
    tc_gdn_rowsum_mma(gb, sR, rb);
    if (tid < L) {
        const int i = tid;
        float y = rdv[i] + rb[i];
        for (int j = 0; j < i; j++) y += sM[i * P + j];
        db[(row0 + i) * H + h] = y;
    }
}

#endif
