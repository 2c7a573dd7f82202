/* chunk_fwd_gla_tc.cuh: the chunk-parallel forward of GLA (one log gate g per key channel: g
 * [B,T,H,K]), beside linear attention and SSD in gdn/chunk_fwd_tc.cuh, whose tiles, fragment
 * loaders and state layout it shares. Launched by gdn/libgdn_tc.cu; nvcc only (TC_HOST_EMU:
 * host C++ on gdn/tc_emu.h, as there).
 *
 * The math (gdn/oracle.c: S_t = diag(a_t) S_{t-1} + k_t v_t^T, o_t = scale S_t^T q_t, a_t =
 * exp(g_t) per key channel). Chunk n covers steps t0 = 64n .. t0 + L - 1; G_ic = g_t0,c + ... +
 * g_t0+i,c (inclusive, fp32, sequential per channel), H = the state entering the chunk. For
 * i, j < L:
 *   o_i    = scale [ (q_i * exp(G_i))^T H + sum_{j <= i} P_ij v_j ],
 *   P_ij   = sum_c q_ic k_jc exp(G_ic - G_jc),
 *   H_next = diag(exp(G_{L-1})) H + sum_j (k_j * exp(G_{L-1} - G_j)) v_j^T.
 * Every exponent is <= 0 (log gates <= 0 and j <= i), so nothing overflows, whatever the gates.
 * SSD's factorisation of P into (Q K^T) times one decay per (i, j) does not exist with a decay
 * per channel, and the usual rescaling (q exp(G), k exp(-G)) overflows once a chunk's gates sum
 * past ~88. P is summed here in 16 x 16 blocks: the four diagonal blocks on CUDA cores, term by
 * term, exactly as written; each block (I, J < I) below them on tensor cores, as (Q~ K~^T) with
 * the reference row r = 16 (J + 1) (the first row after block J, so j < r <= i):
 *   Q~_ic = q_ic exp(G_ic - G_rc),  K~_jc = k_jc exp(G_rc - G_jc),  P_ij = sum_c Q~_ic K~_jc,
 * both exponents <= 0 again (FLA's sub-chunk factorisation), both factors as bf16 hi + lo. That is
 * 704 exponentials per channel where the term-by-term triangle took 2080 (measured on the H200
 * before: the outputs kernel, 6.2 ms of GLA's 8.3). The tensor cores also take Q H, P V and the
 * state's K^T V. With a gate of -inf (a reset) the references differ from the oracle as the
 * diagonal terms already did: exp(-inf - -inf) is NaN. The other kernels are chunk_fwd_tc.cuh's with GATE =
 * TC_CHANNEL: the state scan (a decay per state row, a weight per key element) and the fp32
 * outputs; this file holds the bf16 outputs kernel, one CTA per (chunk, 64-column V tile, b, h),
 * which KDA's forward (gdn/chunk_fwd_gdn_tc.cuh) also runs, reading u (hi + lo: VLO) for v.
 * Determinism: one writer per output element, every sum in a fixed order, no atomics. Tail
 * chunk (L < 64): rows j >= L load as zeros (their G repeats G_{L-1}, so every exponent stays
 * finite) and are never written back. On the bf16 path a NaN in v_j reaches rows i < j of its
 * chunk (0 * NaN in P V), as in chunk_fwd_tc.cuh; the fp32 path matches the oracle's NaNs.
 * Supported: K in {64, 128} (the outputs kernel holds the chunk's G for all K channels in shared
 * memory: K = 256 does not fit beside the tiles), V in {64, 128, 256}. */
#ifndef GDN_CHUNK_FWD_GLA_TC_CUH
#define GDN_CHUNK_FWD_GLA_TC_CUH

#include "chunk_fwd_tc.cuh"

// ---- the bf16 outputs -------------------------------------------------------------------------

/* Row i of tc_gla_out_bf16's P, at this offset (floats), holds its columns 0 .. 16 (i / 16) + 15,
 * the blocks J <= I of its row block I (the rest of P is never read), then 4 floats of padding:
 * row strides 20, 36, 52, 68 words, so that the fragment reads of P hit at most two lanes a bank,
 * as the full [64][65] did. tc_gla_p_row(64) = 2816 floats, where the full tile took 4160. */
__host__ __device__ constexpr int tc_gla_p_row(int i)
{
    return 128 * (i / 16) * (i / 16 + 1) + 64 * (i / 16) + (i % 16) * (16 * (i / 16) + 20);
}

/* Dynamic shared memory of tc_gla_out_bf16<K> (and of the GLA backward's dv), in five regions, a
 * region taken over once its first tenant is dead. The body's phases: (A) the loads and the gate
 * cumsum, (B) P's diagonal blocks, (C) the blocks below them, (D) Q~ = q exp(G) while H lands,
 * (E) the products. With a region per buffer it took 145,152 bytes at K = 128, one CTA an SM.
 *   Q    [64][K+8] bf16: q, then Q~ hi in place (A-E)
 *   K|QL [64][K+2] bf16 k (A-C), then [64][K+8] Q~ lo (D-E)
 *   S|H  [2][64][K+8] bf16 C's factors q exp(G - G_r), k exp(G_r - G) hi, lo; then H hi, lo (D-E)
 *   P    tc_gla_p_row(64) fp32 (A-E)
 *   G|V  [64][K+1] fp32 G (A-D), then V^T [64][72] bf16, with VLO its lo plane too (E; its loads
 *        in flight in D, in registers)
 * 113,920 bytes at K = 128 (two CTAs an SM), 64,768 (VLO 66,560) at K = 64 (three). The floor
 * while H lands during D is D's live set Q + QL + G + P + H: landing H where G was instead would
 * leave its loads nothing to overlap. */
__host__ __device__ constexpr unsigned tc_gla_out_q_bytes(int K)
{
    return (unsigned)(TC_C * (K + 8) * 2);
}
__host__ __device__ constexpr unsigned tc_gla_out_g_bytes(int K, bool vlo)
{
    return (unsigned)(TC_C * (K + 1) * 4 > (vlo ? 2 : 1) * TC_C * TC_TP * 2 ? TC_C * (K + 1) * 4
                                                                            : (vlo ? 2 : 1) * TC_C * TC_TP * 2);
}
__host__ __device__ constexpr unsigned tc_gla_out_bf16_smem(int K, bool vlo = false)
{
    return 4 * tc_gla_out_q_bytes(K) + (unsigned)tc_gla_p_row(TC_C) * 4 + tc_gla_out_g_bytes(K, vlo);
}

/* Threads of tc_gla_out_bf16: the tensor-core products take warps 0..3 (16 rows each), the
 * scores P and the loads all eight */
#define TC_GLA_OUT_THREADS 256

/* The body of tc_gla_out_bf16 (below) for a CTA at (chunk n, V tile vt, bh), also the GLA
 * backward's dv pass (gdn/chunk_bwd_gla_tc.cuh): with REV the chunk's rows reversed (tile row r
 * is step t0 + L - 1 - r, the gates as tc_gla_cumsum<true> gives them); hscale multiplies the
 * state term (the forward: scale), scale the scores P. */
template <int K, bool VLO, bool REV>
__device__ __forceinline__ void tc_gla_rows_out_bf16(const __nv_bfloat16 *q, const __nv_bfloat16 *k,
                                                     const __nv_bfloat16 *v, const float *g, const __nv_bfloat16 *hs,
                                                     __nv_bfloat16 *o, int T, int H, int V, int NT, float scale,
                                                     float hscale, const __nv_bfloat16 *v_lo)
{
    constexpr int LD = K + 8, LG = K + 1, LK = K + 2; /* LK: odd words a row, conflict-free down a column */
    TC_DYNAMIC_SMEM(tc_smem);
    /* the regions of tc_gla_out_bf16_smem, each with its tenants */
    __nv_bfloat16 *sQ = reinterpret_cast<__nv_bfloat16 *>(tc_smem);
    __nv_bfloat16 *sK = reinterpret_cast<__nv_bfloat16 *>(tc_smem + tc_gla_out_q_bytes(K)), *sQL = sK; /* [j][c] */
    __nv_bfloat16 *sH = reinterpret_cast<__nv_bfloat16 *>(tc_smem + 2 * tc_gla_out_q_bytes(K));
    __nv_bfloat16 *sHL = sH + TC_C * LD;
    float *sP = reinterpret_cast<float *>(tc_smem + 4 * tc_gla_out_q_bytes(K)); /* row i at tc_gla_p_row(i) */
    float *sG = sP + tc_gla_p_row(TC_C);
    __nv_bfloat16 *sVT = reinterpret_cast<__nv_bfloat16 *>(sG), *sVL = sVT + TC_C * TC_TP; /* sVL: VLO only */
    const int n = (int)blockIdx.x, vt = (int)blockIdx.y, bh = (int)blockIdx.z;
    const int b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)b * T + t0;
    /* tile row r is step t0 + r, or with REV step t0 + L - 1 - r */
    const long long first = row0 + (REV ? L - 1 : 0), dir = REV ? -1 : 1;

    tc_load_rows_async(q + (first * H + h) * K, dir * H * K, L, K, sQ, LD); /* tc_gla_cumsum waits */
    for (int idx = tid; idx < TC_C * K / 2; idx += TC_GLA_OUT_THREADS) {    /* bf16 pairs, in flight at once */
        const int j = idx / (K / 2), c = 2 * (idx % (K / 2));
        if (j < L)
            tc_cp4(sK + j * LK + c, k + ((first + dir * j) * H + h) * K + c);
        else
            *reinterpret_cast<uint32_t *>(sK + j * LK + c) = 0u;
    }
    for (int idx = tid; idx < 4 * 256; idx += TC_GLA_OUT_THREADS) { /* the diagonal blocks' upper triangles */
        const int i = 16 * (idx / 256) + (idx / 16) % 16, j = 16 * (idx / 256) + idx % 16;
        if (j > i) sP[tc_gla_p_row(i) + j] = 0.f;
    }
    tc_gla_cumsum<REV>(g, row0 * H + h, H, K, 0, K, L, sG, LG); /* synchronises: every tile loaded */

    /* the diagonal blocks: P_ij = scale sum_c q_ic k_jc exp(G_ic - G_jc) for j <= i in one block;
     * entry e of block d's lower triangle (136 each) is row ii, column e - ii (ii + 1) / 2 */
    for (int e = tid; e < 4 * 136; e += TC_GLA_OUT_THREADS) {
        const int d0 = 16 * (e / 136), f = e % 136;
        int ii = (int)((sqrtf(8.f * (float)f + 1.f) - 1.f) * 0.5f);
        while (ii * (ii + 1) / 2 > f) ii--;
        while ((ii + 1) * (ii + 2) / 2 <= f) ii++;
        const int i = d0 + ii, j = d0 + f - ii * (ii + 1) / 2;
        const __nv_bfloat16 *qi = sQ + i * LD;
        const __nv_bfloat16 *kj = sK + j * LK;
        const float *gi_ = sG + i * LG, *gj = sG + j * LG;
        float d = 0.f;
        for (int c = 0; c < K; c++)
            d = fmaf(__bfloat162float(qi[c]) * __bfloat162float(kj[c]), expf(gi_[c] - gj[c]), d);
        sP[tc_gla_p_row(i) + j] = d * scale;
    }
    /* the blocks below the diagonal, one column of blocks J at a time, with r = 16 (J + 1): Q~ of
     * rows r .. 63 into rows 0 .. 63 - r of sH / sHL (hi / lo), K~ of block J into rows 48 .. 63 */
    for (int J = 0; J < 3; J++) {
        const int r = 16 * (J + 1), nq = TC_C - r;
        const float *gr = sG + r * LG;
        for (int idx = tid; idx < (nq + 16) * K; idx += TC_GLA_OUT_THREADS) {
            const int row = idx / K, c = idx % K;
            float x;
            int at;
            if (row < nq) { /* Q~ row r + row */
                x = __bfloat162float(sQ[(r + row) * LD + c]) * expf(sG[(r + row) * LG + c] - gr[c]);
                at = row * LD + c;
            } else { /* K~ row 16 J + (row - nq) */
                const int j = 16 * J + row - nq;
                x = __bfloat162float(sK[j * LK + c]) * expf(gr[c] - sG[j * LG + c]);
                at = (48 + row - nq) * LD + c;
            }
            const __nv_bfloat16 hi = __float2bfloat16_rn(x);
            sH[at] = hi;
            sHL[at] = __float2bfloat16_rn(x - __bfloat162float(hi));
        }
        __syncthreads();
        if (w < 3 - J) { /* block (I, J), I = J + 1 + w: Q~ rows 16w .., K~ rows 48 .. */
            float d[2][4];
            tc_block_xyt<K>(d, sH, sHL, LD, 16 * w, sH + 48 * LD, sHL + 48 * LD);
            const int i = 16 * (J + 1 + w) + gi;
            float *p0 = sP + tc_gla_p_row(i), *p1 = sP + tc_gla_p_row(i + 8);
#pragma unroll
            for (int nh = 0; nh < 2; nh++) {
                const int j = 16 * J + 8 * nh + 2 * ti;
                p0[j] = d[nh][0] * scale;
                p0[j + 1] = d[nh][1] * scale;
                p1[j] = d[nh][2] * scale;
                p1[j + 1] = d[nh][3] * scale;
            }
        }
        __syncthreads(); /* the Q~, K~ tiles are rewritten next */
    }
    /* H and V^T (VLO: its lo plane by threads 128 ..) in flight while Q~ is formed: H into the
     * factors' memory, V^T in registers until G's memory is free (waited for below) */
    tc_load_rows_async(hs + ((((long long)bh * NT + n) * 2 + 0) * V + vt * TC_C) * K, K, TC_C, K, sH, LD);
    tc_load_rows_async(hs + ((((long long)bh * NT + n) * 2 + 1) * V + vt * TC_C) * K, K, TC_C, K, sHL, LD);
    uint4 vraw[4];
    if (tid < 128)
        tc_copy_transposed_load(vraw, tid, 128, v + (first * H + h) * V + vt * TC_C, dir * H * V, L);
    else if (VLO)
        tc_copy_transposed_load(vraw, tid - 128, 128, v_lo + (first * H + h) * V + vt * TC_C, dir * H * V, L);
    /* (no barrier: the last one above saw every read of sQ, of k (Q~ lo's memory) and of the H
     * tiles' memory done) */
    /* Q~ = q * exp(G) as hi (in place) + lo */
    for (int idx = tid; idx < TC_C * K; idx += TC_GLA_OUT_THREADS) {
        const int i = idx / K, c = idx % K;
        const float x = __bfloat162float(sQ[i * LD + c]) * expf(sG[i * LG + c]);
        const __nv_bfloat16 hi = __float2bfloat16_rn(x);
        sQ[i * LD + c] = hi;
        sQL[i * LD + c] = __float2bfloat16_rn(x - __bfloat162float(hi));
    }
    tc_cp_wait();    /* this thread's H rows */
    __syncthreads(); /* every read of G done: V^T takes its memory */
    if (tid < 128)
        tc_copy_transposed_store(vraw, tid, 128, sVT);
    else if (VLO)
        tc_copy_transposed_store(vraw, tid - 128, 128, sVL);
    __syncthreads();
    if (w >= 4) return; /* no barrier below */

    float acc[8][4];
#pragma unroll
    for (int m = 0; m < 8; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[m][e] = 0.f;
    for (int ks = 0; ks < K / 16; ks++) {
        uint32_t a[4], al[4];
        tc_frag_a(a, sQ, LD, 16 * w, 16 * ks);
        tc_frag_a(al, sQL, LD, 16 * w, 16 * ks);
#pragma unroll
        for (int m = 0; m < 8; m++) tc_mma3(acc[m], a, al, sH, sHL, LD, 8 * m, 16 * ks);
    }
#pragma unroll
    for (int m = 0; m < 8; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[m][e] *= hscale;
    /* o += P V over the reduction blocks 0 .. w */
    const int i0 = 16 * w + gi, i1 = i0 + 8;
#pragma unroll
    for (int s = 0; s < 4; s++) {
        if (s > w) continue; /* warp-uniform */
        const int j0 = 16 * s + 2 * ti;
        const float *p0 = sP + tc_gla_p_row(i0) + j0, *p1 = sP + tc_gla_p_row(i1) + j0;
        uint32_t a[4], al[4];
        tc_split(p0[0], p0[1], &a[0], &al[0]);
        tc_split(p1[0], p1[1], &a[1], &al[1]);
        tc_split(p0[8], p0[9], &a[2], &al[2]);
        tc_split(p1[8], p1[9], &a[3], &al[3]);
        tc_pv_block<VLO>(acc, a, al, sVT, sVL, s);
    }
    if constexpr (!REV) {
        tc_store_o(o, acc, row0, H, h, V, vt, i0, L);
    } else { /* tile row i is step t0 + L - 1 - i */
        __nv_bfloat16 *o0 = o + ((first - i0) * H + h) * V + vt * TC_C + 2 * ti, *o1 = o0 - 8LL * H * V;
#pragma unroll
        for (int m = 0; m < 8; m++) {
            if (i0 < L) *reinterpret_cast<__nv_bfloat162 *>(o0 + 8 * m) = __floats2bfloat162_rn(acc[m][0], acc[m][1]);
            if (i1 < L) *reinterpret_cast<__nv_bfloat162 *>(o1 + 8 * m) = __floats2bfloat162_rn(acc[m][2], acc[m][3]);
        }
    }
}

/* grid (NT, V/64, B*H), TC_GLA_OUT_THREADS threads. P's diagonal blocks on CUDA cores: their
 * 544 entries j <= i over all threads (consecutive threads on consecutive j: the fp32 K and G
 * rows, stride K + 1 words, are read conflict-free, the q row is a broadcast); the blocks below,
 * one column of blocks J at a time: K~ of block J and Q~ of the rows after it into the H tiles'
 * memory (H is loaded after P), then warp I - J - 1 takes block (I, J); then q_i * exp(G_i) as
 * hi + lo over the Q tile; then, as tc_out_bf16, warp w < 4 on rows 16w ..: o = scale (Q~ H)
 * (hi x hi, hi x lo, lo x hi) + P V (P as hi + lo A fragments). */
template <int K, bool VLO = false>
__global__ void TC_BOUNDS(TC_GLA_OUT_THREADS, tc_gla_out_bf16_smem(K, VLO))
    tc_gla_out_bf16(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v, const float *g,
                    const __nv_bfloat16 *hs, __nv_bfloat16 *o, int T, int H, int V, int NT, float scale,
                    const __nv_bfloat16 *v_lo = nullptr)
{
    tc_gla_rows_out_bf16<K, VLO, false>(q, k, v, g, hs, o, T, H, V, NT, scale, scale, v_lo);
}

#endif
