/* gla_passes.cu: times each pass of GLA's (or GDN's, KDA's) chunk-parallel backward (gdn/libgdn_tc.cu's
 * tc_run_bwd_gla / GDN's / KDA's passes, bf16) in its real sequence, by including libgdn_tc.cu with TC_BWD_PASS
 * recording a CUDA event after each pass; also the forward and the whole backward. Not part of
 * the build (a measuring tool, as bench_gdn's GDN_BENCH_TC_ONLY); on an sm_90 host:
 *
 *   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Igdn gdn/gla_passes.cu -o gla_passes
 *   ./gla_passes [B T H K V [gla|gdn|kda]]   (default 8 4096 16 128 128 gla: bench_gdn's size)
 *
 * Prints the median over 15 runs (after 3 warm-up) of every pass, in ms. */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

static cudaEvent_t g_ev[16];
static const char *g_name[16];
static int g_n;

static void pass_mark(cudaStream_t s, const char *name)
{
    if (g_n < 16) {
        g_name[g_n] = name;
        cudaEventRecord(g_ev[g_n++], s);
    }
}
#define TC_BWD_PASS(stream, name) pass_mark(stream, name)

#include "libgdn_tc.cu"
#include "testutil.h" /* CUDA_CHECK, bf16_bits */

/* libgdn.cu's, which this program does not link: the failing call is printed */
void gdn_lib_set_error(const char *file, int line, const char *call, cudaError_t e)
{
    fprintf(stderr, "%s:%d: %s: %s\n", file, line, call, cudaGetErrorString(e));
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static float unif(void) /* [0, 1) */
{
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return (float)((g_rng >> 40) * 0x1p-24);
}

static void *dev_bf16(size_t n, float lo, float hi)
{
    std::vector<uint16_t> h(n);
    for (size_t i = 0; i < n; i++) h[i] = bf16_bits(lo + (hi - lo) * unif());
    void *d;
    CUDA_CHECK(cudaMalloc(&d, n * 2));
    CUDA_CHECK(cudaMemcpy(d, h.data(), n * 2, cudaMemcpyHostToDevice));
    return d;
}

static float *dev_f32(size_t n, float lo, float hi)
{
    std::vector<float> h(n);
    for (size_t i = 0; i < n; i++) h[i] = lo + (hi - lo) * unif();
    float *d;
    CUDA_CHECK(cudaMalloc(&d, n * 4));
    CUDA_CHECK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
    return d;
}

int main(int argc, char **argv)
{
    gdn_dims d = {8, 4096, 16, 128, 128};
    enum gdn_family f = GDN_GLA;
    if (argc == 7 && !strcmp(argv[6], "gdn"))
        f = GDN_GDN;
    else if (argc == 7 && !strcmp(argv[6], "kda"))
        f = GDN_KDA;
    else if (argc == 7 && strcmp(argv[6], "gla"))
        return fprintf(stderr, "gla_passes: member %s: gla, gdn or kda\n", argv[6]), 2;
    if (argc >= 6)
        d.B = atoll(argv[1]), d.T = atoll(argv[2]), d.H = atoll(argv[3]), d.K = atoll(argv[4]), d.V = atoll(argv[5]);
    for (int i = 0; i < 16; i++) CUDA_CHECK(cudaEventCreate(&g_ev[i]));
    const size_t rows = (size_t)d.B * d.T * d.H, nS = (size_t)d.B * d.H * d.K * d.V;
    const bool gdn = f == GDN_GDN || f == GDN_KDA; /* the delta rule: a beta per (t, h), keys small
                                                     enough that beta |k|^2 < 1 (it stays bounded);
                                                     GDN's gate per (t, h), KDA's per channel */
    void *q = dev_bf16(rows * d.K, -1, 1), *k = dev_bf16(rows * d.K, gdn ? -0.1f : -0.2f, gdn ? 0.1f : 0.2f);
    void *v = dev_bf16(rows * d.V, -1, 1), *dO = dev_bf16(rows * d.V, -1, 1);
    void *beta = gdn ? dev_bf16(rows, 0.05f, 0.95f) : nullptr;
    float *g = dev_f32(f == GDN_GDN ? rows : rows * d.K, -0.7f, -0.01f), *S0 = dev_f32(nS, -0.3f, 0.3f),
          *dST = dev_f32(nS, -0.3f, 0.3f);
    void *o, *dq, *dk, *dv;
    float *ST, *dg, *dS0;
    CUDA_CHECK(cudaMalloc(&o, rows * d.V * 2));
    CUDA_CHECK(cudaMalloc(&dq, rows * d.K * 2));
    CUDA_CHECK(cudaMalloc(&dk, rows * d.K * 2));
    CUDA_CHECK(cudaMalloc(&dv, rows * d.V * 2));
    CUDA_CHECK(cudaMalloc(&dg, rows * d.K * 4));
    CUDA_CHECK(cudaMalloc(&ST, nS * 4));
    CUDA_CHECK(cudaMalloc(&dS0, nS * 4));
    const size_t fwb = gdn_cuda_fwd_tc_workspace(f, GDN_DTYPE_BF16, &d),
                 bwb = gdn_cuda_bwd_tc_workspace(f, GDN_DTYPE_BF16, &d);
    void *fw, *bw;
    CUDA_CHECK(cudaMalloc(&fw, fwb));
    CUDA_CHECK(cudaMalloc(&bw, bwb));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    gdn_dev_in in = {q, k, v, g, beta, S0};
    float *db = nullptr;
    if (gdn) CUDA_CHECK(cudaMalloc(&db, rows * 4));
    gdn_dev_grad gr = {dq, dk, dv, dg, db, dS0};

    std::vector<std::vector<float>> t; /* t[pass][run] */
    std::vector<float> fwd;
    for (int it = 0; it < 18; it++) {
        g_n = 0;
        pass_mark(s, "start");
        if (gdn_cuda_fwd_tc(f, GDN_DTYPE_BF16, &d, NAN, &in, o, ST, fw, fwb, s)) return 1;
        pass_mark(s, "fwd");
        if (gdn_cuda_bwd_tc(f, GDN_DTYPE_BF16, &d, NAN, &in, dO, dST, &gr, bw, bwb, s)) return 1;
        CUDA_CHECK(cudaStreamSynchronize(s));
        CUDA_CHECK(cudaGetLastError());
        if (it < 3) continue;
        if (t.empty()) t.resize((size_t)g_n);
        for (int p = 1; p < g_n; p++) {
            float ms;
            CUDA_CHECK(cudaEventElapsedTime(&ms, g_ev[p - 1], g_ev[p]));
            t[(size_t)p].push_back(ms);
        }
        float all;
        CUDA_CHECK(cudaEventElapsedTime(&all, g_ev[1], g_ev[g_n - 1]));
        t[0].push_back(all);
    }
    printf("%s bf16 B%lld T%lld H%lld K%lld V%lld: median of 15, ms\n",
           f == GDN_GLA   ? "GLA"
           : f == GDN_KDA ? "KDA"
                          : "GDN",
           (long long)d.B, (long long)d.T, (long long)d.H, (long long)d.K, (long long)d.V);
    for (int p = 1; p < g_n; p++) {
        std::sort(t[(size_t)p].begin(), t[(size_t)p].end());
        printf("  %-12s %8.3f\n", g_name[p], t[(size_t)p][7]);
    }
    std::sort(t[0].begin(), t[0].end());
    printf("  %-12s %8.3f\n", "bwd (all)", t[0][7]);
    return 0;
}
