/* glr_fwd.cuh: the chunked forward of the GLR family as one CUDA kernel body,
 * glr_fwd_body<member, input type>: stages 1-5 of gdn/chunk_host_impl.h (cumsum, kkt + solve_tril,
 * W and U, the state pass, the output), fused. One CTA per (V-tile of 32 columns, head, batch)
 * holds its state tile in shared memory and walks the chunks in order; W and A do not depend on
 * V, so each V-tile recomputes them rather than waiting on another CTA.
 *
 * Launch: grid (cdiv(V, 32), H, B), block 256, dynamic shared memory glr_smem_bytes(F, K, false)
 * (gdn/glr_common.cuh; up to 219 KiB at K = 128). Supports 1 <= K, V <= 128, any T >= 0. */
#ifndef GDN_GLR_FWD_CUH
#define GDN_GLR_FWD_CUH

#include "glr_common.cuh"

/* q, k [B,T,H,K]; v, o [B,T,H,V]; g [B,T,H] or [B,T,H,K] (ignored for linear attention);
 * b [B,T,H] (delta members); S0 (nullable: zero) and ST (nullable: not written) [B,H,K,V] fp32. */
template <int F, class Tin>
__device__ void glr_fwd_body(const Tin *q, const Tin *k, const Tin *v, const float *g, const Tin *b, const float *S0,
                             Tin *o, float *ST, int B, int T, int H, int K, int V, float scale)
{
    (void)B;
    const GlrLayout lay = glr_layout(F, K, false);
#ifndef GLR_HOST_EMU
    glr_require(glr_dyn_smem_bytes() >= 4u * (unsigned)lay.total);
#endif
    glr_require(blockDim.x == GLR_THREADS && K >= 1 && K <= GLR_KMAX && V >= 1 && V <= GLR_KMAX && T >= 0);
    const int v0 = (int)blockIdx.x * GLR_BV, h = (int)blockIdx.y, bb = (int)blockIdx.z;
    if (v0 >= V) return; /* a wider grid than needed: the spare CTAs have nothing to do */
    const int nv = glr_imin(GLR_BV, V - v0), tid = (int)threadIdx.x;
    float *sm = GLR_SMEM;

    GlrChunk<F, Tin> ck;
    glr_chunk_init(ck, lay, sm, K, scale);
    glr_bind(ck, q, k, v, g, b, (const Tin *)nullptr, bb, h, T, H, K, V);
    if constexpr (GlrChunk<F, Tin>::DELTA) ck.w = sm + lay.w, ck.wst = ck.kp;
    float *sH = sm + lay.h, *sVn = sm + lay.vn;
    const int kp = ck.kp;
    const long long s0 = ((long long)bb * H + h) * K * V; /* (bb, h) in S0 / ST */
    const long long r0 = (long long)bb * T * H + h;
    Tin *ob = o + r0 * V;
    const long long sv = (long long)H * V;

    for (int e = tid; e < K * nv; e += GLR_THREADS) {
        const int c = e / nv, vv = e - c * nv;
        sH[c * GLR_BVP + vv] = S0 ? S0[s0 + (long long)c * V + v0 + vv] : 0.f;
    }
    __syncthreads();

    const int N = (T + GLR_C - 1) / GLR_C;
    for (int n = 0; n < N; ++n) {
        ck.t0 = n * GLR_C, ck.L = glr_imin(GLR_C, T - ck.t0);
        const int L = ck.L;
        glr_load_chunk(ck, true);
        if constexpr (GlrChunk<F, Tin>::DELTA) {
            glr_delta_prep(ck);
            __syncthreads();
        }
        /* v_new, q * Gamma and P are independent: one phase. */
        glr_vnew<2>(ck, sH, GLR_BVP, sVn, GLR_BVP, v0, nv);
        for (int e = tid; e < L * K; e += GLR_THREADS) {
            const int i = e / K, c = e - i * K;
            ck.sx[i * kp + c] = ck.sq[i * kp + c] * ck.gam(i, c);
        }
        glr_pair<false>(ck, ck.sq, ck.sk, ck.sm);
        __syncthreads();
        /* Stage 5: o_i = scale [ (Q_i * Gamma_i)^T H + sum_{j <= i} P_ij v_new_j ], one product
         * over the concatenated inner index (K channels, then steps j <= i). */
        {
            const float *QG = ck.sx, *P = ck.sm;
            glr_mm<4, 2, false>(
                L, nv, [&](int i, int kk) { return kk < K ? QG[i * kp + kk] : P[i * GLR_CP + (kk - K)]; },
                [&](int kk, int vv) { return kk < K ? sH[kk * GLR_BVP + vv] : sVn[(kk - K) * GLR_BVP + vv]; },
                [&](int i, int) { return glr_rg(0, K + i + 1); }, GlrNoWeight(),
                [&](int i, int vv, float acc) {
                    ob[(long long)(ck.t0 + i) * sv + v0 + vv] = glr_to<Tin>(scale * acc);
                });
        }
        __syncthreads();
        glr_kdecay(ck);
        __syncthreads();
        glr_hupdate<2>(ck, sH, sH, GLR_BVP, sVn, GLR_BVP, nv);
        __syncthreads();
    }

    if (ST)
        for (int e = tid; e < K * nv; e += GLR_THREADS) {
            const int c = e / nv, vv = e - c * nv;
            ST[s0 + (long long)c * V + v0 + vv] = sH[c * GLR_BVP + vv];
        }
}

#endif
