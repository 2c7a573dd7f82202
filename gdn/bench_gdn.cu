/* bench_gdn.cu: times libgdn's forward and forward+backward for the five GLR members at
 * B=8 T=4096 H=16 K=V=128 with bf16 inputs (CUDA events, warm-up, median), beside a cuBLAS bf16
 * 8192^3 GEMM measured in the same run, with model TFLOP/s and a memory-bandwidth estimate.
 * Then, for every member, the chunk-parallel forward gdn_cuda_fwd_tc beside the old forward and
 * FLA's published H200 forward times; for linear attention, SSD and GLA the chunk-parallel
 * forward + backward (gdn_cuda_bwd_tc) beside the old ones and FLA's fwd+bwd.
 * Before timing a member it checks the same launch configuration (K = V = 128, bf16) on a small
 * problem against the fp64 oracle and refuses to time a kernel that is wrong.
 *   make bench-gdn          (gdn/local.mk; links libgdn.so, gdn/oracle.c and -lcublas)
 *   gdn/bench_gdn [B T H]   (defaults 8 4096 16; K = V = 128) */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

extern "C" {
#include "oracle.h"
}
#include "glr_common.cuh" /* GLR_C, glr_bwd_ws_floats: the kernels' own geometry */
#include "libgdn.h"
#include "testutil.h"

#define CUBLAS_CHECK(call)                                                                                             \
    do {                                                                                                               \
        cublasStatus_t s_ = (call);                                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                             \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_);                      \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

// ---- the cost model -----------------------------------------------------------------------------

/* Model FLOPs (2 per multiply-add) of the chunked algorithm, per full chunk of C steps and per
 * (batch, head); causal C x C products count half. Backward: the gradient products of stages
 * 6-9 only -- the recomputation of the forward's states, A, W and P is not credited, so the
 * numbers compare with any implementation of the same algorithm.
 *   forward:  P = Q K^T (C^2 K), o = P V_new (C^2 V), o += (Q Gamma) H (2CKV), h update (2CKV);
 *             delta adds M = K K^T (C^2 K), A (C^3/3), W (C^2 K), U (C^2 V), W H (2CKV).
 *   backward: dv_new (C^2 V + 2CKV), dq inter (2CKV), dk state (2CKV), dP (C^2 V), dq and dk
 *             intra (2 C^2 K), dh (2CKV); delta adds W^T dv_new in dh (2CKV), dW (2CKV),
 *             dA (C^2 (K+V)), A^T dU (C^2 V), A^T dW (C^2 K), dTm (2 C^3/3), dM terms (2 C^2 K). */
static double flops_fwd(enum gdn_family f, double C, double K, double V)
{
    double x = C * C * (K + V) + 4 * C * K * V;
    if (gdn_family_has_delta(f)) x += C * C * (2 * K + V) + 2 * C * K * V + C * C * C / 3;
    return x;
}

static double flops_bwd(enum gdn_family f, double C, double K, double V)
{
    double x = 2 * C * C * K + 2 * C * C * V + 8 * C * K * V;
    if (gdn_family_has_delta(f)) x += 3 * C * C * K + 2 * C * C * V + 4 * C * K * V + 2 * C * C * C / 3;
    return x;
}

/* Bytes every implementation must move: the inputs read and the outputs written once, plus
 * (backward) the per-chunk states h written and read back once (fp32). */
static double bytes_fwd(enum gdn_family f, const gdn_dims &d, double es)
{
    double rows = (double)d.B * d.T * d.H, kv = (double)d.B * d.H * d.K * d.V * 4;
    double g = gdn_family_per_channel(f) ? 4.0 * d.K : gdn_family_has_gate(f) ? 4.0 : 0;
    double b = gdn_family_has_delta(f) ? es : 0;
    return rows * (es * (2 * d.K + 2 * d.V) + g + b) + 2 * kv;
}

static double bytes_bwd(enum gdn_family f, const gdn_dims &d, double es)
{
    double rows = (double)d.B * d.T * d.H, kv = (double)d.B * d.H * d.K * d.V * 4;
    double g = gdn_family_per_channel(f) ? 4.0 * d.K : gdn_family_has_gate(f) ? 4.0 : 0;
    double b = gdn_family_has_delta(f) ? es + 4 : 0;
    double states = 2.0 * ceil((double)d.T / GLR_C) * kv;
    /* read q k v dO (+g, b), write dq dk dv (+dg, db); S0, dST read, dS0 written */
    return rows * (es * (4 * d.K + 3 * d.V) + 2 * g + b) + 3 * kv + states;
}

// ---- inputs on the device ---------------------------------------------------------------------

__device__ float bench_hash(uint64_t i, uint32_t seed)
{
    uint64_t z = i * 0x9e3779b97f4a7c15ull + seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)((z >> 40) + 0.5) * 0x1p-24f; /* (0, 1) */
}

/* x[i] = lo + (hi - lo) u_i, or with rows > 0 unit rows of length `rows` (k). */
template <class X> __global__ void bench_fill(X *x, size_t n, float lo, float hi, uint32_t seed, int rows)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (rows > 0) {
        size_t r = i;
        if (r * rows >= n) return;
        float s = 0;
        for (int c = 0; c < rows; c++) {
            float u = bench_hash(r * rows + c, seed) - 0.5f;
            s += u * u;
        }
        float inv = 1.f / sqrtf(s);
        for (int c = 0; c < rows; c++) x[r * rows + c] = (X)((bench_hash(r * rows + c, seed) - 0.5f) * inv);
        return;
    }
    if (i < n) x[i] = (X)(lo + (hi - lo) * bench_hash(i, seed));
}

template <class X> static X *dalloc(size_t n)
{
    void *p;
    CUDA_CHECK(cudaMalloc(&p, n * sizeof(X) + 16));
    return (X *)p;
}

template <class X> static void fill(X *x, size_t n, float lo, float hi, uint32_t seed, int rows = 0)
{
    size_t threads = rows > 0 ? n / rows : n;
    bench_fill<X><<<(unsigned)((threads + 255) / 256), 256>>>(x, n, lo, hi, seed, rows);
    CUDA_CHECK(cudaGetLastError());
}

struct Problem {
    gdn_dims d;
    size_t nqk, nv, ns, ng, nS;
    __nv_bfloat16 *q, *k, *v, *b, *dO, *o, *dq, *dk, *dv;
    float *g, *S0, *dST, *ST, *dg, *db, *dS0;
    void *ws;
    size_t ws_bytes;
};

static void problem_alloc(Problem *p, enum gdn_family f, gdn_dims d)
{
    p->d = d;
    p->nqk = (size_t)d.B * d.T * d.H * d.K, p->nv = (size_t)d.B * d.T * d.H * d.V;
    p->ns = (size_t)d.B * d.T * d.H, p->nS = (size_t)d.B * d.H * d.K * d.V;
    p->ng = gdn_family_per_channel(f) ? p->nqk : p->ns;
    p->q = dalloc<__nv_bfloat16>(p->nqk), p->k = dalloc<__nv_bfloat16>(p->nqk);
    p->v = dalloc<__nv_bfloat16>(p->nv), p->b = dalloc<__nv_bfloat16>(p->ns);
    p->dO = dalloc<__nv_bfloat16>(p->nv), p->o = dalloc<__nv_bfloat16>(p->nv);
    p->dq = dalloc<__nv_bfloat16>(p->nqk), p->dk = dalloc<__nv_bfloat16>(p->nqk), p->dv = dalloc<__nv_bfloat16>(p->nv);
    p->g = dalloc<float>(p->ng), p->S0 = dalloc<float>(p->nS), p->dST = dalloc<float>(p->nS);
    p->ST = dalloc<float>(p->nS), p->dg = dalloc<float>(p->ng), p->db = dalloc<float>(p->ns);
    p->dS0 = dalloc<float>(p->nS);
    p->ws_bytes = gdn_cuda_bwd_workspace(f, &d);
    CUDA_CHECK(cudaMalloc(&p->ws, p->ws_bytes));
    fill(p->q, p->nqk, -1.7f, 1.7f, 1);
    fill(p->k, p->nqk, 0, 0, 2, (int)d.K);
    fill(p->v, p->nv, -1.7f, 1.7f, 3);
    fill(p->b, p->ns, 0.05f, 0.95f, 4);
    fill(p->dO, p->nv, -1.7f, 1.7f, 5);
    fill(p->g, p->ng, -0.7f, -0.01f, 6);
    fill(p->S0, p->nS, -0.5f, 0.5f, 7);
    fill(p->dST, p->nS, -1.7f, 1.7f, 8);
    CUDA_CHECK(cudaDeviceSynchronize());
}

static void problem_free(Problem *p)
{
    void *all[] = {p->q, p->k,  p->v,   p->b,  p->dO, p->o,  p->dq,  p->dk, p->dv,
                   p->g, p->S0, p->dST, p->ST, p->dg, p->db, p->dS0, p->ws};
    for (void *x : all) CUDA_CHECK(cudaFree(x));
}

static void run_fwd(enum gdn_family f, Problem *p, cudaStream_t s)
{
    gdn_dev_in in = {p->q, p->k, p->v, p->g, p->b, p->S0};
    GDN_CHECK(gdn_cuda_fwd(f, GDN_DTYPE_BF16, &p->d, NAN, &in, p->o, p->ST, s));
}

static void run_bwd(enum gdn_family f, Problem *p, cudaStream_t s)
{
    gdn_dev_in in = {p->q, p->k, p->v, p->g, p->b, p->S0};
    gdn_dev_grad gr = {p->dq, p->dk, p->dv, p->dg, p->db, p->dS0};
    GDN_CHECK(gdn_cuda_bwd(f, GDN_DTYPE_BF16, &p->d, NAN, &in, p->dO, p->dST, &gr, p->ws, p->ws_bytes, s));
}

// ---- validation against the oracle ------------------------------------------------------------

static std::vector<double> fetch(const void *p, size_t n, bool bf16)
{
    std::vector<double> x(n);
    if (bf16) {
        std::vector<__nv_bfloat16> h(n);
        CUDA_CHECK(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) x[i] = __bfloat162float(h[i]);
    } else {
        std::vector<float> h(n);
        CUDA_CHECK(cudaMemcpy(h.data(), p, n * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) x[i] = h[i];
    }
    return x;
}

static double relrms(const std::vector<double> &ref, const std::vector<double> &x)
{
    return rel_rms_finite(x.data(), ref.data(), (int64_t)x.size());
}

/* The timed launch configuration (bf16, K = V = 128) on B=1 T=200 H=2 against GDN_EXACT: every
 * output within 0.0033 relative RMS. Returns the worst error (INFINITY if non-finite). */
static double validate(enum gdn_family f)
{
    Problem p;
    problem_alloc(&p, f, gdn_dims{1, 200, 2, 128, 128});
    run_fwd(f, &p, 0);
    run_bwd(f, &p, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    bool gated = gdn_family_has_gate(f), delta = gdn_family_has_delta(f);
    std::vector<double> q = fetch(p.q, p.nqk, true), k = fetch(p.k, p.nqk, true), v = fetch(p.v, p.nv, true);
    std::vector<double> g = fetch(p.g, p.ng, false), b = fetch(p.b, p.ns, true), S0 = fetch(p.S0, p.nS, false);
    std::vector<double> dO = fetch(p.dO, p.nv, true), dST = fetch(p.dST, p.nS, false);
    std::vector<double> o(p.nv), ST(p.nS), dq(p.nqk), dk(p.nqk), dv(p.nv), dg(p.ng), db(p.ns), dS0(p.nS);
    gdn_in in = {q.data(), k.data(), v.data(), gated ? g.data() : NULL, delta ? b.data() : NULL, S0.data()};
    gdn_grad gr = {dq.data(), dk.data(), dv.data(), dg.data(), db.data(), dS0.data()};
    if (gdn_oracle_fwd(f, GDN_EXACT, &p.d, NAN, &in, o.data(), ST.data()) ||
        gdn_oracle_bwd(f, GDN_EXACT, &p.d, NAN, &in, dO.data(), dST.data(), &gr))
        return INFINITY;
    double worst = 0;
    worst = std::max(worst, relrms(o, fetch(p.o, p.nv, true)));
    worst = std::max(worst, relrms(ST, fetch(p.ST, p.nS, false)));
    worst = std::max(worst, relrms(dq, fetch(p.dq, p.nqk, true)));
    worst = std::max(worst, relrms(dk, fetch(p.dk, p.nqk, true)));
    worst = std::max(worst, relrms(dv, fetch(p.dv, p.nv, true)));
    if (gated) worst = std::max(worst, relrms(dg, fetch(p.dg, p.ng, false)));
    if (delta) worst = std::max(worst, relrms(db, fetch(p.db, p.ns, false)));
    worst = std::max(worst, relrms(dS0, fetch(p.dS0, p.nS, false)));
    problem_free(&p);
    return worst;
}

// ---- the chunk-parallel forward (gdn_cuda_fwd_tc) ------------------------------------------------

static void run_fwd_tc(enum gdn_family f, Problem *p, void *ws, size_t ws_bytes, cudaStream_t s)
{
    gdn_dev_in in = {p->q, p->k, p->v, p->g, p->b, p->S0};
    GDN_CHECK(gdn_cuda_fwd_tc(f, GDN_DTYPE_BF16, &p->d, NAN, &in, p->o, p->ST, ws, ws_bytes, s));
}

/* The timed configuration of gdn_cuda_fwd_tc (bf16, K = V = 128) at B=1 T=200 H=2 vs GDN_EXACT:
 * the worst relative RMS error of o and ST. */
static double validate_tc(enum gdn_family f)
{
    Problem p;
    problem_alloc(&p, f, gdn_dims{1, 200, 2, 128, 128});
    size_t wsb = gdn_cuda_fwd_tc_workspace(f, GDN_DTYPE_BF16, &p.d);
    void *ws;
    CUDA_CHECK(cudaMalloc(&ws, wsb));
    run_fwd_tc(f, &p, ws, wsb, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> q = fetch(p.q, p.nqk, true), k = fetch(p.k, p.nqk, true), v = fetch(p.v, p.nv, true);
    std::vector<double> g = fetch(p.g, p.ng, false), S0 = fetch(p.S0, p.nS, false), b = fetch(p.b, p.ns, true);
    std::vector<double> o(p.nv), ST(p.nS);
    gdn_in in = {q.data(),
                 k.data(),
                 v.data(),
                 gdn_family_has_gate(f) ? g.data() : NULL,
                 gdn_family_has_delta(f) ? b.data() : NULL,
                 S0.data()};
    double worst = INFINITY;
    if (!gdn_oracle_fwd(f, GDN_EXACT, &p.d, NAN, &in, o.data(), ST.data()))
        worst = std::max(relrms(o, fetch(p.o, p.nv, true)), relrms(ST, fetch(p.ST, p.nS, false)));
    CUDA_CHECK(cudaFree(ws));
    problem_free(&p);
    return worst;
}

// ---- the chunk-parallel backward (gdn_cuda_bwd_tc: linear attention, SSD, GLA, GDN) --------------

static void run_bwd_tc(enum gdn_family f, Problem *p, void *ws, size_t ws_bytes, cudaStream_t s)
{
    gdn_dev_in in = {p->q, p->k, p->v, p->g, p->b, p->S0};
    gdn_dev_grad gr = {p->dq, p->dk, p->dv, p->dg, p->db, p->dS0};
    GDN_CHECK(gdn_cuda_bwd_tc(f, GDN_DTYPE_BF16, &p->d, NAN, &in, p->dO, p->dST, &gr, ws, ws_bytes, s));
}

/* gdn_cuda_fwd_tc then gdn_cuda_bwd_tc (bf16, K = V = 128) at B=1 T=200 H=2 vs GDN_EXACT: the
 * worst relative RMS error of o, ST and every gradient. */
static double validate_bwd_tc(enum gdn_family f)
{
    Problem p;
    problem_alloc(&p, f, gdn_dims{1, 200, 2, 128, 128});
    size_t fwb = gdn_cuda_fwd_tc_workspace(f, GDN_DTYPE_BF16, &p.d),
           bwb = gdn_cuda_bwd_tc_workspace(f, GDN_DTYPE_BF16, &p.d);
    void *fw, *bw;
    CUDA_CHECK(cudaMalloc(&fw, fwb));
    CUDA_CHECK(cudaMalloc(&bw, bwb));
    run_fwd_tc(f, &p, fw, fwb, 0);
    run_bwd_tc(f, &p, bw, bwb, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const bool gated = gdn_family_has_gate(f), delta = gdn_family_has_delta(f);
    std::vector<double> q = fetch(p.q, p.nqk, true), k = fetch(p.k, p.nqk, true), v = fetch(p.v, p.nv, true);
    std::vector<double> g = fetch(p.g, p.ng, false), S0 = fetch(p.S0, p.nS, false);
    std::vector<double> dO = fetch(p.dO, p.nv, true), dST = fetch(p.dST, p.nS, false);
    std::vector<double> b = delta ? fetch(p.b, p.ns, true) : std::vector<double>(), db(p.ns);
    std::vector<double> o(p.nv), ST(p.nS), dq(p.nqk), dk(p.nqk), dv(p.nv), dg(p.ng), dS0(p.nS);
    gdn_in in = {q.data(), k.data(), v.data(), gated ? g.data() : NULL, delta ? b.data() : NULL, S0.data()};
    gdn_grad gr = {dq.data(), dk.data(), dv.data(), dg.data(), delta ? db.data() : NULL, dS0.data()};
    double worst = INFINITY;
    if (!gdn_oracle_fwd(f, GDN_EXACT, &p.d, NAN, &in, o.data(), ST.data()) &&
        !gdn_oracle_bwd(f, GDN_EXACT, &p.d, NAN, &in, dO.data(), dST.data(), &gr)) {
        worst = std::max(relrms(o, fetch(p.o, p.nv, true)), relrms(ST, fetch(p.ST, p.nS, false)));
        worst = std::max(worst, relrms(dq, fetch(p.dq, p.nqk, true)));
        worst = std::max(worst, relrms(dk, fetch(p.dk, p.nqk, true)));
        worst = std::max(worst, relrms(dv, fetch(p.dv, p.nv, true)));
        if (gated) worst = std::max(worst, relrms(dg, fetch(p.dg, p.ng, false)));
        if (delta) worst = std::max(worst, relrms(db, fetch(p.db, p.ns, false)));
        worst = std::max(worst, relrms(dS0, fetch(p.dS0, p.nS, false)));
    }
    CUDA_CHECK(cudaFree(fw));
    CUDA_CHECK(cudaFree(bw));
    problem_free(&p);
    return worst;
}

// ---- timing -------------------------------------------------------------------------------------

static double cublas_tflops(cudaStream_t s, double *ms_out)
{
    const int n = 8192;
    __nv_bfloat16 *A = dalloc<__nv_bfloat16>((size_t)n * n), *B = dalloc<__nv_bfloat16>((size_t)n * n);
    __nv_bfloat16 *C = dalloc<__nv_bfloat16>((size_t)n * n);
    fill(A, (size_t)n * n, -1, 1, 11);
    fill(B, (size_t)n * n, -1, 1, 12);
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, s));
    const float one = 1, zero = 0;
    auto gemm = [&] {
        CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, CUDA_R_16BF, n, B, CUDA_R_16BF, n,
                                  &zero, C, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    double ms = time_ms(gemm, 3, 15, s);
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaFree(A));
    CUDA_CHECK(cudaFree(B));
    CUDA_CHECK(cudaFree(C));
    *ms_out = ms;
    return 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12;
}

// ---- dispatch -------------------------------------------------------------------------------------

/* A kernel whose error at the check shape is past the bf16 bar is not timed: says so. */
static bool refuse_to_time(enum gdn_family f, double err)
{
    if (err <= 0.0033) return false;
    printf("%-7s %-10s | refused to time: worst relative RMS error %.2e > 0.0033 vs the fp64 oracle\n",
           gdn_family_name(f), "WRONG", err);
    return true;
}

int main(int argc, char **argv)
{
    gdn_dims d = {8, 4096, 16, 128, 128};
    if (argc == 4) d.B = atoll(argv[1]), d.T = atoll(argv[2]), d.H = atoll(argv[3]);
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("bench-gdn: no usable CUDA device (%s): nothing timed\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device 0: %s, sm_%d%d, %d SMs\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    double gemm_ms, peak = cublas_tflops(s, &gemm_ms);
    printf("cuBLAS bf16 GEMM 8192^3 (fp32 accumulate): %.3f ms, %.1f TFLOP/s\n", gemm_ms, peak);

    /* GDN_BENCH_TC_ONLY=1: only the chunk-parallel forward's launches, one of each at the timed
     * size after the checked one, without the old kernels: a profiler's run (ncu -k regex:tc_) */
    const char *tco = getenv("GDN_BENCH_TC_ONLY");
    const bool tc_only = tco && !strcmp(tco, "1");
    const int warm = tc_only ? 0 : 3, iters = tc_only ? 1 : 15;
    printf("\nGLR members, bf16 inputs, B=%lld T=%lld H=%lld K=%lld V=%lld; median of %d (after %d warm-up)\n"
           "model FLOPs: see flops_fwd / flops_bwd in gdn/bench_gdn.cu (recomputation not credited)\n",
           (long long)d.B, (long long)d.T, (long long)d.H, (long long)d.K, (long long)d.V, iters, warm);
    printf("%-7s %-10s | %9s %8s %8s | %9s %8s %8s | %s\n", "member", "check", "fwd ms", "TFLOP/s", "GB/s", "f+b ms",
           "TFLOP/s", "GB/s", "f+b vs cuBLAS");
    int refused = 0;
    for (int fi = 0; fi < GDN_NFAMILIES && !tc_only; fi++) {
        enum gdn_family f = (enum gdn_family)fi;
        const double err = validate(f);
        if (refuse_to_time(f, err)) {
            refused++;
            continue;
        }
        Problem p;
        problem_alloc(&p, f, d);
        double fms = time_ms([&] { run_fwd(f, &p, s); }, warm, iters, s);
        double bms = time_ms(
            [&] {
                run_fwd(f, &p, s);
                run_bwd(f, &p, s);
            },
            warm, iters, s);
        /* the timed outputs must be finite (a sample of o and dq) */
        std::vector<double> o = fetch(p.o, std::min<size_t>(p.nv, 1 << 20), true);
        std::vector<double> dq = fetch(p.dq, std::min<size_t>(p.nqk, 1 << 20), true);
        bool finite = std::all_of(o.begin(), o.end(), [](double x) { return isfinite(x); }) &&
                      std::all_of(dq.begin(), dq.end(), [](double x) { return isfinite(x); });
        double chunks = (double)d.B * d.H * ceil((double)d.T / GLR_C);
        double ff = chunks * flops_fwd(f, GLR_C, (double)d.K, (double)d.V);
        double fb = ff + chunks * flops_bwd(f, GLR_C, (double)d.K, (double)d.V);
        double bf = bytes_fwd(f, d, 2), bb = bf + bytes_bwd(f, d, 2);
        char chk[32];
        snprintf(chk, sizeof chk, "%.1e%s", err, finite ? "" : " NaN!");
        printf("%-7s %-10s | %9.3f %8.2f %8.0f | %9.3f %8.2f %8.0f | %5.1f%%\n", gdn_family_name(f), chk, fms,
               ff / (fms * 1e-3) / 1e12, bf / (fms * 1e-3) / 1e9, bms, fb / (bms * 1e-3) / 1e12,
               bb / (bms * 1e-3) / 1e9, 100.0 * (fb / (bms * 1e-3) / 1e12) / peak);
        refused += !finite;
        problem_free(&p);
    }

    /* The chunk-parallel forward beside the old one, for the members it covers. FLA's forward on
     * the H200 (issue 16, bf16, B8 T4096 H16 D128): linear attention 0.37 ms, simple_gla (SSD)
     * 0.42 ms, GLA 1.36 ms, GDN 0.92 ms, KDA 1.82 ms. */
    printf("\nchunk-parallel forward (gdn_cuda_fwd_tc, tensor cores) vs the sequential one (gdn_cuda_fwd), "
           "same shape; vs FLA (H200, measured elsewhere)\n");
    printf("%-7s %-10s | %9s %9s %8s %7s | %9s %8s %8s %7s\n", "member", "check", "old ms", "new ms", "TFLOP/s",
           "speedup", "FLA ms", "new/FLA", "GB/s", "cuBLAS");
    for (enum gdn_family f : {GDN_LINEAR, GDN_SSD, GDN_GLA, GDN_GDN, GDN_KDA}) {
        const double fla = f == GDN_LINEAR ? 0.37
                           : f == GDN_SSD  ? 0.42
                           : f == GDN_GLA  ? 1.36
                           : f == GDN_GDN  ? 0.92
                                           : 1.82;
        const double err = validate_tc(f);
        if (refuse_to_time(f, err)) {
            refused++;
            continue;
        }
        Problem p;
        problem_alloc(&p, f, d);
        size_t wsb = gdn_cuda_fwd_tc_workspace(f, GDN_DTYPE_BF16, &d);
        void *ws;
        CUDA_CHECK(cudaMalloc(&ws, wsb));
        double old_ms = tc_only ? NAN : time_ms([&] { run_fwd(f, &p, s); }, warm, iters, s);
        double new_ms = time_ms([&] { run_fwd_tc(f, &p, ws, wsb, s); }, warm, iters, s);
        std::vector<double> o = fetch(p.o, std::min<size_t>(p.nv, 1 << 20), true);
        bool finite = std::all_of(o.begin(), o.end(), [](double x) { return isfinite(x); });
        double chunks = (double)d.B * d.H * ceil((double)d.T / GLR_C);
        double ff = chunks * flops_fwd(f, GLR_C, (double)d.K, (double)d.V), tf = ff / (new_ms * 1e-3) / 1e12;
        char chk[32];
        snprintf(chk, sizeof chk, "%.1e%s", err, finite ? "" : " NaN!");
        printf("%-7s %-10s | %9.3f %9.3f %8.2f %6.1fx | %9.2f %7.2fx %8.0f %6.1f%%\n", gdn_family_name(f), chk, old_ms,
               new_ms, tf, old_ms / new_ms, fla, new_ms / fla, bytes_fwd(f, d, 2) / (new_ms * 1e-3) / 1e9,
               100.0 * tf / peak);
        refused += !finite;
        CUDA_CHECK(cudaFree(ws));
        problem_free(&p);
    }
    printf("(new/FLA: time ratio, < 1 is faster than FLA; cuBLAS: the new kernel's model TFLOP/s as a fraction of "
           "the GEMM above; model FLOPs of flops_fwd, the hi + lo passes not credited)\n");

    /* The chunk-parallel forward + backward, for the members gdn_cuda_bwd_tc covers, beside the
     * old forward + backward. FLA's fwd+bwd on the H200 (issue 16): linear attention 1.68 ms,
     * simple_gla (SSD) 2.13 ms, GLA 5.84 ms, GDN 3.25 ms. */
    printf("\nchunk-parallel forward + backward (gdn_cuda_fwd_tc + gdn_cuda_bwd_tc) vs the sequential ones, same "
           "shape; vs FLA (H200, measured elsewhere)\n");
    printf("%-7s %-10s | %9s %9s %9s %8s %7s | %9s %8s %7s\n", "member", "check", "old f+b", "new f+b", "new bwd",
           "TFLOP/s", "speedup", "FLA f+b", "new/FLA", "cuBLAS");
    for (enum gdn_family f : {GDN_LINEAR, GDN_SSD, GDN_GLA, GDN_GDN, GDN_KDA}) {
        if (gdn_cuda_bwd_tc_supported(f, GDN_DTYPE_BF16, &d) != 0) continue;
        const double fla = f == GDN_LINEAR ? 1.68
                           : f == GDN_SSD  ? 2.13
                           : f == GDN_GLA  ? 5.84
                           : f == GDN_GDN  ? 3.25
                                           : 9.62;
        const double err = validate_bwd_tc(f);
        if (refuse_to_time(f, err)) {
            refused++;
            continue;
        }
        Problem p;
        problem_alloc(&p, f, d);
        size_t fwb = gdn_cuda_fwd_tc_workspace(f, GDN_DTYPE_BF16, &d),
               bwb = gdn_cuda_bwd_tc_workspace(f, GDN_DTYPE_BF16, &d);
        void *fw, *bw;
        CUDA_CHECK(cudaMalloc(&fw, fwb));
        CUDA_CHECK(cudaMalloc(&bw, bwb));
        double old_ms = tc_only ? NAN
                                : time_ms(
                                      [&] {
                                          run_fwd(f, &p, s);
                                          run_bwd(f, &p, s);
                                      },
                                      warm, iters, s);
        double new_ms = time_ms(
            [&] {
                run_fwd_tc(f, &p, fw, fwb, s);
                run_bwd_tc(f, &p, bw, bwb, s);
            },
            warm, iters, s);
        double bwd_ms = time_ms([&] { run_bwd_tc(f, &p, bw, bwb, s); }, warm, iters, s);
        std::vector<double> dq = fetch(p.dq, std::min<size_t>(p.nqk, 1 << 20), true);
        bool finite = std::all_of(dq.begin(), dq.end(), [](double x) { return isfinite(x); });
        double chunks = (double)d.B * d.H * ceil((double)d.T / GLR_C);
        double fb =
            chunks * (flops_fwd(f, GLR_C, (double)d.K, (double)d.V) + flops_bwd(f, GLR_C, (double)d.K, (double)d.V));
        double tf = fb / (new_ms * 1e-3) / 1e12;
        char chk[32];
        snprintf(chk, sizeof chk, "%.1e%s", err, finite ? "" : " NaN!");
        printf("%-7s %-10s | %9.3f %9.3f %9.3f %8.2f %6.1fx | %9.2f %7.2fx %6.1f%%\n", gdn_family_name(f), chk, old_ms,
               new_ms, bwd_ms, tf, old_ms / new_ms, fla, new_ms / fla, 100.0 * tf / peak);
        refused += !finite;
        CUDA_CHECK(cudaFree(fw));
        CUDA_CHECK(cudaFree(bw));
        problem_free(&p);
    }

    CUDA_CHECK(cudaStreamDestroy(s));
    printf("(check: worst relative RMS error of the same launch configuration at B=1 T=200 H=2 vs the fp64 "
           "oracle, bar 0.0033)\n");
    return refused ? 1 : 0;
}
