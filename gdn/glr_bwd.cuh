/* glr_bwd.cuh: the chunked backward of the GLR family as one CUDA kernel body,
 * glr_bwd_body<member, input type>: stages 6-10 of gdn/chunk_host_impl.h after recomputing 1-4.
 * One CTA per (head, batch): it first re-runs the forward state pass and stores the state
 * entering every chunk into the global workspace, then walks the chunks backwards carrying dh
 * (the reverse-state scan) and finishes each chunk's gradients as it goes, so every gradient row
 * has one writer and no cross-CTA reduction is needed.
 *
 * Launch: grid (H, B), block 256, dynamic shared memory glr_smem_bytes(F, K, true) (up to 212 KiB
 * at K = 128), workspace ws of B * H * glr_bwd_ws_floats(T, K, V) floats (never read before
 * written). Supports 1 <= K, V <= 128, any T >= 0. */
#ifndef GDN_GLR_BWD_CUH
#define GDN_GLR_BWD_CUH

#include "glr_common.cuh"

/* Inputs as glr_fwd_body plus dO [B,T,H,V] and dST [B,H,K,V] (nullable: zero). Outputs dq, dk
 * [B,T,H,K], dv [B,T,H,V] (input type), dg (shape of g), db [B,T,H], dS0 [B,H,K,V] (fp32; dg, db
 * and dS0 nullable: not written). dg of a head gate is the sum over the K channels. */
template <int F, class Tin>
__device__ void glr_bwd_body(const Tin *q, const Tin *k, const Tin *v, const float *g, const Tin *b, const float *S0,
                             const Tin *dO, const float *dST, Tin *dq, Tin *dk, Tin *dv, float *dg, float *db,
                             float *dS0, float *ws, int B, int T, int H, int K, int V, float scale)
{
    (void)B;
    constexpr int GK = GlrChunk<F, Tin>::GK;
    constexpr bool DELTA = GlrChunk<F, Tin>::DELTA;
    const GlrLayout lay = glr_layout(F, K, true);
#ifndef GLR_HOST_EMU
    glr_require(glr_dyn_smem_bytes() >= 4u * (unsigned)lay.total);
#endif
    glr_require(blockDim.x == GLR_THREADS && K >= 1 && K <= GLR_KMAX && V >= 1 && V <= GLR_KMAX && T >= 0);
    const int h = (int)blockIdx.x, bb = (int)blockIdx.y, tid = (int)threadIdx.x;
    float *sm = GLR_SMEM;

    GlrChunk<F, Tin> ck;
    glr_chunk_init(ck, lay, sm, K, scale);
    glr_bind(ck, q, k, v, g, b, dO, bb, h, T, H, K, V);
    const int kp = ck.kp, KV = K * V, N = (T + GLR_C - 1) / GLR_C;
    float *sp = sm + lay.p, *sdgl = sm + lay.dgl, *srow = sm + lay.row;
    float *sda = DELTA ? sm + lay.da : nullptr, *sy = DELTA ? sm + lay.y : nullptr;
    float *sdb = DELTA ? sm + lay.db : nullptr;

    /* This CTA's workspace: h[0..N-1], dh, then the chunk temporaries. */
    float *hs = ws + ((long long)bb * H + h) * glr_bwd_ws_floats(T, K, V);
    float *gdh = hs + (long long)N * KV;
    float *gvn = gdh + KV, *gdvn = gvn + GLR_C * V;
    float *gW = gdvn + GLR_C * V, *gdW = gW + GLR_C * K, *gdq = gdW + GLR_C * K;
    float *gdk = gdq + GLR_C * K, *gdG = gdk + GLR_C * K;
    if constexpr (DELTA) ck.w = gW, ck.wst = K;

    const long long s0 = ((long long)bb * H + h) * KV; /* (bb, h) in S0 / dST / dS0 */
    const long long r0 = (long long)bb * T * H + h;
    const long long sqk = (long long)H * K, sv = (long long)H * V;

    // ---- recompute the states entering each chunk (stages 1-4) ----
    for (int e = tid; e < KV; e += GLR_THREADS) hs[e] = S0 ? S0[s0 + e] : 0.f;
    __syncthreads();
    for (int n = 0; n + 1 < N; ++n) {
        ck.t0 = n * GLR_C, ck.L = GLR_C; /* every chunk before the last is full */
        glr_load_chunk(ck, false);
        if constexpr (DELTA) {
            glr_delta_prep(ck);
            __syncthreads();
        }
        const float *H0 = hs + (long long)n * KV;
        glr_vnew<4>(ck, H0, V, gvn, V, 0, V);
        glr_kdecay(ck);
        __syncthreads();
        glr_hupdate<4>(ck, H0, hs + (long long)(n + 1) * KV, V, gvn, V, V);
        __syncthreads();
    }

    // ---- the reverse scan over chunks, finishing each chunk's gradients ----
    for (int e = tid; e < KV; e += GLR_THREADS) gdh[e] = dST ? dST[s0 + e] : 0.f;
    for (int n = N - 1; n >= 0; --n) {
        ck.t0 = n * GLR_C, ck.L = glr_imin(GLR_C, T - ck.t0);
        const int L = ck.L, t0 = ck.t0;
        const float *gH = hs + (long long)n * KV; /* h[n], the state entering the chunk */
        if constexpr (DELTA)
            for (int i = tid; i < GLR_C; i += GLR_THREADS) sdb[i] = 0.f;
        glr_load_chunk(ck, true); /* (also orders the dh initialisation above) */
        if constexpr (DELTA) {
            glr_delta_prep(ck);
            __syncthreads();
        }
        /* v_new, P and K * exp(G_last - G): independent. */
        glr_vnew<4>(ck, gH, V, gvn, V, 0, V);
        glr_pair<false>(ck, ck.sq, ck.sk, sp);
        glr_kdecay(ck);
        __syncthreads();

        /* Stages 6 + 7a: dv_new_j = scale sum_{i >= j} P_ij dO_i + (K_j exp(G_last - G_j))^T dh;
         * stage 8's inter-chunk dq_ic = scale Gamma_ic (dO H^T)_ic and the state-passing part
         * of dk, dKd_jc exp(G_last,c - G_jc) with dKd = v_new dh^T. */
        {
            const float *P = sp, *Kd = ck.sx;
            glr_mm<4, 4, false>(
                L, V, [&](int j, int kk) { return kk < L ? scale * P[kk * GLR_CP + j] : Kd[j * kp + (kk - L)]; },
                [&](int kk, int vv) { return kk < L ? ck.doin(kk, vv) : gdh[(kk - L) * V + vv]; },
                [&](int j, int) { return glr_rg(j, L + K); }, GlrNoWeight(),
                [&](int j, int vv, float acc) { gdvn[j * V + vv] = acc; });
            glr_mm<4, 4, false>(
                L, K, [&](int i, int vv) { return ck.doin(i, vv); }, [&](int vv, int c) { return gH[c * V + vv]; },
                [&](int, int) { return glr_rg(0, V); }, GlrNoWeight(),
                [&](int i, int c, float acc) { gdq[i * K + c] = scale * ck.gam(i, c) * acc; });
            glr_mm<4, 4, false>(
                L, K, [&](int j, int vv) { return gvn[j * V + vv]; }, [&](int vv, int c) { return gdh[c * V + vv]; },
                [&](int, int) { return glr_rg(0, V); }, GlrNoWeight(),
                [&](int j, int c, float acc) { gdk[j * K + c] = acc * ck.decay(L - 1, j, c); });
        }
        __syncthreads();

        /* dP_ij = scale dO_i . v_new_j (j <= i) into sp (P is consumed); the extra gradient of the
         * last row's cumsum: sum_j K_jc dk_state_jc + Gamma_last,c (H_c . dh_c). */
        glr_mm<4, 4, false>(
            L, L, [&](int i, int vv) { return ck.doin(i, vv); }, [&](int vv, int j) { return gvn[j * V + vv]; },
            [&](int i, int j) { return j <= i ? glr_rg(0, V) : glr_rg(0, 0); }, GlrNoWeight(),
            [&](int i, int j, float acc) { sp[i * GLR_CP + j] = scale * acc; });
        if constexpr (GK != GLR_GATE_NONE)
            for (int c = tid; c < K; c += GLR_THREADS) {
                float s1 = 0.f, s2 = 0.f;
                for (int j = 0; j < L; ++j) s1 += ck.sk[j * kp + c] * gdk[j * K + c];
                for (int vv = 0; vv < V; ++vv) s2 += gH[c * V + vv] * gdh[c * V + vv];
                sdgl[c] = s1 + ck.gam(L - 1, c) * s2;
            }
        __syncthreads();

        /* Intra-chunk dq_ic += sum_{j <= i} dP_ij K_jc E_ijc, dk_jc += sum_{i >= j} dP_ij Q_ic E_ijc. */
        glr_rows_e<false>(ck, sp, ck.sk, [&](int i, int c, float acc) { gdq[i * K + c] += acc; });
        glr_cols_e<false>(ck, sp, ck.sq, [&](int j, int c, float acc) { gdk[j * K + c] += acc; });
        __syncthreads();

        /* Stage 8's gate gradient w.r.t. the cumsum: dG = Q * dq - K * dk (every term of stage 8
         * pairs a q-side + with a k-side -), plus the last row's extra. */
        if constexpr (GK != GLR_GATE_NONE)
            for (int e = tid; e < L * K; e += GLR_THREADS) {
                const int i = e / K, c = e - i * K;
                const float x = ck.sq[i * kp + c] * gdq[i * K + c] - ck.sk[i * kp + c] * gdk[i * K + c];
                gdG[i * K + c] = i == L - 1 ? x + sdgl[c] : x;
            }
        if constexpr (!DELTA)
            for (int e = tid; e < L * V; e += GLR_THREADS) {
                const int j = e / V, vv = e - j * V;
                dv[r0 * V + (long long)(t0 + j) * sv + vv] = glr_to<Tin>(gdvn[j * V + vv]);
            }
        __syncthreads();

        /* Stage 9 (prepare_wy_repr_bwd), delta members. */
        if constexpr (DELTA) {
            const float *A = ck.sa, *Mx = ck.sm, *bs = ck.sb;
            /* dW = -dv_new H^T;  sx = Bk = b K Gamma again. */
            glr_mm<4, 4, false>(
                L, K, [&](int i, int vv) { return gdvn[i * V + vv]; }, [&](int vv, int c) { return gH[c * V + vv]; },
                [&](int, int) { return glr_rg(0, V); }, GlrNoWeight(),
                [&](int i, int c, float acc) { gdW[i * K + c] = -acc; });
            for (int e = tid; e < L * K; e += GLR_THREADS) {
                const int j = e / K, c = e - j * K;
                ck.sx[j * kp + c] = bs[j] * ck.sk[j * kp + c] * ck.gam(j, c);
            }
            __syncthreads();
            /* dA_ij = dv_new_i . (b_j v_j) + dW_i . Bk_j (j <= i);  dBv = A^T dv_new into gvn
             * (v_new is consumed) and dv = b dBv. */
            {
                const float *Bk = ck.sx;
                glr_mm<4, 4, false>(
                    L, L, [&](int i, int kk) { return kk < V ? gdvn[i * V + kk] : gdW[i * K + (kk - V)]; },
                    [&](int kk, int j) { return kk < V ? bs[j] * ck.vin(j, kk) : Bk[j * kp + (kk - V)]; },
                    [&](int i, int j) { return j <= i ? glr_rg(0, V + K) : glr_rg(0, 0); }, GlrNoWeight(),
                    [&](int i, int j, float acc) { sda[i * GLR_CP + j] = acc; });
                glr_mm<4, 4, false>(
                    L, V, [&](int j, int i) { return A[i * GLR_CP + j]; },
                    [&](int i, int vv) { return gdvn[i * V + vv]; }, [&](int j, int) { return glr_rg(j, L); },
                    GlrNoWeight(),
                    [&](int j, int vv, float acc) {
                        gvn[j * V + vv] = acc;
                        dv[r0 * V + (long long)(t0 + j) * sv + vv] = glr_to<Tin>(bs[j] * acc);
                    });
            }
            __syncthreads();
            /* dBk = A^T dW: dk += b Gamma dBk, dG += b K Gamma dBk, and sx = dBk * K * Gamma for
             * db;  Y = dA A^T;  db_j += dBv_j . v_j. */
            glr_mm<4, 4, false>(
                L, K, [&](int j, int i) { return A[i * GLR_CP + j]; }, [&](int i, int c) { return gdW[i * K + c]; },
                [&](int j, int) { return glr_rg(j, L); }, GlrNoWeight(),
                [&](int j, int c, float acc) {
                    const float t = acc * ck.gam(j, c), kjc = ck.sk[j * kp + c];
                    gdk[j * K + c] += bs[j] * t;
                    if constexpr (GK != GLR_GATE_NONE) gdG[j * K + c] += bs[j] * kjc * t;
                    ck.sx[j * kp + c] = t * kjc;
                });
            glr_mm<4, 4, false>(
                L, L, [&](int m, int j) { return sda[m * GLR_CP + j]; },
                [&](int j, int l) { return A[l * GLR_CP + j]; },
                [&](int m, int l) { return glr_rg(0, glr_imin(m, l) + 1); }, GlrNoWeight(),
                [&](int m, int l, float acc) { sy[m * GLR_CP + l] = acc; });
            for (int j = tid; j < L; j += GLR_THREADS) {
                float s = 0.f;
                for (int vv = 0; vv < V; ++vv) s += gvn[j * V + vv] * ck.vin(j, vv);
                sdb[j] += s;
            }
            __syncthreads();
            /* db_j += dBk_j . (K_j Gamma_j);  dTm_ij = -sum_{m >= i} A_mi Y_mj (j < i) into sda. */
            for (int j = tid; j < L; j += GLR_THREADS) {
                float s = 0.f;
                for (int c = 0; c < K; ++c) s += ck.sx[j * kp + c];
                sdb[j] += s;
            }
            glr_mm<4, 4, false>(
                L, L, [&](int i, int m) { return A[m * GLR_CP + i]; }, [&](int m, int j) { return sy[m * GLR_CP + j]; },
                [&](int i, int j) { return j < i ? glr_rg(i, L) : glr_rg(0, 0); }, GlrNoWeight(),
                [&](int i, int j, float acc) { sda[i * GLR_CP + j] = -acc; });
            __syncthreads();
            /* db_i += sum_{j < i} dTm_ij M_ij, then dM = b_i dTm in place (row i: one thread). */
            for (int i = tid; i < L; i += GLR_THREADS) {
                float s = 0.f;
                for (int j = 0; j < i; ++j) {
                    const float dT = sda[i * GLR_CP + j];
                    s += dT * Mx[i * GLR_CP + j];
                    sda[i * GLR_CP + j] = bs[i] * dT;
                }
                sdb[i] += s;
            }
            __syncthreads();
            /* Through M: dk_ic += sum_{j < i} dM_ij K_jc E_ijc (dG += K * that) and
             * dk_jc += sum_{i > j} dM_ij K_ic E_ijc (dG -= K * that). */
            glr_rows_e<true>(ck, sda, ck.sk, [&](int i, int c, float acc) {
                gdk[i * K + c] += acc;
                if constexpr (GK != GLR_GATE_NONE) gdG[i * K + c] += ck.sk[i * kp + c] * acc;
            });
            __syncthreads();
            glr_cols_e<true>(ck, sda, ck.sk, [&](int j, int c, float acc) {
                gdk[j * K + c] += acc;
                if constexpr (GK != GLR_GATE_NONE) gdG[j * K + c] -= ck.sk[j * kp + c] * acc;
            });
            __syncthreads();
        }

        /* Stage 7b: dh[n] = Diag(Gamma_last) dh[n+1] + scale (Q * Gamma)^T dO - W^T dv_new, in
         * place (each element read and written by its owner). */
        for (int e = tid; e < L * K; e += GLR_THREADS) {
            const int i = e / K, c = e - i * K;
            ck.sx[i * kp + c] = scale * ck.sq[i * kp + c] * ck.gam(i, c);
        }
        __syncthreads();
        {
            const float *QG = ck.sx;
            glr_mm<4, 4, false>(
                K, V, [&](int c, int kk) { return kk < L ? QG[kk * kp + c] : -gW[(kk - L) * K + c]; },
                [&](int kk, int vv) { return kk < L ? ck.doin(kk, vv) : gdvn[(kk - L) * V + vv]; },
                [&](int, int) { return glr_rg(0, DELTA ? 2 * L : L); }, GlrNoWeight(),
                [&](int c, int vv, float acc) { gdh[c * V + vv] = ck.gam(L - 1, c) * gdh[c * V + vv] + acc; });
        }
        /* Stage 10 and the chunk's outputs. dg: reverse cumsum of dG down the chunk (per channel,
         * or of the channel sums for a head gate). */
        if constexpr (GK == GLR_GATE_CHANNEL) {
            if (dg)
                for (int c = tid; c < K; c += GLR_THREADS) {
                    float run = 0.f;
                    for (int i = L - 1; i >= 0; --i) {
                        run += gdG[i * K + c];
                        dg[r0 * K + (long long)(t0 + i) * sqk + c] = run;
                    }
                }
        } else if constexpr (GK == GLR_GATE_HEAD) {
            for (int i = tid; i < L; i += GLR_THREADS) {
                float s = 0.f;
                for (int c = 0; c < K; ++c) s += gdG[i * K + c];
                srow[i] = s;
            }
        }
        for (int e = tid; e < L * K; e += GLR_THREADS) {
            const int i = e / K, c = e - i * K;
            const long long off = r0 * K + (long long)(t0 + i) * sqk + c;
            dq[off] = glr_to<Tin>(gdq[i * K + c]);
            dk[off] = glr_to<Tin>(gdk[i * K + c]);
        }
        if constexpr (DELTA)
            if (db)
                for (int i = tid; i < L; i += GLR_THREADS) db[r0 + (long long)(t0 + i) * H] = sdb[i];
        __syncthreads();
        if constexpr (GK == GLR_GATE_HEAD)
            if (dg && tid == 0) {
                float run = 0.f;
                for (int i = L - 1; i >= 0; --i) {
                    run += srow[i];
                    dg[r0 + (long long)(t0 + i) * H] = run;
                }
            }
        /* The next chunk overwrites q, k, G and the temporaries only after this barrier; the
         * loop's first barrier (in glr_load_chunk) covers srow. */
    }
    __syncthreads();
    if (dS0)
        for (int e = tid; e < KV; e += GLR_THREADS) dS0[s0 + e] = gdh[e];
}

#endif
