/* chunk_bwd_tc.cuh: chunk-parallel backward kernels of linear attention and SSD (one log gate g
 * per (b, t, h)) on tensor cores, bf16 inputs (mma.sync m16n8k16, fp32 accumulation), built on the
 * forward's primitives (gdn/chunk_fwd_tc.cuh). Launched by gdn/libgdn_tc.cu (gdn_cuda_bwd_tc);
 * with TC_HOST_EMU, host C++ on gdn/tc_emu.h (gdn/tc_emu_check.cc checks it against the oracle).
 *
 * The math, per (b, h), with the forward's notation (chunk n of length L, G_i the inclusive gate
 * cumsum within it, H_n the state entering it, H_NT = ST) and L = sum(dO . o) + sum(dST . ST):
 *   dH_n  = exp(G_{L-1}) dH_{n+1} + scale sum_i exp(G_i) q_i dO_i^T,    dH_NT = dST, dS0 = dH_0
 *   dq_i  = scale [ exp(G_i) H_n dO_i + sum_{j <= i} exp(G_i - G_j) (dO_i . v_j) k_j ]
 *   dk_j  = exp(G_{L-1} - G_j) dH_{n+1} v_j   + scale sum_{i >= j} exp(G_i - G_j) (v_j . dO_i) q_i
 *   dv_j  = exp(G_{L-1} - G_j) dH_{n+1}^T k_j + scale sum_{i >= j} exp(G_i - G_j) (k_j . q_i) dO_i
 *   dg_u  = sum_{t >= u} ( q_t . dq_t - k_t . dk_t ) + dST . ST       (SSD; the last term at any u)
 * (the last: every term of o_t carries +G_t and every use of k_s -G_s, over the global cumsum of g;
 * ST carries +G_{T-1}). Five passes, one kernel each:
 *   1. tc_scan_bf16 forward: H_n of every chunk again (the forward's state scan), stored as H
 *      itself ([K][V] planes, the layout dq's state term reads), and ST for dg's last term;
 *   2. tc_scan_bf16 reverse: the same scan walking the chunks backwards with (q scale exp(G_i),
 *      dO) for (k weights, v): dH_{n+1} of every chunk in both layouts, and dS0;
 *   3. dq  = tc_bout_bf16 (dO, v, k; H):      the forward's outputs kernel with the roles swapped;
 *   4. dk  = tc_bout_bf16 (v, dO, q; dH), 5. dv = tc_bout_bf16 (k, q, dO; dH^T): anti-causal, so
 *      run on the chunk's rows reversed: with j' = L-1-j and the gates g'_0 = 0, g'_i = g_{L-i}, the
 *      reversed cumsum is G'_i = G_{L-1} - G_{L-1-i}, exp(G'_i - G'_j) = exp(G_j - G_i) of the
 *      original rows, and exp(G'_j) the state term's exp(G_{L-1} - G_j): the causal kernel again;
 *   6. (SSD) tc_ssd_dg: the rows' dots (written by passes 3 and 4 per 64-column tile, from the fp32
 *      accumulators) summed in a fixed order and reverse-cumsummed over t.
 * Deterministic: one writer per element, fixed orders, no atomics. Supported: K, V in {64, 128,
 * 256}. fp32 inputs of linear attention take the same passes on CUDA cores in exact fp32
 * (tc_bscan_f32, tc_bout_f32), with the state planes in the layouts the fp32 kernels read: H as
 * [V][K] for dq, dH as [V][K] for dk and [K][V] for dv. SSD in fp32 is not here: its dg, from
 * the dots of tc_ssd_dg, reaches the fp32 bar at T = 1000 (see there); gdn_cuda_bwd's sequential
 * kernels serve it. */
#ifndef GDN_CHUNK_BWD_TC_CUH
#define GDN_CHUNK_BWD_TC_CUH

#include "chunk_fwd_tc.cuh"

/* The backward's workspace, in 4-byte words from its start: H as [K][V] planes, dH as [K][V]
 * and as [V][K] planes (two bf16 planes of K x V per chunk: one word an element), ST (fp32), and
 * the two dots of SSD's dg (q . dq and k . dk per step and 64-column tile) or, per_channel (GLA,
 * gdn/chunk_bwd_gla_tc.cuh), the products q * dq and k * dk per element. Every part starts
 * 16-byte aligned (K, V are multiples of 64). */
struct tc_bwd_ws {
    long long h_kv, dh_kv, dh_vk, st, qdot, kdot, total;
};
__host__ __device__ inline tc_bwd_ws tc_bwd_layout(long long bh, long long T, int K, int V, bool per_channel = false)
{
    const long long nt = (T + TC_C - 1) / TC_C, planes = bh * nt * K * V;
    const long long dots = bh * T * (per_channel ? K : K / TC_C);
    tc_bwd_ws w;
    w.h_kv = 0, w.dh_kv = planes, w.dh_vk = 2 * planes, w.st = 3 * planes;
    w.qdot = w.st + bh * K * V, w.kdot = w.qdot + (dots + 3) / 4 * 4, w.total = w.kdot + (dots + 3) / 4 * 4;
    return w;
}

/* A weights^T hi, lo, B^T, two staging planes per layout [64][72] bf16; G [64] (TC_CHANNEL: G
 * [64][65] of the tile's channels) and the weights [64] fp32. */
__host__ __device__ constexpr unsigned tc_scan_bf16_smem(int gate = TC_SCALAR)
{
    return (unsigned)(7 * TC_C * TC_TP * 2 + ((gate == TC_CHANNEL ? TC_C * TC_F32P : TC_C) + TC_C) * 4);
}

/* grid (V/64, K/64, B*H), 128 threads. Forward (REV false): a, b = k, v, the weights exp(G_{L-1} -
 * G_j), init S0, fin ST: tc_state_bf16's scan. Reverse: a, b = q, dO, the weights wscale exp(G_i)
 * (wscale: the forward's scale), the chunks from the last, init dST, fin dS0. GATE TC_CHANNEL
 * (GLA): the weights per key element (exp(G_{L-1,c} - G_jc), wscale exp(G_ic)) and the decay
 * exp(G_{L-1,c}) per state row c, as tc_state_bf16<TC_CHANNEL>; every exponent <= 0. Either way every chunk's state entering its update (H_n; dH_{n+1}) is written to
 * vk ([B*H][NT][2][V][K]) and/or kv ([B*H][NT][2][K][V]) as PLANES says. Warp w owns state rows
 * 16w .. 16w+15 of the K tile; acc[m] the m16n8 tile of columns 8m .. 8m+7. */
template <int GATE, bool REV, int PLANES>
__global__ void TC_BOUNDS(128, tc_scan_bf16_smem(GATE))
    tc_scan_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b_, const float *g, const float *init, __nv_bfloat16 *vk,
                 __nv_bfloat16 *kv, float *fin, int T, int H, int K, int V, int NT, float wscale)
{
    constexpr bool WEIGHTED = REV || GATE != TC_UNGATED; /* a w is not exact in bf16: hi + lo */
    TC_DYNAMIC_SMEM(tc_smem);
    __nv_bfloat16 *sAT = reinterpret_cast<__nv_bfloat16 *>(tc_smem);    /* [kk][j]: (a_j w_j)^T, hi */
    __nv_bfloat16 *sAL = sAT + TC_C * TC_TP;                            /* lo */
    __nv_bfloat16 *sBT = sAL + TC_C * TC_TP;                            /* [v][j] */
    __nv_bfloat16 *sV0 = sBT + TC_C * TC_TP, *sV1 = sV0 + TC_C * TC_TP; /* [v][kk] staging, hi, lo */
    __nv_bfloat16 *sK0 = sV1 + TC_C * TC_TP, *sK1 = sK0 + TC_C * TC_TP; /* [kk][v] staging, hi, lo */
    float *sG = reinterpret_cast<float *>(sK1 + TC_C * TC_TP);          /* TC_CHANNEL: [j][kk] */
    float *sW = sG + (GATE == TC_CHANNEL ? TC_C * TC_F32P : TC_C);
    const int vt = (int)blockIdx.x, kt = (int)blockIdx.y, bh = (int)blockIdx.z;
    const int bb = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int r0 = 16 * w + gi;

    float acc[8][4];
#pragma unroll
    for (int m = 0; m < 8; m++) {
        const int c = 8 * m + 2 * ti;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = r0 + (e >> 1) * 8;
            acc[m][e] = init ? init[((long long)bh * K + kt * TC_C + r) * V + vt * TC_C + c + (e & 1)] : 0.f;
        }
    }
    for (int it = 0; it < NT; it++) {
        const int n = REV ? NT - 1 - it : it;
        const int t0 = n * TC_C, L = min(TC_C, T - t0);
        const long long row0 = (long long)bb * T + t0;
#pragma unroll
        for (int m = 0; m < 8; m++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int c = 8 * m + 2 * ti + (e & 1), r = r0 + (e >> 1) * 8;
                const __nv_bfloat16 hi = __float2bfloat16_rn(acc[m][e]);
                const __nv_bfloat16 lo = __float2bfloat16_rn(acc[m][e] - __bfloat162float(hi));
                if constexpr ((PLANES & TC_PLANES_VK) != 0) sV0[c * TC_TP + r] = hi, sV1[c * TC_TP + r] = lo;
                if constexpr ((PLANES & TC_PLANES_KV) != 0) sK0[r * TC_TP + c] = hi, sK1[r * TC_TP + c] = lo;
            }
        }
        const long long rs_k = (long long)H * K, rs_v = (long long)H * V;
        float d0 = 1.f, d1 = 1.f; /* the decay of state rows r0, r0 + 8 */
        if constexpr (GATE == TC_CHANNEL) {
            if (REV && tid < TC_C) sW[tid] = wscale;
            /* b's tile first, its loads in flight while the gates' copies land */
            tc_load_transposed(b_ + (row0 * H + h) * V + vt * TC_C, rs_v, L, nullptr, sBT, nullptr);
            /* synchronises: staging, sW and b's tile complete */
            tc_gla_cumsum_call(g, row0 * H + h, H, K, kt * TC_C, TC_C, L, sG, TC_F32P);
            d0 = expf(sG[(L - 1) * TC_F32P + r0]), d1 = expf(sG[(L - 1) * TC_F32P + r0 + 8]);
            tc_load_kt_decayed(a + (row0 * H + h) * K + kt * TC_C, rs_k, L, TC_C, REV ? sW : nullptr, sG, TC_F32P,
                               REV ? -1 : L - 1, sAT, sAL);
        } else {
            tc_gate_cumsum<GATE == TC_SCALAR>(g, row0 * H + h, H, L, sG); /* synchronises: staging complete */
            if constexpr (WEIGHTED) {
                if (tid < TC_C) {
                    if constexpr (REV)
                        sW[tid] = GATE == TC_SCALAR ? wscale * expf(sG[tid]) : wscale;
                    else
                        sW[tid] = expf(sG[L - 1] - sG[tid]);
                }
                if constexpr (GATE == TC_SCALAR) d0 = d1 = expf(sG[L - 1]);
                __syncthreads();
            }
            tc_load_transposed(a + (row0 * H + h) * K + kt * TC_C, rs_k, L, WEIGHTED ? sW : nullptr, sAT, sAL);
            tc_load_transposed(b_ + (row0 * H + h) * V + vt * TC_C, rs_v, L, nullptr, sBT, nullptr);
        }
        for (int idx = tid; idx < 2 * TC_C * 8; idx += 128) {
            const int pl = idx / (TC_C * 8), r = (idx / 8) % TC_C, grp = idx % 8;
            const long long plane = ((long long)bh * NT + n) * 2 + pl;
            if constexpr ((PLANES & TC_PLANES_VK) != 0)
                *reinterpret_cast<uint4 *>(vk + (plane * V + vt * TC_C + r) * K + kt * TC_C + grp * 8) =
                    *reinterpret_cast<const uint4 *>((pl ? sV1 : sV0) + r * TC_TP + grp * 8);
            if constexpr ((PLANES & TC_PLANES_KV) != 0)
                *reinterpret_cast<uint4 *>(kv + (plane * K + kt * TC_C + r) * V + vt * TC_C + grp * 8) =
                    *reinterpret_cast<const uint4 *>((pl ? sK1 : sK0) + r * TC_TP + grp * 8);
        }
        __syncthreads(); /* the update reads the tiles every thread loaded */
        if constexpr (GATE != TC_UNGATED) {
#pragma unroll
            for (int m = 0; m < 8; m++) acc[m][0] *= d0, acc[m][1] *= d0, acc[m][2] *= d1, acc[m][3] *= d1;
        }
#pragma unroll
        for (int s = 0; s < 4; s++) {
            uint32_t fa[4], fl[4];
            tc_frag_a(fa, sAT, TC_TP, 16 * w, 16 * s);
            if constexpr (WEIGHTED) tc_frag_a(fl, sAL, TC_TP, 16 * w, 16 * s);
#pragma unroll
            for (int m = 0; m < 8; m++) {
                uint32_t b0, b1;
                tc_frag_b(&b0, &b1, sBT, TC_TP, 8 * m, 16 * s);
                tc_mma(acc[m], fa, b0, b1);
                if constexpr (WEIGHTED) tc_mma(acc[m], fl, b0, b1);
            }
        }
        __syncthreads(); /* every tile, sG and sW are rewritten by the next chunk */
    }
    if (fin) {
#pragma unroll
        for (int m = 0; m < 8; m++) {
            const int c = 8 * m + 2 * ti;
            for (int half = 0; half < 2; half++) {
                const int r = r0 + half * 8;
                *reinterpret_cast<float2 *>(fin + ((long long)bh * K + kt * TC_C + r) * V + vt * TC_C + c) =
                    make_float2(acc[m][2 * half], acc[m][2 * half + 1]);
            }
        }
    }
}

__host__ __device__ constexpr unsigned tc_bout_bf16_smem(int kin)
{
    return tc_out_bf16_smem(kin, false);
}

/* grid (NT, VOUT/64, B*H), 128 threads: gdn/chunk_fwd_tc.cuh's tc_rows_out_bf16 (the forward's
 * outputs kernel) with the backward's tensors and scales, the chunk's rows reversed with REV, and
 * the dots of SSD's dg where dot is given. */
template <int GATED, int KIN, bool REV>
__global__ void TC_BOUNDS(128, tc_bout_bf16_smem(KIN))
    tc_bout_bf16(const __nv_bfloat16 *x, const __nv_bfloat16 *y, const __nv_bfloat16 *z, const float *g,
                 const __nv_bfloat16 *sp, __nv_bfloat16 *out, const __nv_bfloat16 *dx, float *dot, int T, int H,
                 int VOUT, int NT, float scale, float hscale)
{
    tc_rows_out_bf16<GATED, KIN, REV, false>(x, y, z, nullptr, g, sp, out, dx, dot, T, H, VOUT, NT, scale, hscale);
}

/* The fp32 passes: the same five on CUDA cores in exact fp32 (gdn/chunk_fwd_tc.cuh's tc_scan_f32
 * and tc_rows_out_f32), one state plane of fp32 per layout. grid (V/64, K/64, B*H), 256 threads. */
template <int GATE, bool REV, int PLANES>
__global__ void TC_BOUNDS_REGS(256, tc_state_f32_smem(GATE), 64)
    tc_bscan_f32(const float *a, const float *b_, const float *g, const float *init, float *kv, float *vk, float *fin,
                 int T, int H, int K, int V, int NT, float wscale)
{
    tc_scan_f32<GATE, REV, PLANES>(a, b_, g, init, kv, vk, fin, T, H, K, V, NT, wscale);
}

/* grid (NT, VOUT/64, B*H), 256 threads; the state S [KIN][VOUT] per chunk. */
template <int GATE, int KIN, bool REV>
__global__ void TC_BOUNDS_REGS(256, tc_out_f32_smem(KIN, GATE), 128)
    tc_bout_f32(const float *x, const float *y, const float *z, const float *g, const float *sp, float *out,
                const float *dx, float *dot, int T, int H, int VOUT, int NT, float scale, float hscale)
{
    tc_rows_out_f32<GATE, KIN, REV>(x, y, z, g, sp, out, dx, dot, T, H, VOUT, NT, scale, hscale);
}

/* grid (B*H), 256 threads: SSD's dg[b,t,h] = sum_{u >= t} r_u with r_u = sum over the ntile tiles
 * of dq_dot[u] minus dk_dot[u] (the outputs kernels' dots: q . dq, k . dk), plus dST . ST at every
 * t when dST is given. Summed in fp64 (a few flops a step): the sum runs over the whole sequence
 * and r_u is a difference of two close sums. Fixed order everywhere: each thread a contiguous run
 * of steps from its end, the runs' totals suffix-summed by one thread. What limits dg is the
 * dots themselves: q . dq - k . dk cancels, so the outputs' own error (fp32: ~4e-7 relative)
 * reaches dg amplified (fp32 at B2 T1000 H4: 1.0e-5 emulated, at the fp32 bar; bf16 2.2e-5 of
 * its 3.3e-3), hence no fp32 path for SSD here. */
__global__ void __launch_bounds__(256) tc_ssd_dg(const float *dq_dot, const float *dk_dot, int ntile, const float *dST,
                                                 const float *ST, float *dg, int T, int H, int K, int V)
{
    __shared__ double red[256];
    const int bh = (int)blockIdx.x, bb = bh / H, h = bh % H, tid = (int)threadIdx.x;
    double ss = 0;
    if (dST)
        for (long long idx = tid; idx < (long long)K * V; idx += 256)
            ss += (double)dST[(long long)bh * K * V + idx] * (double)ST[(long long)bh * K * V + idx];
    red[tid] = ss;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    const double last = red[0];
    __syncthreads();
    const int per = (T + 255) / 256, lo = min(T, tid * per), hi = min(T, lo + per);
    auto r_of = [&](int u) {
        const long long at = ((long long)bb * T + u) * H + h;
        double r = 0;
        for (int t = 0; t < ntile; t++) r += (double)dq_dot[at * ntile + t];
        for (int t = 0; t < ntile; t++) r -= (double)dk_dot[at * ntile + t];
        return r;
    };
    double run = 0;
    for (int u = hi - 1; u >= lo; u--) run += r_of(u);
    red[tid] = run;
    __syncthreads();
    if (tid == 0) {
        double carry = last;
        for (int i = 255; i >= 0; i--) {
            const double x = red[i];
            red[i] = carry;
            carry += x;
        }
    }
    __syncthreads();
    double s = red[tid];
    for (int u = hi - 1; u >= lo; u--) {
        s += r_of(u);
        dg[((long long)bb * T + u) * H + h] = (float)s;
    }
}

#endif
