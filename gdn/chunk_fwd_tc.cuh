/* chunk_fwd_tc.cuh: chunk-parallel forward kernels for the two GLR members without a delta rule,
 * linear attention (no gate) and SSD / simple GLA (one log gate g per (b, t, h)): bf16 inputs on
 * tensor cores (mma.sync m16n8k16, fp32 accumulation), fp32 inputs on CUDA cores in exact fp32.
 * Launched by gdn/libgdn_tc.cu (gdn_cuda_fwd_tc in gdn/libgdn.h); nvcc only.
 *
 * The math (gdn/oracle.c: S_t = a_t S_{t-1} + k_t v_t^T, o_t = scale S_t^T q_t, a_t = exp(g_t)).
 * Chunk n covers steps t0 = 64n .. t0 + L - 1; G_i = g_t0 + ... + g_{t0+i} (inclusive, fp32,
 * sequential), H = the state entering the chunk. Then, for i, j < L,
 *   o_i    = scale [ exp(G_i) (H^T q_i) + sum_{j <= i} exp(G_i - G_j) (q_i . k_j) v_j ]
 *   H_next = exp(G_{L-1}) H + sum_j (k_j exp(G_{L-1} - G_j)) v_j^T
 * (linear attention: every exp is 1). Two kernels:
 *   1. the state scan, one CTA per (64-row K tile, 64-column V tile, b, h), walks the chunks in
 *      order with its fp32 state tile in registers (the mma accumulators): writes H of every
 *      chunk to the workspace hs, then H = exp(G_last) H + (K * w)^T V on tensor cores. The
 *      per-chunk local products and the scan are fused in this one pass: a separate pass of local
 *      states would write and read back a K x V fp32 matrix per chunk, twice the bytes of the
 *      k and v tiles the scan reads here, for the same products.
 *   2. the outputs, one CTA per (chunk, 64-column V tile, b, h), all chunks in parallel:
 *      P = Q K^T (causal, decayed, scaled), then o = scale exp(G_i) (Q H) + P V.
 * Determinism: every output element has one writer and every sum a fixed order (mma.sync's
 * internal order is fixed by the hardware); no atomics. Tail chunk (L < 64): rows j >= L of the
 * tiles are loaded as zeros and never written back. Causality is by selection in P (an entry
 * j > i is set to 0, never multiplied by a mask); on the tensor-core path a NaN in v_j still
 * reaches rows i < j of its chunk (0 * NaN in P V), unlike the oracle, which the CUDA-core path
 * matches. Supported: K, V in {64, 128, 256}. With TC_HOST_EMU defined the file compiles as host
 * C++ on gdn/tc_emu.h instead (gdn/tc_emu_check.cc runs it there against the oracle). */
#ifndef GDN_CHUNK_FWD_TC_CUH
#define GDN_CHUNK_FWD_TC_CUH

#include <stdint.h>

#ifdef TC_HOST_EMU
#include "tc_emu.h" /* host emulation of the CUDA built-ins and of mma.sync, for testing without a GPU */
#define TC_DYNAMIC_SMEM(name) unsigned char *const name = tc_emu_dyn_smem()
#define TC_NOINLINE
#else
#define TC_NOINLINE __noinline__
#include <cuda_bf16.h>
#define TC_DYNAMIC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#endif

#define TC_C    64 /* chunk length = the K, V tile size */
#define TC_TP   72 /* bf16 row stride of a 64-column tile: 36 words, = 4 mod 32, conflict-free fragments */
#define TC_F32P 65 /* fp32 row stride of a 64-column tile read down a column */

/* What one SM of the H200 (sm_90) holds at once, for tc_ctas_per_sm */
#define TC_SM_SMEM      (228 * 1024) /* shared memory per SM (a CTA may have up to 227 KB of it) */
#define TC_CTA_RESERVED 1024         /* shared memory the system reserves per resident CTA */
#define TC_SMEM_GRAIN   128          /* a CTA's shared memory is allocated in units of this */
#define TC_SM_THREADS   2048         /* threads per SM */
#define TC_SM_CTAS      32           /* CTAs per SM */
#define TC_SM_REGS      65536        /* 32-bit registers per SM, allocated 8 a thread at a time */

/* How many CTAs of `threads` threads and smem_bytes of shared memory one SM can hold at once
 * (never less than 1), counting shared memory, threads and, when regs > 0, regs registers a
 * thread: the second __launch_bounds__ argument (minimum CTAs per SM) of the tensor-core kernels
 * (TC_BOUNDS). Without it ptxas sized their registers for more CTAs than their shared memory lets
 * in (80-96 registers at 128 threads where two or three CTAs fit) and some spilled; with it a
 * thread may use the TC_SM_REGS / (CTAs x threads) registers that cost no occupancy. regs is for
 * the few CUDA-core kernels whose small tiles leave room for more CTAs than their registers do:
 * held to that many CTAs' share they spill (ptxas, sm_90a: the fp32 scans of linear attention and
 * SSD at 40 registers, 104-152 bytes; the fp32 outputs at K = 64 at 80, 156-232 bytes), so they
 * pass the registers they use without a bound (TC_BOUNDS_REGS), which keeps their occupancy. */
__host__ __device__ constexpr int tc_ctas_per_sm(unsigned smem_bytes, int threads, int regs = 0)
{
    const unsigned per_cta = (smem_bytes + TC_SMEM_GRAIN - 1) / TC_SMEM_GRAIN * TC_SMEM_GRAIN + TC_CTA_RESERVED;
    const int by_smem = (int)(TC_SM_SMEM / per_cta), by_threads = TC_SM_THREADS / threads;
    const int by_regs = regs > 0 ? TC_SM_REGS / ((regs + 7) / 8 * 8 * threads) : TC_SM_CTAS;
    const int n = by_smem < by_threads ? by_smem : by_threads, m = n < by_regs ? n : by_regs;
    return m < 1 ? 1 : m > TC_SM_CTAS ? TC_SM_CTAS : m;
}

/* __launch_bounds__ of a kernel of `threads` threads and `smem` bytes of dynamic shared memory
 * (TC_BOUNDS_REGS: that needs `regs` registers a thread) */
#define TC_BOUNDS(threads, smem)            __launch_bounds__(threads, tc_ctas_per_sm(smem, threads))
#define TC_BOUNDS_REGS(threads, smem, regs) __launch_bounds__(threads, tc_ctas_per_sm(smem, threads, regs))

// ---- shared helpers ---------------------------------------------------------------------------

/* The chunk's inclusive gate cumsum into sG[0..63] (rows >= L repeat G_{L-1}, so that every
 * exponent stays a difference of finite values); all zeros when not GATED. One thread sums
 * sequentially, as gdn/chunk_host_impl.h does; g[at + i H] is the gate of step t0 + i (at =
 * (b T + t0) H + h). Ends synchronised. */
template <bool GATED> __device__ void tc_gate_cumsum(const float *g, long long at, int H, int L, float *sG)
{
    const int tid = (int)threadIdx.x;
    if (tid < TC_C) sG[tid] = (GATED && tid < L) ? g[at + (long long)tid * H] : 0.f;
    __syncthreads();
    if (GATED && tid == 0) {
        float s = 0.f;
        for (int i = 0; i < TC_C; i++) {
            if (i < L) s += sG[i];
            sG[i] = s;
        }
    }
    __syncthreads();
}

/* Asynchronous copies global -> shared (cp.async, sm_80+): a thread issues all of its copies of
 * a tile before any of them lands, where a loop of plain loads and shared stores waits out each
 * load in turn (the compiler cannot move a generic load above a shared store it might alias):
 * measured on the H200, that made GLA's backward dq and dk passes ~8 ms each. tc_cp_wait waits
 * for this thread's copies; a __syncthreads after it publishes them to the CTA. The host
 * emulation lands a copy at that wait or at once, by the order its threads run in (gdn/tc_emu.h). */
__device__ __forceinline__ void tc_cp4(void *dst, const void *src)
{
#ifdef TC_HOST_EMU
    tc_emu_cp_async(dst, src, 4);
#else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src)
                 : "memory");
#endif
}

__device__ __forceinline__ void tc_cp16(void *dst, const void *src) /* both 16-byte aligned */
{
#ifdef TC_HOST_EMU
    tc_emu_cp_async(dst, src, 16);
#else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src)
                 : "memory");
#endif
}

__device__ __forceinline__ void tc_cp_wait()
{
#ifdef TC_HOST_EMU
    tc_emu_cp_wait(0, true);
#else
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

/* Pipelined copies: tc_cp_commit closes this thread's copies issued since the last commit into a
 * group (none makes an empty group); tc_cp_wait_prior<N> waits until at most the N most recent
 * groups are still in flight. */
__device__ __forceinline__ void tc_cp_commit()
{
#ifdef TC_HOST_EMU
    tc_emu_cp_commit();
#else
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N> __device__ __forceinline__ void tc_cp_wait_prior()
{
#ifdef TC_HOST_EMU
    tc_emu_cp_wait(N, false);
#else
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* tc_gate_cumsum<true> in two halves, so that the gates' loads can be in flight across other
 * work: tc_gate_copy starts copying the chunk's gates into sG[0..63] (rows >= L: 0; no barrier:
 * call it once nothing reads sG any more), and tc_gate_sum waits for this thread's copies,
 * synchronises and sums them as tc_gate_cumsum does (the same sums to the bit). Ends
 * synchronised. */
__device__ __forceinline__ void tc_gate_copy(const float *g, long long at, int H, int L, float *sG)
{
    const int tid = (int)threadIdx.x;
    if (tid < TC_C) {
        if (tid < L)
            tc_cp4(sG + tid, g + at + (long long)tid * H);
        else
            sG[tid] = 0.f;
    }
}

__device__ void tc_gate_sum(int L, float *sG)
{
    tc_cp_wait();
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.f;
        for (int i = 0; i < TC_C; i++) {
            if (i < L) s += sG[i];
            sG[i] = s;
        }
    }
    __syncthreads();
}

/* The chunk's inclusive per-channel gate cumsums of channels c0 .. c0 + nc - 1 into
 * sG[i * ldg + cc] (i < 64; rows >= L repeat G_{L-1}). The 64 x nc gates are copied first, by all
 * threads at once (tc_cp4: consecutive threads on consecutive channels, coalesced; one thread
 * walking its channel's 64 steps in global memory waits for each load in turn: measured on the
 * H200, that made the state scan 4.1 ms at B8 T4096 H16 K=V=128); then one thread per channel
 * sums its 64 steps in order, in shared memory (reading 16 rows ahead made ptxas spill in
 * tc_gla_cumsum_call and KDA's fp32 state kernel).
 * g[(at + i H) K + c0 + cc] is the gate of step t0 + i, channel c0 + cc. REV
 * (gdn/chunk_bwd_gla_tc.cuh's anti-causal passes): the cumsums of the chunk's rows reversed, g'_0
 * = 0, g'_i = g_{L-i}, so that G'_i = G_{L-1} - G_{L-1-i}, as tc_gate_cumsum_rows. Waits for every
 * asynchronous copy this thread issued before (tc_load_rows_async) and ends synchronised. */
template <bool REV = false>
__device__ __forceinline__ void tc_gla_cumsum(const float *g, long long at, int H, int K, int c0, int nc, int L,
                                              float *sG, int ldg)
{
    for (int idx = (int)threadIdx.x; idx < TC_C * nc; idx += (int)blockDim.x) {
        const int i = idx / nc, cc = idx % nc;
        const long long src = REV ? (long long)(L - i) : (long long)i;
        if (REV ? i > 0 && i < L : i < L)
            tc_cp4(sG + i * ldg + cc, g + (at + src * H) * K + c0 + cc);
        else
            sG[i * ldg + cc] = 0.f;
    }
    tc_cp_wait();
    __syncthreads();
    for (int cc = (int)threadIdx.x; cc < nc; cc += (int)blockDim.x) {
        float s = 0.f;
        for (int i = 0; i < TC_C; i++) {
            s += sG[i * ldg + cc]; /* rows >= L add 0: G_{L-1} again */
            sG[i * ldg + cc] = s;
        }
    }
    __syncthreads();
}

/* tc_gla_cumsum as a call: inlined into tc_state_bf16<TC_CHANNEL>'s chunk loop it made ptxas
 * spill 48 bytes (96 registers; 86 and none as a call) */
__device__ TC_NOINLINE void tc_gla_cumsum_call(const float *g, long long at, int H, int K, int c0, int nc, int L,
                                               float *sG, int ldg)
{
    tc_gla_cumsum(g, at, H, K, c0, nc, L, sG, ldg);
}

// ---- tensor-core primitives (bf16) -------------------------------------------------------------

/* d += a b with the PTX fragment layouts of m16n8k16 (g = lane / 4, t = lane % 4):
 *   a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..], a[2] = A[g][2t+8..], a[3] = A[g+8][2t+8..]
 *   b[0] = B[2t..2t+1][g], b[1] = B[2t+8..2t+9][g]
 *   d[0..1] = D[g][2t..2t+1], d[2..3] = D[g+8][2t..2t+1]   (lower element in the low half) */
__device__ __forceinline__ void tc_mma(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
#ifdef TC_HOST_EMU
    tc_emu_mma_bf16(d, a, b0, b1);
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

__device__ __forceinline__ uint32_t tc_ld32(const __nv_bfloat16 *p)
{
    return *reinterpret_cast<const uint32_t *>(p);
}

__device__ __forceinline__ uint32_t tc_pack(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}

/* (x0, x1) as the bf16 pair *hi plus the pair of residuals *lo: x ~= hi + lo to ~16 bits. */
__device__ __forceinline__ void tc_split(float x0, float x1, uint32_t *hi, uint32_t *lo)
{
    const __nv_bfloat16 h0 = __float2bfloat16_rn(x0), h1 = __float2bfloat16_rn(x1);
    *hi = tc_pack(__bfloat162float(h0), __bfloat162float(h1));
    *lo = tc_pack(x0 - __bfloat162float(h0), x1 - __bfloat162float(h1));
}

/* The A fragment of rows m0.. m0+15, columns k0 .. k0+15 of a row-major bf16 tile (stride ld). */
__device__ __forceinline__ void tc_frag_a(uint32_t a[4], const __nv_bfloat16 *s, int ld, int m0, int k0)
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    a[0] = tc_ld32(s + (m0 + g) * ld + k0 + 2 * t);
    a[1] = tc_ld32(s + (m0 + g + 8) * ld + k0 + 2 * t);
    a[2] = tc_ld32(s + (m0 + g) * ld + k0 + 2 * t + 8);
    a[3] = tc_ld32(s + (m0 + g + 8) * ld + k0 + 2 * t + 8);
}

/* ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16: four 8 x 8 bf16 matrices, lane 8j + i giving the
 * address of row i of matrix j (16-byte aligned); r[j] of lane (g, t) = matrix j's elements
 * [2t][g], [2t + 1][g] (pairs down a column: the B fragment of a tile stored B[k][n]). */
__device__ __forceinline__ void tc_ldsm_x4_trans(uint32_t r[4], const __nv_bfloat16 *row)
{
#ifdef TC_HOST_EMU
    tc_emu_ldmatrix_x4(r, row, true);
#else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"((unsigned)__cvta_generic_to_shared(row)));
#endif
}

/* tc_frag_b_kn of two planes by one ldmatrix.x4.trans: b[0], b[1] from sB, b[2], b[3] from sB + pl
 * (matrices: rows k0.. and k0 + 8.. of each plane, columns n0..) */
__device__ __forceinline__ void tc_frag_b_kn2_ldsm(uint32_t b[4], const __nv_bfloat16 *sB, int pl, int ld, int n0,
                                                   int k0)
{
    const int lane = (int)threadIdx.x & 31;
    tc_ldsm_x4_trans(b, sB + (lane / 16) * pl + (k0 + lane % 8 + 8 * (lane / 8 % 2)) * ld + n0);
}

/* The A fragment of X^T, rows m0 .. m0+15, columns k0 .. k0+15, where X is a row-major bf16 tile
 * (stride ld): A[i][k] = s[k * ld + i], by one ldmatrix.x4.trans (matrices: rows k0.. and k0 + 8..
 * of X, columns m0.. and m0 + 8.., in tc_frag_a's register order) */
__device__ __forceinline__ void tc_frag_at_ldsm(uint32_t a[4], const __nv_bfloat16 *s, int ld, int m0, int k0)
{
    const int lane = (int)threadIdx.x & 31;
    tc_ldsm_x4_trans(a, s + (k0 + lane % 8 + 8 * (lane / 16)) * ld + m0 + 8 * (lane / 8 % 2));
}

/* The low (hi = 0) or high half of a bf16 pair register, in fp32 (exact) */
__device__ __forceinline__ float tc_half(uint32_t r, int hi)
{
    const uint32_t u = hi ? r & 0xffff0000u : r << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* The bf16 pair (*p0, *p1) as one register, *p0 in the low half */
__device__ __forceinline__ uint32_t tc_pack16(const __nv_bfloat16 *p0, const __nv_bfloat16 *p1)
{
    return (uint32_t) * reinterpret_cast<const unsigned short *>(p0) |
           (uint32_t) * reinterpret_cast<const unsigned short *>(p1) << 16;
}

/* The B fragment of rows (reduction index) k0 .. k0+15, columns n0 .. n0+7 of a B stored
 * row-major, B[k][n] = s[k * ld + n] (no transposed copy needed): each register from two 16-bit
 * loads. With ld = TC_TP (36 words) a load's 32 lanes read 16 words in 16 banks, two lanes a
 * word: conflict-free. tc_frag_b_kn2_ldsm does it by ldmatrix; this is its reference in
 * tc_emu_check. */
__device__ __forceinline__ void tc_frag_b_kn(uint32_t *b0, uint32_t *b1, const __nv_bfloat16 *s, int ld, int n0, int k0)
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const __nv_bfloat16 *p = s + (k0 + 2 * t) * ld + n0 + g;
    *b0 = tc_pack16(p, p + ld);
    *b1 = tc_pack16(p + 8 * ld, p + 9 * ld);
}

/* The B fragment of B = X^T, rows (reduction index) k0 .. k0+15, columns n0 .. n0+7, where X is
 * stored row-major with one row per B column: B[k][n] = s[n * ld + k]. */
__device__ __forceinline__ void tc_frag_b(uint32_t *b0, uint32_t *b1, const __nv_bfloat16 *s, int ld, int n0, int k0)
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    *b0 = tc_ld32(s + (n0 + g) * ld + k0 + 2 * t);
    *b1 = tc_ld32(s + (n0 + g) * ld + k0 + 2 * t + 8);
}

/* d += A B where A = a + al and B = b + bl come as bf16 hi + lo fragments (B from the planes sB,
 * sBl at columns n0.., reduction rows k0..): hi hi, lo hi, hi lo; the lo lo term (~2^-16 of the
 * product) is left out. */
__device__ __forceinline__ void tc_mma3(float d[4], const uint32_t a[4], const uint32_t al[4], const __nv_bfloat16 *sB,
                                        const __nv_bfloat16 *sBl, int ld, int n0, int k0)
{
    uint32_t b0, b1, l0, l1;
    tc_frag_b(&b0, &b1, sB, ld, n0, k0);
    tc_frag_b(&l0, &l1, sBl, ld, n0, k0);
    tc_mma(d, a, b0, b1);
    tc_mma(d, al, b0, b1);
    tc_mma(d, a, l0, l1);
}

/* d += A B with A and B as their bf16 hi planes alone (a, B's hi plane sB at columns n0.., reduction
 * rows k0..): one mma where tc_mma3 takes three. The sequential scans' products (tc_gdn_state_bf16,
 * tc_gdn_bscan_bf16) take it: they are chains of dependent mma over the chunks, latency-bound;
 * their state stays in fp32 accumulators, and the operands' ~2^-9 rounding (no lo planes) keeps
 * the forward's outputs within the bar (gdn/README.md, "The scans' products in bf16"). Not the
 * backward's dg, which carries H's error through gamma (H . H'): its pass 2 runs the state scan
 * with tc_mma3 (tc_gdn_state_bf16's LO). */
__device__ __forceinline__ void tc_mma1(float d[4], const uint32_t a[4], const __nv_bfloat16 *sB, int ld, int n0,
                                        int k0)
{
    uint32_t b0, b1;
    tc_frag_b(&b0, &b1, sB, ld, n0, k0);
    tc_mma(d, a, b0, b1);
}

/* d[nh] = the m16n8 tiles nh = 0, 1 of X Y^T for the 16 rows x0 .. of X against the 16 rows
 * 0 .. 15 of Y, K columns, both as bf16 hi + lo planes of row stride ld (tc_mma3): a block below
 * the diagonal of GLA's P and of KDA's A, from the factors q exp(G_i - G_r), k exp(G_r - G_j). */
template <int K>
__device__ __forceinline__ void tc_block_xyt(float d[2][4], const __nv_bfloat16 *sX, const __nv_bfloat16 *sXl, int ld,
                                             int x0, const __nv_bfloat16 *sY, const __nv_bfloat16 *sYl)
{
#pragma unroll
    for (int nh = 0; nh < 2; nh++)
#pragma unroll
        for (int e = 0; e < 4; e++) d[nh][e] = 0.f;
    for (int ks = 0; ks < K / 16; ks++) {
        uint32_t a[4], al[4];
        tc_frag_a(a, sX, ld, x0, 16 * ks);
        tc_frag_a(al, sXl, ld, x0, 16 * ks);
        tc_mma3(d[0], a, al, sY, sYl, ld, 0, 16 * ks);
        tc_mma3(d[1], a, al, sY, sYl, ld, 8, 16 * ks);
    }
}

/* p = X Y^T for warp w's 16 rows (16w ..) against the column tiles 0 .. 2w+1 (p[m]: columns 8m
 * .. 8m+7, m > 2w+1 left 0): the causal block triangle of the 64 x 64 product of two row-major
 * bf16 tiles of K columns (rows are steps of the chunk). */
template <int K>
__device__ __forceinline__ void tc_causal_xyt(float p[8][4], const __nv_bfloat16 *sX, const __nv_bfloat16 *sY, int ld,
                                              int w)
{
#pragma unroll
    for (int m = 0; m < 8; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) p[m][e] = 0.f;
    for (int ks = 0; ks < K / 16; ks++) {
        uint32_t a[4];
        tc_frag_a(a, sX, ld, 16 * w, 16 * ks);
#pragma unroll
        for (int m = 0; m < 8; m++) {
            if (m > 2 * w + 1) continue; /* warp-uniform */
            uint32_t b0, b1;
            tc_frag_b(&b0, &b1, sY, ld, 8 * m, 16 * ks);
            tc_mma(p[m], a, b0, b1);
        }
    }
}

/* Loads the 64 x ncols tile src[j * stride + c] (rows j < L, else zeros; ncols % 8 == 0)
 * TRANSPOSED into dst[c * TC_TP + j] as bf16 hi + lo (dst_lo) of x = src * rw[j] *
 * exp(sg[last][c] - sg[j][c]) with last >= 0, or src * rw[j] * exp(sg[j][c]) with last < 0 (rw
 * NULL: 1; sg NULL: no exponential), sg[j * ldg + c] the per-channel gate cumsums of these
 * columns (GLA's, KDA's decayed keys). Any block size; lanes walk j, so that the 2-byte shared
 * stores of a warp fill consecutive words. */
__device__ __forceinline__ void tc_load_kt_decayed(const __nv_bfloat16 *src, long long stride, int L, int ncols,
                                                   const float *rw, const float *sg, int ldg, int last,
                                                   __nv_bfloat16 *dst, __nv_bfloat16 *dst_lo)
{
    const int total = TC_C * (ncols / 8), nt = (int)blockDim.x;
    /* four 16-byte loads in flight before the first store (as tc_copy_transposed) */
    for (int base = (int)threadIdx.x; base < total; base += 4 * nt) {
        uint4 raw[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int idx = base + u * nt, j = idx % TC_C, grp = idx / TC_C;
            raw[u] = make_uint4(0, 0, 0, 0);
            if (idx < total && j < L) raw[u] = *reinterpret_cast<const uint4 *>(src + j * stride + grp * 8);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int idx = base + u * nt, j = idx % TC_C, grp = idx / TC_C;
            if (idx >= total) continue;
            const __nv_bfloat16 *e = reinterpret_cast<const __nv_bfloat16 *>(&raw[u]);
#pragma unroll
            for (int c = 0; c < 8; c++) {
                const int cc = grp * 8 + c;
                float x = __bfloat162float(e[c]) * (rw ? rw[j] : 1.f);
                if (sg) x *= expf(last >= 0 ? sg[last * ldg + cc] - sg[j * ldg + cc] : sg[j * ldg + cc]);
                const __nv_bfloat16 hi = __float2bfloat16_rn(x);
                dst[cc * TC_TP + j] = hi;
                if (dst_lo) dst_lo[cc * TC_TP + j] = __float2bfloat16_rn(x - __bfloat162float(hi));
            }
        }
    }
}

/* tc_copy_transposed in two halves, so that a thread's loads can stay in flight across other
 * work (the GLA outputs body: while Q~ is formed, before the tile's memory is free): thread t of
 * nt loads the pieces base = t (4 nt >= 512: its only pass, raw[4]) of the tile into raw ... */
__device__ __forceinline__ void tc_copy_transposed_load(uint4 raw[4], int base, int nt, const __nv_bfloat16 *src,
                                                        long long stride, int L)
{
#pragma unroll
    for (int u = 0; u < 4; u++) {
        const int idx = base + u * nt, j = idx % TC_C, grp = idx / TC_C;
        raw[u] = make_uint4(0, 0, 0, 0);
        if (idx < TC_C * 8 && j < L) raw[u] = *reinterpret_cast<const uint4 *>(src + j * stride + grp * 8);
    }
}

/* ... and stores them transposed into dst[c * TC_TP + j] */
__device__ __forceinline__ void tc_copy_transposed_store(const uint4 raw[4], int base, int nt, __nv_bfloat16 *dst)
{
#pragma unroll
    for (int u = 0; u < 4; u++) {
        const int idx = base + u * nt, j = idx % TC_C, grp = idx / TC_C;
        if (idx >= TC_C * 8) continue;
        const __nv_bfloat16 *e = reinterpret_cast<const __nv_bfloat16 *>(&raw[u]);
#pragma unroll
        for (int c = 0; c < 8; c++) dst[(grp * 8 + c) * TC_TP + j] = e[c];
    }
}

/* Copies the 64 x 64 tile src[j * stride + c] (rows j < L, else zeros) TRANSPOSED into
 * dst[c * TC_TP + j], by nt threads of which this is thread t (lanes walk j, so that the 2-byte
 * shared stores of a warp fill consecutive words). */
__device__ void tc_copy_transposed(int t, int nt, const __nv_bfloat16 *src, long long stride, int L, __nv_bfloat16 *dst)
{
    /* four 16-byte loads in flight before the first store (a load after a shared store it might
     * alias waits for the store, so one at a time each waited out its own latency) */
    for (int base = t; base < TC_C * 8; base += 4 * nt) {
        uint4 raw[4];
        tc_copy_transposed_load(raw, base, nt, src, stride, L);
        tc_copy_transposed_store(raw, base, nt, dst);
    }
}

/* Loads the 64 x 64 tile src[j * stride + c] (rows j < L, else zeros) TRANSPOSED into
 * dst[c * TC_TP + j]. With w, each element x times w[j] in fp32 is split into bf16 hi + lo
 * (hi = rn(x w), lo = rn(x w - hi)) into dst and dst_lo, so that the pair carries ~16 bits
 * (tc_load_kt_decayed, any block size); without, copied by threads 0 .. 127. */
__device__ void tc_load_transposed(const __nv_bfloat16 *src, long long stride, int L, const float *w,
                                   __nv_bfloat16 *dst, __nv_bfloat16 *dst_lo)
{
    if (w)
        tc_load_kt_decayed(src, stride, L, TC_C, w, nullptr, 0, 0, dst, dst_lo);
    else
        tc_copy_transposed((int)threadIdx.x, 128, src, stride, L, dst);
}

/* Starts copying rows r < nrows (else zeros) of width W bf16 (W % 8 == 0) from src[r * stride +
 * c] into dst[r * ld + c] with 16-byte asynchronous copies (ld % 8 == 0); the rows are there once
 * this thread has passed tc_cp_wait (or tc_gla_cumsum). */
__device__ __forceinline__ void tc_load_rows_async(const __nv_bfloat16 *src, long long stride, int nrows, int W,
                                                   __nv_bfloat16 *dst, int ld)
{
    const int per = W / 8;
    for (int idx = (int)threadIdx.x; idx < TC_C * per; idx += (int)blockDim.x) {
        const int r = idx / per, grp = idx % per;
        if (r < nrows)
            tc_cp16(dst + r * ld + grp * 8, src + r * stride + grp * 8);
        else
            *reinterpret_cast<uint4 *>(dst + r * ld + grp * 8) = make_uint4(0, 0, 0, 0);
    }
}

/* tc_load_rows_async, then waits for this thread's copies (as a loop of plain 16-byte moves
 * would, but with all of them in flight at once). */
__device__ void tc_load_rows(const __nv_bfloat16 *src, long long stride, int nrows, int W, __nv_bfloat16 *dst, int ld)
{
    tc_load_rows_async(src, stride, nrows, W, dst, ld);
    tc_cp_wait();
}

// ---- kernel 1, bf16: the state scan on tensor cores ---------------------------------------------

/* The gates of a kernel: none (linear attention), one per step (SSD, GDN), one per step and key
 * channel (GLA, KDA; gdn/chunk_fwd_gla_tc.cuh) */
enum { TC_UNGATED = 0, TC_SCALAR = 1, TC_CHANNEL = 2 };

/* Dynamic shared memory of tc_state_bf16<GATE>: (k w)^T hi, lo, V^T, H hi, lo [64][72] bf16; G and
 * the weights [64] fp32, or (TC_CHANNEL) G [64][65] for the tile's channels. */
__host__ __device__ constexpr unsigned tc_state_bf16_smem(int gate)
{
    return (unsigned)(5 * TC_C * TC_TP * 2 + (gate == TC_CHANNEL ? TC_C * TC_F32P : 2 * TC_C) * 4);
}

/* grid (V/64, K/64, B*H), 128 threads. Warp w owns state rows 16w .. 16w+15 of the K tile, all 64
 * columns: acc[n] is the m16n8 tile of columns 8n .. 8n+7. hs [B*H][NT][2][V][K] bf16 receives H
 * of every chunk, transposed (the layout the output kernel's B fragments read), as hi + lo planes
 * (H ~= hi + lo to ~16 bits: one bf16 plane alone costs linear attention's o about 0.0007 of
 * relative RMS, a third of the bf16 bar); ST [B,H,K,V] fp32. The decayed keys k_j w_j are split
 * the same way (a single bf16 rounding there would cost SSD's ST ~1e-3). TC_CHANNEL: the decay
 * exp(G_{L-1,r}) per state row r and the weight exp(G_{L-1,c} - G_jc) per key element. */
template <int GATE>
__global__ void TC_BOUNDS(128, tc_state_bf16_smem(GATE))
    tc_state_bf16(const __nv_bfloat16 *k, const __nv_bfloat16 *v, const float *g, const float *S0, __nv_bfloat16 *hs,
                  float *ST, int T, int H, int K, int V, int NT)
{
    TC_DYNAMIC_SMEM(tc_smem);
    __nv_bfloat16 *sKT = reinterpret_cast<__nv_bfloat16 *>(tc_smem);            /* [kk][j]: (k_j * w_j)^T, hi */
    __nv_bfloat16 *sKL = sKT + TC_C * TC_TP;                                    /* its lo part (gated) */
    __nv_bfloat16 *sVT = sKL + TC_C * TC_TP;                                    /* [v][j] */
    __nv_bfloat16 *sH0 = sVT + TC_C * TC_TP, *sH1 = sH0 + TC_C * TC_TP;         /* [v][kk]: H, hi, lo */
    float *sG = reinterpret_cast<float *>(sH1 + TC_C * TC_TP), *sW = sG + TC_C; /* TC_CHANNEL: sG [j][kk] */
    const int vt = (int)blockIdx.x, kt = (int)blockIdx.y, bh = (int)blockIdx.z;
    const int b = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int r0 = 16 * w + gi; /* this thread's state rows r0, r0 + 8 (within the K tile) */

    float acc[8][4];
#pragma unroll
    for (int n = 0; n < 8; n++) {
        const int c = 8 * n + 2 * ti;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = r0 + (e >> 1) * 8;
            acc[n][e] = S0 ? S0[((long long)bh * K + kt * TC_C + r) * V + vt * TC_C + c + (e & 1)] : 0.f;
        }
    }
    for (int n = 0; n < NT; n++) {
        const int t0 = n * TC_C, L = min(TC_C, T - t0);
        const long long row0 = (long long)b * T + t0; /* (b, t0) as a row index over [B,T] */
        /* H of this chunk as hi + lo, staged transposed for a coalesced store */
#pragma unroll
        for (int m = 0; m < 8; m++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int at = (8 * m + 2 * ti + (e & 1)) * TC_TP + r0 + (e >> 1) * 8;
                const __nv_bfloat16 hi = __float2bfloat16_rn(acc[m][e]);
                sH0[at] = hi;
                sH1[at] = __float2bfloat16_rn(acc[m][e] - __bfloat162float(hi));
            }
        }
        float d0 = 1.f, d1 = 1.f; /* the decay of rows r0, r0 + 8 */
        const long long rs_k = (long long)H * K, rs_v = (long long)H * V;
        const __nv_bfloat16 *ksrc = k + (row0 * H + h) * K + kt * TC_C;
        if constexpr (GATE == TC_CHANNEL) {
            tc_gla_cumsum_call(g, row0 * H + h, H, K, kt * TC_C, TC_C, L, sG, TC_F32P); /* synchronises: sH complete */
            d0 = expf(sG[(L - 1) * TC_F32P + r0]), d1 = expf(sG[(L - 1) * TC_F32P + r0 + 8]);
            tc_load_kt_decayed(ksrc, rs_k, L, TC_C, nullptr, sG, TC_F32P, L - 1, sKT, sKL);
        } else {
            tc_gate_cumsum<GATE == TC_SCALAR>(g, row0 * H + h, H, L, sG); /* synchronises: sH complete */
            if constexpr (GATE == TC_SCALAR) {
                if (tid < TC_C) sW[tid] = expf(sG[L - 1] - sG[tid]);
                d0 = d1 = expf(sG[L - 1]);
                __syncthreads();
            }
            tc_load_transposed(ksrc, rs_k, L, GATE ? sW : nullptr, sKT, sKL);
        }
        tc_load_transposed(v + (row0 * H + h) * V + vt * TC_C, rs_v, L, nullptr, sVT, nullptr);
        /* hs: both planes, rows v of this V tile, columns kk of this K tile */
        for (int idx = tid; idx < 2 * TC_C * 8; idx += 128) {
            const int pl = idx / (TC_C * 8), r = (idx / 8) % TC_C, grp = idx % 8;
            __nv_bfloat16 *dst = hs + ((((long long)bh * NT + n) * 2 + pl) * V + vt * TC_C + r) * K + kt * TC_C;
            *reinterpret_cast<uint4 *>(dst + grp * 8) =
                *reinterpret_cast<const uint4 *>((pl ? sH1 : sH0) + r * TC_TP + grp * 8);
        }
        __syncthreads();
        if constexpr (GATE != TC_UNGATED) {
#pragma unroll
            for (int m = 0; m < 8; m++) acc[m][0] *= d0, acc[m][1] *= d0, acc[m][2] *= d1, acc[m][3] *= d1;
        }
#pragma unroll
        for (int s = 0; s < 4; s++) {
            uint32_t a[4], al[4];
            tc_frag_a(a, sKT, TC_TP, 16 * w, 16 * s);
            if constexpr (GATE != TC_UNGATED) tc_frag_a(al, sKL, TC_TP, 16 * w, 16 * s);
#pragma unroll
            for (int m = 0; m < 8; m++) {
                uint32_t b0, b1;
                tc_frag_b(&b0, &b1, sVT, TC_TP, 8 * m, 16 * s);
                tc_mma(acc[m], a, b0, b1);
                if constexpr (GATE != TC_UNGATED) tc_mma(acc[m], al, b0, b1);
            }
        }
        __syncthreads(); /* every tile and sG are rewritten by the next chunk */
    }
    if (ST) {
#pragma unroll
        for (int m = 0; m < 8; m++) {
            const int c = 8 * m + 2 * ti;
            for (int half = 0; half < 2; half++) {
                const int r = r0 + half * 8;
                float2 x = make_float2(acc[m][2 * half], acc[m][2 * half + 1]);
                *reinterpret_cast<float2 *>(ST + ((long long)bh * K + kt * TC_C + r) * V + vt * TC_C + c) = x;
            }
        }
    }
}

/* acc += P V over reduction block s (rows 16s .. 16s+15 of V^T's columns) for a warp whose P
 * fragments of that block are a (hi) and al (lo): P_hi V + P_lo V (+ P_hi V_lo with VLO). */
template <bool VLO>
__device__ __forceinline__ void tc_pv_block(float acc[8][4], const uint32_t a[4], const uint32_t al[4],
                                            const __nv_bfloat16 *sVT, const __nv_bfloat16 *sVL, int s)
{
#pragma unroll
    for (int m = 0; m < 8; m++) {
        uint32_t b0, b1;
        tc_frag_b(&b0, &b1, sVT, TC_TP, 8 * m, 16 * s);
        tc_mma(acc[m], a, b0, b1);
        tc_mma(acc[m], al, b0, b1);
        if constexpr (VLO) {
            tc_frag_b(&b0, &b1, sVL, TC_TP, 8 * m, 16 * s);
            tc_mma(acc[m], a, b0, b1);
        }
    }
}

/* A warp's o rows i0 and i1 = i0 + 8 of the chunk (those < L), this V tile's 64 columns, from its
 * accumulators, as bf16. */
__device__ __forceinline__ void tc_store_o(__nv_bfloat16 *o, const float acc[8][4], long long row0, int H, int h, int V,
                                           int vt, int i0, int L)
{
    const int ti = (int)threadIdx.x & 3, i1 = i0 + 8;
#pragma unroll
    for (int m = 0; m < 8; m++) {
        const int c = vt * TC_C + 8 * m + 2 * ti;
        if (i0 < L)
            *reinterpret_cast<__nv_bfloat162 *>(o + ((row0 + i0) * H + h) * V + c) =
                __floats2bfloat162_rn(acc[m][0], acc[m][1]);
        if (i1 < L)
            *reinterpret_cast<__nv_bfloat162 *>(o + ((row0 + i1) * H + h) * V + c) =
                __floats2bfloat162_rn(acc[m][2], acc[m][3]);
    }
}

// ---- kernel 2, bf16: the outputs on tensor cores ------------------------------------------------

/* The chunk's inclusive gate cumsum into sG as tc_gate_cumsum, of the gates as the rows see them:
 * in order, or (REV) with the chunk's rows reversed, g'_0 = 0, g'_i = g_{L-i}, so that G'_i =
 * G_{L-1} - G_{L-1-i} (gdn/chunk_bwd_tc.cuh's anti-causal passes); raw: 64 floats of scratch.
 * Ends synchronised. */
template <bool GATED, bool REV>
__device__ void tc_gate_cumsum_rows(const float *g, long long at, int H, int L, float *sG, float *raw)
{
    if constexpr (!REV) {
        tc_gate_cumsum<GATED>(g, at, H, L, sG);
    } else {
        const int tid = (int)threadIdx.x;
        if (tid < TC_C) raw[tid] = (GATED && tid < L) ? g[at + (long long)tid * H] : 0.f;
        __syncthreads();
        if (tid == 0) {
            float s = 0.f;
            for (int i = 0; i < TC_C; i++) {
                if (GATED && i > 0 && i < L) s += raw[L - i];
                sG[i] = s;
            }
        }
        __syncthreads();
    }
}

/* Dynamic shared memory of tc_out_bf16<K, VLO> and tc_rows_out_bf16: X, Y, S hi, S lo [64][K+8],
 * Z^T [64][72] (and its lo plane with VLO) bf16; G and the raw gates [64] fp32. */
__host__ __device__ constexpr unsigned tc_out_bf16_smem(int K, bool vlo = false)
{
    return (unsigned)(4 * TC_C * (K + 8) * 2 + (vlo ? 2 : 1) * TC_C * TC_TP * 2 + 2 * TC_C * 4);
}

/* The body of the outputs kernels, for a CTA of 128 threads at (chunk n, 64-column tile vt of the
 * VOUT output columns, bh): for the chunk's rows i (REV: its rows reversed, i = L-1-t for step
 * t0 + t)
 *   out_i = hscale exp(G_i) (S x_i) + scale sum_{j <= i} exp(G_i - G_j) (x_i . y_j) z_j
 * with x, y [B,T,H,KIN], z and out [B,T,H,VOUT] bf16 and S the chunk's state planes [VOUT][KIN]
 * (hi, lo) at sp + (bh NT + n) 2 VOUT KIN. Warp w owns rows 16w .. 16w+15: P's columns 0 ..
 * 16w+15 (the rest is causally zero) and out's 64 columns of this tile; S enters as its hi and
 * lo planes, P as hi + lo A fragments (one bf16 rounding of P costs SSD's o ~0.0007). With VLO
 * (GDN, gdn/chunk_fwd_gdn_tc.cuh) z is not an input but the fp32 u_j of the delta rule, given as
 * bf16 z (hi) and z_lo planes of the same layout: P Z adds P_hi Z_lo. With dot (the backward's
 * dg), also dot[(step row) VOUT/64 + vt] = the row's sum over this tile's columns of out (fp32,
 * before rounding) times dx (bf16 [B,T,H,VOUT]). */
template <int GATED, int KIN, bool REV, bool VLO>
__device__ __forceinline__ void tc_rows_out_bf16(const __nv_bfloat16 *x, const __nv_bfloat16 *y, const __nv_bfloat16 *z,
                                                 const __nv_bfloat16 *z_lo, const float *g, const __nv_bfloat16 *sp,
                                                 __nv_bfloat16 *out, const __nv_bfloat16 *dx, float *dot, int T, int H,
                                                 int VOUT, int NT, float scale, float hscale)
{
    constexpr int LD = KIN + 8; /* (KIN + 8) / 2 words = 4 mod 32 for KIN in {64, 128, 256} */
    TC_DYNAMIC_SMEM(tc_smem);
    __nv_bfloat16 *sX = reinterpret_cast<__nv_bfloat16 *>(tc_smem);
    __nv_bfloat16 *sY = sX + TC_C * LD;
    __nv_bfloat16 *sS = sY + TC_C * LD, *sSL = sS + TC_C * LD; /* [vout][kin] */
    __nv_bfloat16 *sZT = sSL + TC_C * LD;                      /* [vout][j] */
    __nv_bfloat16 *sZL = sZT + TC_C * TC_TP;                   /* VLO only */
    float *sG = reinterpret_cast<float *>(sZT + (VLO ? 2 : 1) * TC_C * TC_TP), *sRaw = sG + TC_C;
    const int n = (int)blockIdx.x, vt = (int)blockIdx.y, bh = (int)blockIdx.z;
    const int bb = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, w = tid >> 5, lane = tid & 31, gi = lane >> 2, ti = lane & 3;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)bb * T + t0;
    /* tile row r is step t0 + r, or with REV step t0 + L - 1 - r: the first row and the stride */
    const long long first = row0 + (REV ? L - 1 : 0), dir = REV ? -1 : 1;
    const long long sx = (long long)H * KIN, sz = (long long)H * VOUT;

    tc_load_rows(x + (first * H + h) * KIN, dir * sx, L, KIN, sX, LD);
    tc_load_rows(y + (first * H + h) * KIN, dir * sx, L, KIN, sY, LD);
    tc_load_rows(sp + ((((long long)bh * NT + n) * 2 + 0) * VOUT + vt * TC_C) * KIN, KIN, TC_C, KIN, sS, LD);
    tc_load_rows(sp + ((((long long)bh * NT + n) * 2 + 1) * VOUT + vt * TC_C) * KIN, KIN, TC_C, KIN, sSL, LD);
    tc_load_transposed(z + (first * H + h) * VOUT + vt * TC_C, dir * sz, L, nullptr, sZT, nullptr);
    if constexpr (VLO)
        tc_load_transposed(z_lo + (first * H + h) * VOUT + vt * TC_C, dir * sz, L, nullptr, sZL, nullptr);
    tc_gate_cumsum_rows<GATED, REV>(g, row0 * H + h, H, L, sG, sRaw); /* synchronises: tiles loaded */

    const int i0 = 16 * w + gi, i1 = i0 + 8; /* this thread's rows */
    /* P = X Y^T over the column tiles 0 .. 2w+1 */
    float p[8][4];
    tc_causal_xyt<KIN>(p, sX, sY, LD, w);
#pragma unroll
    for (int m = 0; m < 8; m++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int i = e < 2 ? i0 : i1, j = 8 * m + 2 * ti + (e & 1);
            float v = 0.f;
            if (j <= i) v = GATED ? p[m][e] * scale * expf(sG[i] - sG[j]) : p[m][e] * scale;
            p[m][e] = v;
        }
    }
    /* out = hscale exp(G_i) (X S^T) */
    float acc[8][4];
#pragma unroll
    for (int m = 0; m < 8; m++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[m][e] = 0.f;
    for (int ks = 0; ks < KIN / 16; ks++) {
        uint32_t fa[4];
        tc_frag_a(fa, sX, LD, 16 * w, 16 * ks);
#pragma unroll
        for (int m = 0; m < 8; m++) {
            uint32_t b0, b1;
            tc_frag_b(&b0, &b1, sS, LD, 8 * m, 16 * ks);
            tc_mma(acc[m], fa, b0, b1);
            tc_frag_b(&b0, &b1, sSL, LD, 8 * m, 16 * ks);
            tc_mma(acc[m], fa, b0, b1);
        }
    }
    const float f0 = GATED ? hscale * expf(sG[i0]) : hscale, f1 = GATED ? hscale * expf(sG[i1]) : hscale;
#pragma unroll
    for (int m = 0; m < 8; m++) {
        acc[m][0] *= f0, acc[m][1] *= f0;
        acc[m][2] *= f1, acc[m][3] *= f1;
    }
/* out += P Z over the reduction blocks 0 .. w (P's accumulators are its A fragments) */
#pragma unroll
    for (int s = 0; s < 4; s++) {
        if (s > w) continue; /* warp-uniform */
        uint32_t fa[4], fl[4];
        tc_split(p[2 * s][0], p[2 * s][1], &fa[0], &fl[0]);
        tc_split(p[2 * s][2], p[2 * s][3], &fa[1], &fl[1]);
        tc_split(p[2 * s + 1][0], p[2 * s + 1][1], &fa[2], &fl[2]);
        tc_split(p[2 * s + 1][2], p[2 * s + 1][3], &fa[3], &fl[3]);
        tc_pv_block<VLO>(acc, fa, fl, sZT, sZL, s);
    }
    /* rows i0, i1 (those < L) to their steps; with dot, each row's partial dot with dx */
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int i = half ? i1 : i0;
        const long long row = first + dir * i; /* valid only for i < L */
        float part = 0.f;
#pragma unroll
        for (int m = 0; m < 8; m++) {
            const int c = vt * TC_C + 8 * m + 2 * ti;
            const float a0 = acc[m][2 * half], a1 = acc[m][2 * half + 1];
            if (i < L) {
                *reinterpret_cast<__nv_bfloat162 *>(out + (row * H + h) * VOUT + c) = __floats2bfloat162_rn(a0, a1);
                if (dot) {
                    const __nv_bfloat162 d2 = *reinterpret_cast<const __nv_bfloat162 *>(dx + (row * H + h) * VOUT + c);
                    part += a0 * __bfloat162float(d2.x) + a1 * __bfloat162float(d2.y);
                }
            }
        }
        if (dot) {
            part += __shfl_xor_sync(0xffffffffu, part, 1);
            part += __shfl_xor_sync(0xffffffffu, part, 2);
            if (ti == 0 && i < L) dot[(row * H + h) * (VOUT / TC_C) + vt] = part;
        }
    }
}

/* grid (NT, V/64, B*H), 128 threads: o = scale exp(G_i) (Q H) + P V with P = Q K^T (causal,
 * decayed, scaled), tc_rows_out_bf16 with (x, y, z, S) = (q, k, v, H^T: hs's planes [V][K]). With
 * VLO (GDN) v is the delta rule's u as hi (v) and lo (v_lo) planes. */
template <int GATED, int K, bool VLO = false>
__global__ void TC_BOUNDS(128, tc_out_bf16_smem(K, VLO))
    tc_out_bf16(const __nv_bfloat16 *q, const __nv_bfloat16 *k, const __nv_bfloat16 *v, const float *g,
                const __nv_bfloat16 *hs, __nv_bfloat16 *o, int T, int H, int V, int NT, float scale,
                const __nv_bfloat16 *v_lo = nullptr)
{
    tc_rows_out_bf16<GATED, K, false, VLO>(q, k, v, v_lo, g, hs, o, nullptr, nullptr, T, H, V, NT, scale, scale);
}

// ---- kernel 1, fp32: the state scan on CUDA cores ----------------------------------------------

/* Dynamic shared memory of tc_state_f32<GATE>: k w [64][65], V [64][64], G [64] or (TC_CHANNEL)
 * [64][65] fp32. */
__host__ __device__ constexpr unsigned tc_state_f32_smem(int gate)
{
    return (unsigned)(4 * (TC_C * TC_F32P + TC_C * TC_C + (gate == TC_CHANNEL ? TC_C * TC_F32P : TC_C)));
}

/* Which state layouts a scan writes: [V][K] per chunk (the transpose of the K x V state), [K][V]
 * (the state itself); bf16: two planes (hi, lo) each (gdn/chunk_bwd_tc.cuh), fp32: one. */
enum { TC_PLANES_VK = 1, TC_PLANES_KV = 2 };

/* The body of the fp32 state scans, for a CTA of 256 threads at (vt, kt, bh); thread (tx, ty) =
 * (tid % 16, tid / 16) owns state rows ty + 16r and columns tx + 16c (r, c < 4). Forward (REV
 * false): a, b = k, v, the weights exp(G_{L-1} - G_j) (TC_CHANNEL: per key channel), init S0,
 * fin ST. Reverse (the backward's): a, b = q, dO, the weights wscale exp(G_i) (TC_CHANNEL: per
 * key channel, GLA's backward), the chunks from the last, init dST, fin dS0. Every chunk's state
 * entering its update goes to kv ([B*H][NT][K][V]) and/or vk ([B*H][NT][V][K]) as PLANES says. */
template <int GATE, bool REV, int PLANES>
__device__ __forceinline__ void tc_scan_f32(const float *a, const float *b, const float *g, const float *init,
                                            float *kv, float *vk, float *fin, int T, int H, int K, int V, int NT,
                                            float wscale)
{
    TC_DYNAMIC_SMEM(tc_smem);
    float *sK = reinterpret_cast<float *>(tc_smem); /* [j][kk]: a_j * w_j */
    float *sV = sK + TC_C * TC_F32P;                /* [j][v] */
    float *sG = sV + TC_C * TC_C;                   /* TC_CHANNEL: [j][kk] */
    const int vt = (int)blockIdx.x, kt = (int)blockIdx.y, bh = (int)blockIdx.z;
    const int bb = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    float S[4][4];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++)
            S[r][c] = init ? init[((long long)bh * K + kt * TC_C + ty + 16 * r) * V + vt * TC_C + tx + 16 * c] : 0.f;
    for (int it = 0; it < NT; it++) {
        const int n = REV ? NT - 1 - it : it;
        const int t0 = n * TC_C, L = min(TC_C, T - t0);
        const long long row0 = (long long)bb * T + t0;
        if constexpr ((PLANES & TC_PLANES_KV) != 0) {
            float *dst = kv + (((long long)bh * NT + n) * K + kt * TC_C) * V + vt * TC_C;
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int c = 0; c < 4; c++) dst[(long long)(ty + 16 * r) * V + tx + 16 * c] = S[r][c];
        }
        if constexpr ((PLANES & TC_PLANES_VK) != 0) {
            float *dst = vk + (((long long)bh * NT + n) * V + vt * TC_C) * K + kt * TC_C;
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int c = 0; c < 4; c++) dst[(long long)(tx + 16 * c) * K + ty + 16 * r] = S[r][c];
        }
        if constexpr (GATE == TC_CHANNEL)
            tc_gla_cumsum(g, row0 * H + h, H, K, kt * TC_C, TC_C, L, sG, TC_F32P);
        else
            tc_gate_cumsum<GATE == TC_SCALAR>(g, row0 * H + h, H, L, sG);
        const float glast = GATE == TC_CHANNEL ? 0.f : sG[L - 1];
        for (int idx = tid; idx < TC_C * TC_C; idx += 256) {
            const int j = idx / TC_C, c = idx % TC_C;
            float kx = 0.f, vx = 0.f;
            if (j < L) {
                kx = a[((row0 + j) * H + h) * K + kt * TC_C + c];
                vx = b[((row0 + j) * H + h) * V + vt * TC_C + c];
                if constexpr (REV && GATE == TC_CHANNEL) {
                    kx *= wscale * expf(sG[j * TC_F32P + c]);
                } else if constexpr (REV) {
                    kx *= GATE == TC_SCALAR ? wscale * expf(sG[j]) : wscale;
                } else {
                    if constexpr (GATE == TC_CHANNEL) kx *= expf(sG[(L - 1) * TC_F32P + c] - sG[j * TC_F32P + c]);
                    if constexpr (GATE == TC_SCALAR) kx *= expf(glast - sG[j]);
                }
            }
            sK[j * TC_F32P + c] = kx;
            sV[j * TC_C + c] = vx;
        }
        __syncthreads();
        float U[4][4] = {};
        for (int j = 0; j < L; j++)
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int c = 0; c < 4; c++)
                    U[r][c] = fmaf(sK[j * TC_F32P + ty + 16 * r], sV[j * TC_C + tx + 16 * c], U[r][c]);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const float decay = GATE == TC_CHANNEL ? expf(sG[(L - 1) * TC_F32P + ty + 16 * r]) : expf(glast);
#pragma unroll
            for (int c = 0; c < 4; c++) S[r][c] = GATE ? fmaf(decay, S[r][c], U[r][c]) : S[r][c] + U[r][c];
        }
        __syncthreads();
    }
    if (fin) {
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++)
                fin[((long long)bh * K + kt * TC_C + ty + 16 * r) * V + vt * TC_C + tx + 16 * c] = S[r][c];
    }
}

/* grid (V/64, K/64, B*H), 256 threads: the forward's fp32 state scan (tc_scan_f32). hs
 * [B*H][NT][K][V] fp32 receives H of every chunk. */
template <int GATE>
__global__ void TC_BOUNDS_REGS(256, tc_state_f32_smem(GATE), 64)
    tc_state_f32(const float *k, const float *v, const float *g, const float *S0, float *hs, float *ST, int T, int H,
                 int K, int V, int NT)
{
    tc_scan_f32<GATE, false, TC_PLANES_KV>(k, v, g, S0, hs, nullptr, ST, T, H, K, V, NT, 1.f);
}

// ---- kernel 2, fp32: the outputs on CUDA cores -------------------------------------------------

/* Dynamic shared memory of tc_out_f32<GATE, K> and tc_rows_out_f32: Q [64][K+1], K [64][K+1] then
 * the state [K][64], V [64][64], P [64][65], G [64] or (TC_CHANNEL) [64][K+1], the raw gates [64]. */
__host__ __device__ constexpr unsigned tc_out_f32_smem(int K, int gate = TC_SCALAR)
{
    return (unsigned)(4 * (2 * TC_C * (K + 1) + TC_C * TC_C + TC_C * TC_F32P +
                           (gate == TC_CHANNEL ? TC_C * (K + 1) : TC_C) + TC_C));
}

/* The body of the fp32 outputs kernels, for a CTA of 256 threads at (chunk n, 64-column tile vt
 * of VOUT, bh); thread (tx, ty) owns rows ty + 16r and columns tx + 16c of P and of out's tile. For
 * the chunk's rows i (REV: reversed, i = L-1-t for step t0 + t, the gates as tc_gate_cumsum_rows
 * and tc_gla_cumsum<true> give them)
 *   out_i = hscale exp(G_i) (x_i S) + sum_{j <= i} P_ij z_j,  P_ij = scale exp(G_i - G_j) x_i . y_j
 * with x, y [B,T,H,KIN], z, out [B,T,H,VOUT] fp32 and S the chunk's state [KIN][VOUT] at sp + (bh
 * NT + n) KIN VOUT. TC_CHANNEL (GLA, KDA): P_ij = scale sum_c x_ic y_jc exp(G_ic - G_jc) term by
 * term, and the inter-chunk part reads x * exp(G) (sQ scaled in place once P is done). With dot
 * (the backward's dg), also dot[(step row) VOUT/64 + vt] = the row's sum over this tile's
 * columns of out times dx ([B,T,H,VOUT]), summed in a fixed order. */
template <int GATE, int KIN, bool REV>
__device__ __forceinline__ void tc_rows_out_f32(const float *x, const float *y, const float *z, const float *g,
                                                const float *sp, float *out, const float *dx, float *dot, int T, int H,
                                                int VOUT, int NT, float scale, float hscale)
{
    constexpr int LD = KIN + 1;
    TC_DYNAMIC_SMEM(tc_smem);
    float *sQ = reinterpret_cast<float *>(tc_smem);
    float *sX = sQ + TC_C * LD; /* y rows [j][kk], later S [kk][v] */
    float *sV = sX + TC_C * LD;
    float *sP = sV + TC_C * TC_C;
    float *sG = sP + TC_C * TC_F32P; /* TC_CHANNEL: [j][kk], stride LD */
    float *sRaw = sG + (GATE == TC_CHANNEL ? TC_C * LD : TC_C);
    const int n = (int)blockIdx.x, vt = (int)blockIdx.y, bh = (int)blockIdx.z;
    const int bb = bh / H, h = bh % H;
    const int tid = (int)threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int t0 = n * TC_C, L = min(TC_C, T - t0);
    const long long row0 = (long long)bb * T + t0;
    const long long first = row0 + (REV ? L - 1 : 0), dir = REV ? -1 : 1; /* tile row j: step first + dir j */

    for (int idx = tid; idx < TC_C * KIN; idx += 256) {
        const int j = idx / KIN, c = idx % KIN;
        const bool in = j < L;
        sQ[j * LD + c] = in ? x[((first + dir * j) * H + h) * KIN + c] : 0.f;
        sX[j * LD + c] = in ? y[((first + dir * j) * H + h) * KIN + c] : 0.f;
    }
    for (int idx = tid; idx < TC_C * TC_C; idx += 256) {
        const int j = idx / TC_C, c = idx % TC_C;
        sV[j * TC_C + c] = j < L ? z[((first + dir * j) * H + h) * VOUT + vt * TC_C + c] : 0.f;
    }
    if constexpr (GATE == TC_CHANNEL)
        tc_gla_cumsum<REV>(g, row0 * H + h, H, KIN, 0, KIN, L, sG, LD); /* synchronises */
    else
        tc_gate_cumsum_rows<GATE == TC_SCALAR, REV>(g, row0 * H + h, H, L, sG, sRaw); /* synchronises */
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = ty + 16 * r;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int j = tx + 16 * c;
            float v = 0.f;
            if (j <= i) {
                float d = 0.f;
                if constexpr (GATE == TC_CHANNEL) {
                    for (int kk = 0; kk < KIN; kk++)
                        d = fmaf(sQ[i * LD + kk] * sX[j * LD + kk], expf(sG[i * LD + kk] - sG[j * LD + kk]), d);
                    v = d * scale;
                } else {
                    for (int kk = 0; kk < KIN; kk++) d = fmaf(sQ[i * LD + kk], sX[j * LD + kk], d);
                    v = GATE ? d * scale * expf(sG[i] - sG[j]) : d * scale;
                }
            }
            sP[i * TC_F32P + j] = v;
        }
    }
    __syncthreads(); /* sX is overwritten by H (and, TC_CHANNEL, sQ scaled by exp(G)) */
    const float *src = sp + (((long long)bh * NT + n) * KIN) * VOUT + vt * TC_C;
    for (int idx = tid; idx < KIN * TC_C; idx += 256) {
        const int kk = idx / TC_C, c = idx % TC_C;
        sX[kk * TC_C + c] = src[(long long)kk * VOUT + c];
    }
    if constexpr (GATE == TC_CHANNEL)
        for (int idx = tid; idx < TC_C * KIN; idx += 256) {
            const int i = idx / KIN, c = idx % KIN;
            sQ[i * LD + c] *= expf(sG[i * LD + c]);
        }
    __syncthreads();
    float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = ty + 16 * r;
        if (i >= L) continue;
        const float f = GATE == TC_SCALAR ? hscale * expf(sG[i]) : hscale;
        const long long row = first + dir * i;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int vv = tx + 16 * c;
            float d = 0.f;
            for (int kk = 0; kk < KIN; kk++) d = fmaf(sQ[i * LD + kk], sX[kk * TC_C + vv], d);
            float v = d * f;
            for (int j = 0; j <= i; j++) v = fmaf(sP[i * TC_F32P + j], sV[j * TC_C + vv], v);
            out[(row * H + h) * VOUT + vt * TC_C + vv] = v;
            if (dot) part[r] = fmaf(v, dx[(row * H + h) * VOUT + vt * TC_C + vv], part[r]);
        }
    }
    if (dot) { /* the 16 column groups of each row summed in order, through the free P tile */
        __syncthreads();
#pragma unroll
        for (int r = 0; r < 4; r++) sP[(ty + 16 * r) * 16 + tx] = part[r];
        __syncthreads();
        if (tid < L) {
            float s = 0.f;
            for (int q = 0; q < 16; q++) s += sP[tid * 16 + q];
            dot[((first + dir * tid) * H + h) * (VOUT / TC_C) + vt] = s;
        }
    }
}

/* grid (NT, V/64, B*H), 256 threads: the forward's fp32 outputs, tc_rows_out_f32 with (x, y, z,
 * S) = (q, k, v, H: hs [K][V]). */
template <int GATE, int K>
__global__ void TC_BOUNDS_REGS(256, tc_out_f32_smem(K, GATE), 128)
    tc_out_f32(const float *q, const float *k, const float *v, const float *g, const float *hs, float *o, int T, int H,
               int V, int NT, float scale)
{
    tc_rows_out_f32<GATE, K, false>(q, k, v, g, hs, o, nullptr, nullptr, T, H, V, NT, scale, scale);
}

#endif
