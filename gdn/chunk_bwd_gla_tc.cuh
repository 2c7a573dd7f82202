/* chunk_bwd_gla_tc.cuh: the chunk-parallel backward of GLA (one log gate g per key channel, g
 * [B,T,H,K]) on tensor cores, bf16 inputs (mma.sync m16n8k16, fp32 accumulation; fp32 inputs:
 * the same passes on CUDA cores in exact fp32, at the end of each section), built as linear
 * attention's and SSD's (gdn/chunk_bwd_tc.cuh) from the forward's machinery with the tensors'
 * roles changed. Launched by gdn/libgdn_tc.cu (gdn_cuda_bwd_tc); with TC_HOST_EMU, host C++ on
 * gdn/tc_emu.h (gdn/tc_emu_check.cc checks it against the oracle).
 *
 * The math. gdn/oracle.c's recurrence S_t = diag(a_t) S_{t-1} + k_t v_t^T, o_t = scale S_t^T q_t
 * (a_t = exp(g_t) per key channel), with L = sum(dO . o) + sum(dST . ST), runs backwards as
 *   dS_{t-1} = diag(a_t) dS_t + scale q_{t-1} dO_{t-1}^T,  dS_{T-1} = dST + scale q_{T-1} dO_{T-1}^T,
 *   dq_t = scale S_t dO_t,  dk_t = dS_t v_t,  dv_t = dS_t^T k_t,  dg_tc = a_tc (S_{t-1} . dS_t)_c
 * (row c's dot). Over chunk n of length L (gdn/chunk_host_impl.h's stages; G_ic the inclusive
 * per-channel cumsum within it, H_n the state entering it, dH_{n+1} the gradient of the state
 * leaving it, dH_NT = dST):
 *   dH_n  = diag(exp(G_{L-1})) dH_{n+1} + scale sum_i (q_i * exp(G_i)) dO_i^T,      dS0 = dH_0
 *   dq_ic = scale [ exp(G_ic) (H_n dO_i)_c + sum_{j <= i} (dO_i . v_j) k_jc exp(G_ic - G_jc) ]
 *   dk_jc = exp(G_{L-1,c} - G_jc) (dH_{n+1} v_j)_c
 *           + scale sum_{i >= j} (v_j . dO_i) q_ic exp(G_ic - G_jc)
 *   dv_j  = dH_{n+1}^T (k_j * exp(G_{L-1} - G_j)) + scale sum_{i >= j} P_ij dO_i,
 *           P_ij = sum_c q_ic k_jc exp(G_ic - G_jc)  (the forward's scores)
 *   dg_uc = sum_{t >= u} ( q_tc dq_tc - k_tc dk_tc ) + sum_v dST_cv ST_cv
 * (the last: over the global per-channel cumsum, every term of o_t carries +G_tc on q_tc and every
 * use of k_s carries -G_sc on k_sc, ST's row c carries +G_{T-1,c}; so d/dg_uc is the reverse
 * cumsum of those row products, plus dST . ST's row c at every u). Six passes:
 *   1. tc_scan_bf16<TC_CHANNEL> forward (gdn/chunk_bwd_tc.cuh): H_n as [K][V] planes, and ST;
 *   2. tc_scan_bf16<TC_CHANNEL> reverse: dH_{n+1} in both layouts and dS0, the weights
 *      scale exp(G_ic) per element of q, the decay exp(G_{L-1,c}) per state row;
 *   3. dq  = tc_gla_bdq_bf16 (dO, v, k; H), below, and the products q * dq (fp32, for dg);
 *   4. dk  = tc_gla_bdq_bf16 (v, dO, q; dH) on the chunk's rows reversed, and k * dk: with
 *      j' = L-1-j and G'_i = G_{L-1} - G_{L-1-i} (gdn/chunk_fwd_tc.cuh's tc_gla_cumsum<true>)
 *      exp(G'_{j'} - G'_{i'}) = exp(G_i - G_j), exp(G'_{j'}) = exp(G_{L-1} - G_j): the causal sum;
 *   5. dv  = GLA's forward outputs body (tc_gla_rows_out_bf16) with (q, k, v, H) = (k, q, dO, dH),
 *      rows reversed the same way, the state term unscaled;
 *   6. tc_gla_dg: the reverse cumsum per channel, in fp64, of q * dq - k * dk, plus dST . ST.
 * The decay sits on the OUTPUT channel c in passes 3 and 4, not on the reduced one, so the
 * forward's factorisation of P does not apply; tc_gla_bdq_bf16 sums (for the 16 rows of block I,
 * two warps of 32 channels each) the blocks J < I on tensor cores with one reference row r = 16 I
 * for all of them:
 *   sum_{j < r} S_ij z_jc exp(G_ic - G_jc) = exp(G_ic - G_rc) sum_{j < r} S_ij (z_jc exp(G_rc - G_jc))
 * (S_ij = x_i . y_j, both exponents <= 0 because j < r <= i), and the diagonal block term by
 * term on CUDA cores, one column j at a time for all of a thread's outputs; every exponent is
 * <= 0, whatever the gates. What these passes waited on was latency, not arithmetic (gdn/README.md
 * has the per-pass times): every tile and the gates come by cp.async, all of a thread's copies in
 * flight at once (gdn/chunk_fwd_tc.cuh's tc_load_rows_async, tc_gla_cumsum), dx is read before
 * the first store, and the shared memory of tc_gla_bdq_bf16 fits two CTAs of eight warps an SM.
 * dg's cancellation: the reverse cumsum of q dq - k dk runs over the whole sequence; the products
 * come from the fp32 accumulators (before dq, dk are rounded to bf16) and are summed in fp64 in a
 * fixed order (bf16: 3.3e-5 at B2 T1000 H4, emulated, far below its bar). The fp32 path, whose
 * bar is 1e-5, sums it per chunk instead (tc_gla_dg_local: the chunk's own steps plus (H_{n+1} . dH_{n+1})_c,
 * which equals everything after the chunk), so its cancellation stays within 64 steps.
 * Deterministic: one writer per element, fixed orders, no atomics. Supported: K in {64, 128} (as
 * GLA's forward), V in {64, 128, 256}. */
#ifndef GDN_CHUNK_BWD_GLA_TC_CUH
#define GDN_CHUNK_BWD_GLA_TC_CUH

#include "chunk_bwd_tc.cuh"
#include "chunk_fwd_gla_tc.cuh"

// ---- passes 3 and 4: dq, dk -------------------------------------------------------------------

/* The bf16 row stride of the reference-decayed Z~^T tile [64 channels][96 + 8]: the three blocks'
 * z rows (16, 32, 48 of them for I = 1, 2, 3) side by side; 52 words = 20 mod 32 (conflict-free
 * B fragments) */
#define TC_GLA_ZLD 104

/* Dynamic shared memory of tc_gla_bdq_bf16<KIN>: X, Y, S hi, S lo [64][KIN+8] bf16 (later Z~^T
 * hi, lo [64][104] bf16 in their place), Z [64][72] bf16, G, P [64][65] fp32: 112128 bytes at KIN
 * = 128, two CTAs an SM (Z~ beside the tiles and z in fp32 took 146176, one CTA of 4 warps an SM) */
__host__ __device__ constexpr unsigned tc_gla_bdq_bf16_smem(int kin)
{
    return (unsigned)(4 * TC_C * (kin + 8) * 2 + TC_C * TC_TP * 2 + 2 * TC_C * TC_F32P * 4);
}

/* Threads of tc_gla_bdq_bf16: eight warps, two on each 16 rows (one per 32 channels); with four
 * (all 64 channels a warp) its CTAs, one or two an SM, left the SM idle on latencies */
#define TC_GLA_BDQ_THREADS 256

/* grid (NT, K/64, B*H), TC_GLA_BDQ_THREADS threads, at (chunk n, 64-channel tile kt, bh), for the
 * chunk's rows i (REV: reversed, i = L-1-t for step t0 + t):
 *   out_ic = hscale exp(G_ic) (S x_i)_c + scale sum_{j <= i} (x_i . y_j) z_jc exp(G_ic - G_jc)
 * with x, y [B,T,H,KIN] (KIN = V), z, out [B,T,H,K] bf16, S the chunk's state planes [K][KIN]
 * (hi, lo) at sp + (bh NT + n) 2 K KIN, G this tile's channels' cumsums; with dot, also dot =
 * out * dx per element (fp32, out before its rounding; dx bf16 [B,T,H,K]). Warp w owns rows
 * 16 (w % 4) .. + 15 and channels 32 (w / 4) .. + 31: S x_i on tensor cores (S hi, lo); scores
 * X Y^T on tensor cores (exact: bf16 products, fp32 sums; warps 0..3) into P (fp32, scaled, 0
 * above the diagonal); the blocks J < w % 4 as (P_{w,<16w}) (Z~^(w)) on tensor cores (P and Z~
 * hi + lo) times exp(G_i - G_r) per element; the diagonal block term by term, one column j at a
 * time for all of the thread's 16 outputs (32 independent exponentials a step, where a sum per
 * output walked its own j with one in flight), each output's terms still added in increasing j. */
template <int KIN, bool REV>
__global__ void TC_BOUNDS(TC_GLA_BDQ_THREADS, tc_gla_bdq_bf16_smem(KIN))
    tc_gla_bdq_bf16(const __nv_bfloat16 *x, const __nv_bfloat16 *y, const __nv_bfloat16 *z, const float *g,
                    const __nv_bfloat16 *sp, __nv_bfloat16 *out, const __nv_bfloat16 *dx, float *dot, int T, int H,
                    int K, int NT, float scale, float hscale)
{
    constexpr int LD = KIN + 8, ZLD = TC_GLA_ZLD, LP = TC_F32P, NTH = TC_GLA_BDQ_THREADS;
    TC_DYNAMIC_SMEM(tc_smem);
    __nv_bfloat16 *sX = reinterpret_cast<__nv_bfloat16 *>(tc_smem);
    __nv_bfloat16 *sY = sX + TC_C * LD;
    __nv_bfloat16 *sS = sY + TC_C * LD, *sSL = sS + TC_C * LD; /* [c][kin] */
    __nv_bfloat16 *sZT = sX, *sZL = sZT + TC_C * ZLD; /* [c][jcol]: Z~ of blocks 1, 2, 3, once X, Y, S are read */
    __nv_bfloat16 *sZ = sSL + TC_C * LD;              /* [j][c]: z */
    float *sG = reinterpret_cast<float *>(sZ + TC_C * TC_TP); /* [i][c] */
    float *sP = sG + TC_C * LP;                               /* [i][j]: scale x_i . y_j, j <= i */
    const int n = (int)blockIdx.x, kt = (int)blockIdx.y, bh = (int)blockIdx.z;
    const int bb = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int rw = w & 3, c0 = 32 * (w >> 2) + 2 * ti; /* row block; this thread's first channel */
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)bb * T + t0;
    const long long first = row0 + (REV ? L - 1 : 0), dir = REV ? -1 : 1;
    const long long sx = (long long)H * KIN, sz = (long long)H * K;

    /* every tile in flight at once (tc_cp16, tc_cp4); tc_gla_cumsum waits for them */
    tc_load_rows_async(x + (first * H + h) * KIN, dir * sx, L, KIN, sX, LD);
    tc_load_rows_async(y + (first * H + h) * KIN, dir * sx, L, KIN, sY, LD);
    tc_load_rows_async(sp + ((((long long)bh * NT + n) * 2 + 0) * K + kt * TC_C) * KIN, KIN, TC_C, KIN, sS, LD);
    tc_load_rows_async(sp + ((((long long)bh * NT + n) * 2 + 1) * K + kt * TC_C) * KIN, KIN, TC_C, KIN, sSL, LD);
    tc_load_rows_async(z + first * sz + h * K + kt * TC_C, dir * sz, L, TC_C, sZ, TC_TP);
    tc_gla_cumsum<REV>(g, row0 * H + h, H, K, kt * TC_C, TC_C, L, sG, LP); /* synchronises: tiles loaded */

    const int i0 = 16 * rw + gi, i1 = i0 + 8; /* this thread's rows */
    if (w < 4) {                              /* P = scale X Y^T, causal by selection; warp w writes its own rows */
        float p[8][4];
        tc_causal_xyt<KIN>(p, sX, sY, LD, rw);
#pragma unroll
        for (int m = 0; m < 8; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int i = e < 2 ? i0 : i1, j = 8 * m + 2 * ti + (e & 1);
                sP[i * LP + j] = j <= i ? p[m][e] * scale : 0.f;
            }
    }
    /* out = hscale exp(G_i) (X S^T); acc[m] the m16n8 tile of channels c0 - 2 ti + 8 m .. */
    float acc[4][4];
#pragma unroll
    for (int m = 0; m < 4; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[m][e] = 0.f;
    for (int ks = 0; ks < KIN / 16; ks++) {
        uint32_t fa[4];
        tc_frag_a(fa, sX, LD, 16 * rw, 16 * ks);
#pragma unroll
        for (int m = 0; m < 4; m++) {
            uint32_t b0, b1;
            tc_frag_b(&b0, &b1, sS, LD, c0 - 2 * ti + 8 * m, 16 * ks);
            tc_mma(acc[m], fa, b0, b1);
            tc_frag_b(&b0, &b1, sSL, LD, c0 - 2 * ti + 8 * m, 16 * ks);
            tc_mma(acc[m], fa, b0, b1);
        }
    }
    float gic[4][4]; /* G of this thread's outputs */
#pragma unroll
    for (int m = 0; m < 4; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            gic[m][e] = sG[(e < 2 ? i0 : i1) * LP + c0 + 8 * m + (e & 1)];
            acc[m][e] *= hscale * expf(gic[m][e]);
        }
    /* dx of this thread's outputs, read now so that the loads overlap the work below (in the
     * epilogue, after stores the compiler must assume may alias them, each waited on its own) */
    __nv_bfloat162 dx2[2][4];
    if (dot)
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int i = half ? i1 : i0;
            const long long at = (first + dir * min(i, L - 1)) * sz + h * K + kt * TC_C + c0;
#pragma unroll
            for (int m = 0; m < 4; m++) dx2[half][m] = *reinterpret_cast<const __nv_bfloat162 *>(dx + at + 8 * m);
        }
    __syncthreads(); /* every warp has read X, Y and S: Z~ overwrites them */
    /* Z~ of blocks I = 1, 2, 3 (reference r = 16 I, rows j < r) at columns 8 I (I - 1) .. of sZT */
    for (int idx = tid; idx < TC_C * 96; idx += NTH) {
        const int jc = idx % 96, c = idx / 96;
        const int I = jc < 16 ? 1 : jc < 48 ? 2 : 3, j = jc - 8 * I * (I - 1), r = 16 * I;
        const float v = __bfloat162float(sZ[j * TC_TP + c]) * expf(sG[r * LP + c] - sG[j * LP + c]);
        const __nv_bfloat16 hi = __float2bfloat16_rn(v);
        sZT[c * ZLD + jc] = hi;
        sZL[c * ZLD + jc] = __float2bfloat16_rn(v - __bfloat162float(hi));
    }
    __syncthreads(); /* Z~ complete */
    if (rw > 0) {    /* the blocks J < rw: (P Z~) exp(G_i - G_r), r = 16 rw */
        float t[4][4];
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) t[m][e] = 0.f;
        const int off = 8 * rw * (rw - 1);
        for (int s = 0; s < rw; s++) {
            const int j0 = 16 * s + 2 * ti;
            uint32_t a[4], al[4];
            tc_split(sP[i0 * LP + j0], sP[i0 * LP + j0 + 1], &a[0], &al[0]);
            tc_split(sP[i1 * LP + j0], sP[i1 * LP + j0 + 1], &a[1], &al[1]);
            tc_split(sP[i0 * LP + j0 + 8], sP[i0 * LP + j0 + 9], &a[2], &al[2]);
            tc_split(sP[i1 * LP + j0 + 8], sP[i1 * LP + j0 + 9], &a[3], &al[3]);
#pragma unroll
            for (int m = 0; m < 4; m++) tc_mma3(t[m], a, al, sZT, sZL, ZLD, c0 - 2 * ti + 8 * m, off + 16 * s);
        }
        const float *gr = sG + 16 * rw * LP;
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[m][e] += t[m][e] * expf(gic[m][e] - gr[c0 + 8 * m + (e & 1)]);
    }
    /* the diagonal block, term by term: j = 16 rw .. i, one column j at a time */
    float d[4][4];
#pragma unroll
    for (int m = 0; m < 4; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) d[m][e] = 0.f;
    for (int j = 16 * rw; j < 16 * rw + 16; j++) {
        const float p0 = sP[i0 * LP + j], p1 = sP[i1 * LP + j];
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int cc = 0; cc < 2; cc++) {
                const int c = c0 + 8 * m + cc;
                const float zj = __bfloat162float(sZ[j * TC_TP + c]), gj = sG[j * LP + c];
                if (j <= i0) d[m][cc] += p0 * zj * expf(gic[m][cc] - gj);
                if (j <= i1) d[m][2 + cc] += p1 * zj * expf(gic[m][2 + cc] - gj);
            }
    }
#pragma unroll
    for (int m = 0; m < 4; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[m][e] += d[m][e];
            /* rows i0, i1 (those < L) to their steps; with dot, out * dx per element */
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int i = half ? i1 : i0;
        if (i >= L) continue;
        const long long at = (first + dir * i) * sz + h * K + kt * TC_C + c0;
#pragma unroll
        for (int m = 0; m < 4; m++) {
            const float a0 = acc[m][2 * half], a1 = acc[m][2 * half + 1];
            *reinterpret_cast<__nv_bfloat162 *>(out + at + 8 * m) = __floats2bfloat162_rn(a0, a1);
            if (dot)
                *reinterpret_cast<float2 *>(dot + at + 8 * m) =
                    make_float2(a0 * __bfloat162float(dx2[half][m].x), a1 * __bfloat162float(dx2[half][m].y));
        }
    }
}

/* Dynamic shared memory of tc_gla_bdq_f32<KIN>: X, Y (then S) [64][KIN+1], G, Z, P [64][65]
 * fp32. */
__host__ __device__ constexpr unsigned tc_gla_bdq_f32_smem(int kin)
{
    return (unsigned)(4 * (2 * TC_C * (kin + 1) + 3 * TC_C * TC_F32P));
}

/* The fp32 twin of tc_gla_bdq_bf16 on CUDA cores in exact fp32, grid (NT, K/64, B*H), 256
 * threads; thread (tx, ty) owns rows ty + 16r and channels tx + 16c (r, c < 4). Same out and dot,
 * S the chunk's fp32 state [K][KIN] at sp + (bh NT + n) K KIN; every sum over j <= i only (a NaN
 * at step t reaches no earlier row), term by term: out_ic = hscale exp(G_ic) (S x_i)_c + sum_{j <=
 * i} P_ij z_jc exp(G_ic - G_jc), P_ij = scale x_i . y_j. */
template <int KIN, bool REV>
__global__ void TC_BOUNDS(256, tc_gla_bdq_f32_smem(KIN))
    tc_gla_bdq_f32(const float *x, const float *y, const float *z, const float *g, const float *sp, float *out,
                   const float *dx, float *dot, int T, int H, int K, int NT, float scale, float hscale)
{
    constexpr int LD = KIN + 1, LP = TC_F32P;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sX = reinterpret_cast<float *>(tc_smem);
    float *sY = sX + TC_C * LD; /* y rows [j][kk], later S [c][kk] */
    float *sG = sY + TC_C * LD; /* [i][c] */
    float *sZ = sG + TC_C * LP; /* [j][c] */
    float *sP = sZ + TC_C * LP; /* [i][j] */
    const int n = (int)blockIdx.x, kt = (int)blockIdx.y, bh = (int)blockIdx.z;
    const int bb = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)bb * T + t0;
    const long long first = row0 + (REV ? L - 1 : 0), dir = REV ? -1 : 1;
    const long long sz = (long long)H * K;

    for (int idx = tid; idx < TC_C * KIN; idx += 256) {
        const int j = idx / KIN, c = idx % KIN;
        const bool in = j < L;
        sX[j * LD + c] = in ? x[((first + dir * j) * H + h) * KIN + c] : 0.f;
        sY[j * LD + c] = in ? y[((first + dir * j) * H + h) * KIN + c] : 0.f;
    }
    for (int idx = tid; idx < TC_C * TC_C; idx += 256) {
        const int j = idx / TC_C, c = idx % TC_C;
        sZ[j * LP + c] = j < L ? z[(first + dir * j) * sz + h * K + kt * TC_C + c] : 0.f;
    }
    tc_gla_cumsum<REV>(g, row0 * H + h, H, K, kt * TC_C, TC_C, L, sG, LP); /* synchronises */
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = ty + 16 * r;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int j = tx + 16 * c;
            float v = 0.f;
            if (j <= i) {
                float d = 0.f;
                for (int kk = 0; kk < KIN; kk++) d = fmaf(sX[i * LD + kk], sY[j * LD + kk], d);
                v = d * scale;
            }
            sP[i * LP + j] = v;
        }
    }
    __syncthreads(); /* sY is overwritten by S */
    const float *src = sp + (((long long)bh * NT + n) * K + kt * TC_C) * KIN;
    for (int idx = tid; idx < TC_C * KIN; idx += 256) {
        const int c = idx / KIN, kk = idx % KIN;
        sY[c * LD + kk] = src[(long long)c * KIN + kk];
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = ty + 16 * r;
        if (i >= L) continue;
        const long long at = (first + dir * i) * sz + h * K + kt * TC_C;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int cc = tx + 16 * c;
            const float gic = sG[i * LP + cc];
            float d = 0.f;
            for (int kk = 0; kk < KIN; kk++) d = fmaf(sX[i * LD + kk], sY[cc * LD + kk], d);
            float v = d * (hscale * expf(gic));
            for (int j = 0; j <= i; j++) v = fmaf(sP[i * LP + j] * sZ[j * LP + cc], expf(gic - sG[j * LP + cc]), v);
            out[at + cc] = v;
            if (dot) dot[at + cc] = v * dx[at + cc];
        }
    }
}

// ---- pass 5: dv -------------------------------------------------------------------------------

/* grid (NT, V/64, B*H), TC_GLA_OUT_THREADS threads: dv = GLA's forward outputs body with (q, k, v,
 * H) = (k, q, dO, dH as [V][K] planes) on the chunk's rows reversed, the state term unscaled. */
template <int K>
__global__ void TC_BOUNDS(TC_GLA_OUT_THREADS, tc_gla_out_bf16_smem(K))
    tc_gla_bdv_bf16(const __nv_bfloat16 *k, const __nv_bfloat16 *q, const __nv_bfloat16 *dO, const float *g,
                    const __nv_bfloat16 *dh_vk, __nv_bfloat16 *dv, int T, int H, int V, int NT, float scale)
{
    tc_gla_rows_out_bf16<K, false, true>(k, q, dO, g, dh_vk, dv, T, H, V, NT, scale, 1.f, nullptr);
}

/* grid (NT, V/64, B*H), 256 threads: the fp32 dv, gdn/chunk_fwd_tc.cuh's tc_rows_out_f32 with
 * (x, y, z, S) = (k, q, dO, dH as [K][V]) on the chunk's rows reversed, the state term unscaled. */
template <int K>
__global__ void TC_BOUNDS_REGS(256, tc_out_f32_smem(K, TC_CHANNEL), 128)
    tc_gla_bdv_f32(const float *k, const float *q, const float *dO, const float *g, const float *dh_kv, float *dv,
                   int T, int H, int V, int NT, float scale)
{
    tc_rows_out_f32<TC_CHANNEL, K, true>(k, q, dO, g, dh_kv, dv, nullptr, nullptr, T, H, V, NT, scale, 1.f);
}

// ---- pass 6: dg -------------------------------------------------------------------------------

/* grid (B*H, K/32), 256 threads: dg[b,t,h,c] = sum_{u >= t} (qdq - kdk)[b,u,h,c] + (dST . ST)'s
 * row c (when dST is given), for 32 channels c of a (b, h). Warp s of 8 owns the steps of its
 * contiguous run s (its lanes: 32 consecutive channels, coalesced), summed in fp64 from the run's
 * end; the runs' totals are suffix-summed per channel by lanes 0..31 of warp 0, then each warp
 * writes its run. Fixed order everywhere. */
__global__ void __launch_bounds__(256) tc_gla_dg(const float *qdq, const float *kdk, const float *dST, const float *ST,
                                                 float *dg, int T, int H, int K, int V)
{
    __shared__ double red[256], fin[32];
    const int bh = (int)blockIdx.x, bb = bh / H, h = bh % H, tid = (int)threadIdx.x;
    const int cl = tid & 31, seg = tid >> 5, c = (int)blockIdx.y * 32 + cl;
    double ss = 0;
    if (dST)
        for (int v = seg; v < V; v += 8) {
            const long long at = ((long long)bh * K + c) * V + v;
            ss += (double)dST[at] * (double)ST[at];
        }
    red[tid] = ss;
    __syncthreads();
    if (tid < 32) {
        double t = 0;
        for (int s = 0; s < 8; s++) t += red[s * 32 + tid];
        fin[tid] = t;
    }
    __syncthreads();
    const int per = (T + 7) / 8, lo = min(T, seg * per), hi = min(T, lo + per);
    auto at_of = [&](int u) { return (((long long)bb * T + u) * H + h) * K + c; };
    double run = 0;
    for (int u = hi - 1; u >= lo; u--) run += (double)qdq[at_of(u)] - (double)kdk[at_of(u)];
    red[tid] = run;
    __syncthreads();
    if (tid < 32) {
        double carry = fin[tid];
        for (int s = 7; s >= 0; s--) {
            const double x = red[s * 32 + tid];
            red[s * 32 + tid] = carry;
            carry += x;
        }
    }
    __syncthreads();
    double s = red[tid];
    for (int u = hi - 1; u >= lo; u--) {
        s += (double)qdq[at_of(u)] - (double)kdk[at_of(u)];
        dg[at_of(u)] = (float)s;
    }
}

/* grid (B*H, K/32), 256 threads: the fp32 path's dg, chunk-local (stage 10 of
 * gdn/chunk_host_impl.h), without the whole-sequence cancellation of tc_gla_dg: within chunk n,
 *   dg_uc = sum_{t >= u in the chunk} (qdq - kdk)_tc + (H_{n+1} . dH_{n+1})_c,
 * the last term row c's dot of the state leaving the chunk (hkv's plane n + 1, or ST for the last
 * chunk; none without dST) and its gradient (dhkv's plane n, fp32 [K][V]): the derivative through
 * the chunk's G_{L-1} of diag(exp(G_{L-1})) H_n and of the keys' exp(G_{L-1} - G_j), which the
 * global form gets from all later steps' q dq - k dk instead. Warp s of 8 takes chunks s, s + 8,
 * ..., its lanes 32 consecutive channels; fp64 sums in a fixed order. */
__global__ void __launch_bounds__(256)
    tc_gla_dg_local(const float *qdq, const float *kdk, const float *hkv, const float *dhkv, const float *dST,
                    const float *ST, float *dg, int T, int H, int K, int V, int NT)
{
    const int bh = (int)blockIdx.x, bb = bh / H, h = bh % H, tid = (int)threadIdx.x;
    const int c = (int)blockIdx.y * 32 + (tid & 31);
    for (int n = tid >> 5; n < NT; n += 8) {
        const int t0 = n * TC_C, L = min(TC_C, T - t0);
        const float *hs = n + 1 < NT ? hkv + ((long long)bh * NT + n + 1) * K * V
                          : dST      ? ST + (long long)bh * K * V
                                     : nullptr;
        const float *ds = n + 1 < NT ? dhkv + ((long long)bh * NT + n) * K * V : dST + (long long)bh * K * V;
        double run = 0;
        if (hs)
            for (int v = 0; v < V; v++) run += (double)hs[(long long)c * V + v] * (double)ds[(long long)c * V + v];
        for (int u = L - 1; u >= 0; u--) {
            const long long at = (((long long)bb * T + t0 + u) * H + h) * K + c;
            run += (double)qdq[at] - (double)kdk[at];
            dg[at] = (float)run;
        }
    }
}

#endif
