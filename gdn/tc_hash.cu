/* tc_hash.cu: runs libgdn's chunk-parallel kernels (gdn_cuda_fwd_tc for the five members,
 * gdn_cuda_bwd_tc for linear attention, SSD, GLA and GDN; bf16 and fp32) on fixed inputs and prints one
 * FNV-1a hash of each call's outputs, so that two builds of libgdn.so -- a change of shared-memory
 * layout or of launch bounds, which must not move a bit -- can be compared on the GPU: run it
 * against each and diff the outputs. Each case runs twice and says whether the two runs agree.
 * The cases: B2 T1000 H4 K=V=128, K != V both ways, T not a multiple of 64, K = V = 256 where the
 * member allows it, and bench_gdn's size (B8 T4096 H16 K=V=128, bf16) for GLA and KDA, whose
 * outputs kernel runs two CTAs an SM since its shared memory was cut (a race there shows at scale
 * first). With `time` it times instead, as bench_gdn's chunk-parallel tables do (bf16, B8 T4096 H16
 * K=V=128, CUDA events, median of 15 after 3 warm-up runs) but without cuBLAS or the sequential
 * kernels: the forward of each member, forward + backward and backward alone where there is one.
 * A tool, not a test: `make gdn` builds it (gdn/local.mk) beside the test and the bench.
 *   gdn/tc_hash [quick]       (quick: without bench_gdn's size; exits 77 without an sm_90 GPU)
 *   gdn/tc_hash time          (ms; a few seconds) */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <vector>

extern "C" {
#include "oracle.h"
}
#include "libgdn.h"
#include "testutil.h"

struct Case {
    enum gdn_family f;
    bool bf16;
    int B, T, H, K, V;
    bool state; /* S0 and dST given */
};

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* A device buffer of n elements of es bytes, filled from x (converted to bf16 when es == 2). */
static void *upload(const std::vector<float> &x, size_t es)
{
    void *d;
    CUDA_CHECK(cudaMalloc(&d, x.size() * es + 16));
    if (es == 4) {
        CUDA_CHECK(cudaMemcpy(d, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
    } else {
        std::vector<uint16_t> h(x.size());
        for (size_t i = 0; i < x.size(); i++) h[i] = bf16_bits(x[i]);
        CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
    }
    return d;
}

/* n uniform values in [lo, hi) */
static std::vector<float> unif(size_t n, double lo, double hi, uint64_t seed)
{
    std::vector<float> x(n);
    for (size_t i = 0; i < n; i++) x[i] = (float)(lo + (hi - lo) * rng_unif(&seed));
    return x;
}

/* Device outputs, poisoned with NaN bytes before each run, hashed together in order. */
struct Outs {
    std::vector<void *> p;
    std::vector<size_t> bytes;
    void *add(size_t b)
    {
        void *d;
        CUDA_CHECK(cudaMalloc(&d, b + 16));
        p.push_back(d), bytes.push_back(b);
        return d;
    }
    void poison()
    {
        for (size_t i = 0; i < p.size(); i++) CUDA_CHECK(cudaMemset(p[i], 0xff, bytes[i]));
    }
    uint64_t hash()
    {
        uint64_t h = 0xcbf29ce484222325ull;
        std::vector<unsigned char> host;
        for (size_t i = 0; i < p.size(); i++) {
            host.resize(bytes[i]);
            CUDA_CHECK(cudaMemcpy(host.data(), p[i], bytes[i], cudaMemcpyDeviceToHost));
            h = fnv1a(h, host.data(), bytes[i]);
        }
        return h;
    }
    /* run(), twice, each time on poisoned outputs: the outputs' two hashes */
    template <class F> void twice(F run, uint64_t h[2])
    {
        for (int r = 0; r < 2; r++) {
            poison();
            run();
            CUDA_CHECK(cudaDeviceSynchronize());
            h[r] = hash();
        }
    }
    ~Outs()
    {
        for (void *d : p) cudaFree(d);
    }
};

/* One case: forward (o, ST) and, where gdn_cuda_bwd_tc supports it, backward (dq, dk, dv, dg,
 * dS0), each twice; prints the two hashes. Returns 1 when the two runs of either differ. */
static int run_case(const Case &c)
{
    const gdn_dims d = {c.B, c.T, c.H, c.K, c.V};
    const size_t es = c.bf16 ? 2 : 4, rows = (size_t)c.B * c.T * c.H, nS = (size_t)c.B * c.H * c.K * c.V;
    const bool gated = c.f != GDN_LINEAR, delta = gdn_family_has_delta(c.f);
    const size_t ng = gdn_family_per_channel(c.f) ? rows * c.K : rows;
    const enum gdn_dtype dt = c.bf16 ? GDN_DTYPE_BF16 : GDN_DTYPE_F32;
    const uint64_t s = 0x600d0000u + (uint64_t)c.f * 1000 + (uint64_t)c.T * 7 + (uint64_t)c.K * 3 + c.V + c.bf16;
    const double ks = sqrt(3.0 / c.K); /* k rows of about unit norm, as the delta rule wants */
    void *q = upload(unif(rows * c.K, -1, 1, s + 1), es), *k = upload(unif(rows * c.K, -ks, ks, s + 2), es);
    void *v = upload(unif(rows * c.V, -1, 1, s + 3), es), *dO = upload(unif(rows * c.V, -1, 1, s + 4), es);
    void *b = upload(unif(rows, 0.05, 0.95, s + 5), es);
    float *g = (float *)upload(unif(ng, -0.7, -0.01, s + 6), 4);
    float *S0 = (float *)upload(unif(nS, -0.5, 0.5, s + 7), 4), *dST = (float *)upload(unif(nS, -0.5, 0.5, s + 8), 4);
    const gdn_dev_in in = {q, k, v, gated ? g : nullptr, delta ? b : nullptr, c.state ? S0 : nullptr};
    const double scale = 1.0 / sqrt((double)c.K);

    Outs fo;
    void *o = fo.add(rows * c.V * es);
    float *ST = (float *)fo.add(nS * 4);
    const size_t fwb = gdn_cuda_fwd_tc_workspace(c.f, dt, &d);
    void *fw;
    CUDA_CHECK(cudaMalloc(&fw, fwb + 16));
    uint64_t fh[2];
    fo.twice([&] { GDN_CHECK(gdn_cuda_fwd_tc(c.f, dt, &d, scale, &in, o, ST, fw, fwb, nullptr)); }, fh);
    char bwd[40] = "-";
    bool bwd_det = true;
    if (gdn_cuda_bwd_tc_supported(c.f, dt, &d) == 0) {
        Outs bo;
        void *dq = bo.add(rows * c.K * es), *dk = bo.add(rows * c.K * es), *dv = bo.add(rows * c.V * es);
        float *dg = gated ? (float *)bo.add(ng * 4) : nullptr, *dS0 = (float *)bo.add(nS * 4);
        const gdn_dev_grad gr = {dq, dk, dv, dg, nullptr, dS0};
        const size_t bwb = gdn_cuda_bwd_tc_workspace(c.f, dt, &d);
        void *bw;
        CUDA_CHECK(cudaMalloc(&bw, bwb + 16));
        uint64_t bh[2];
        bo.twice(
            [&] {
                GDN_CHECK(gdn_cuda_bwd_tc(c.f, dt, &d, scale, &in, dO, c.state ? dST : nullptr, &gr, bw, bwb, nullptr));
            },
            bh);
        CUDA_CHECK(cudaFree(bw));
        snprintf(bwd, sizeof bwd, "%016llx", (unsigned long long)bh[0]);
        bwd_det = bh[0] == bh[1];
    }
    const bool det = fh[0] == fh[1] && bwd_det;
    printf("%-6s %-4s B%d T%-4d H%-2d K%-3d V%-3d S0 %s | fwd %016llx | bwd %-16s | two runs %s\n",
           gdn_family_name(c.f), c.bf16 ? "bf16" : "f32", c.B, c.T, c.H, c.K, c.V, c.state ? "y" : "n",
           (unsigned long long)fh[0], bwd, det ? "equal" : "DIFFER");
    fflush(stdout);
    CUDA_CHECK(cudaFree(fw));
    for (void *x : {q, k, v, dO, b, (void *)g, (void *)S0, (void *)dST}) CUDA_CHECK(cudaFree(x));
    return det ? 0 : 1;
}

/* `time`: every member's chunk-parallel forward, and forward + backward, backward where
 * gdn_cuda_bwd_tc has one, at bench_gdn's size in bf16 (inputs as run_case's). */
static void time_members(void)
{
    const gdn_dims d = {8, 4096, 16, 128, 128};
    const size_t rows = (size_t)d.B * d.T * d.H, nS = (size_t)d.B * d.H * d.K * d.V;
    printf("bf16 B%lld T%lld H%lld K%lld V%lld, ms, median of 15 after 3 warm-up\n", (long long)d.B, (long long)d.T,
           (long long)d.H, (long long)d.K, (long long)d.V);
    printf("%-6s | %9s %9s %9s\n", "member", "fwd", "f+b", "bwd");
    for (enum gdn_family f : {GDN_LINEAR, GDN_SSD, GDN_GLA, GDN_GDN, GDN_KDA}) {
        const size_t ng = gdn_family_per_channel(f) ? rows * d.K : rows;
        const double ks = sqrt(3.0 / d.K);
        void *q = upload(unif(rows * d.K, -1, 1, 1), 2), *k = upload(unif(rows * d.K, -ks, ks, 2), 2);
        void *v = upload(unif(rows * d.V, -1, 1, 3), 2), *dO = upload(unif(rows * d.V, -1, 1, 4), 2);
        void *b = upload(unif(rows, 0.05, 0.95, 5), 2);
        float *g = (float *)upload(unif(ng, -0.7, -0.01, 6), 4);
        float *S0 = (float *)upload(unif(nS, -0.5, 0.5, 7), 4), *dST = (float *)upload(unif(nS, -0.5, 0.5, 8), 4);
        const gdn_dev_in in = {q, k, v, f != GDN_LINEAR ? g : nullptr, gdn_family_has_delta(f) ? b : nullptr, S0};
        const double scale = 1.0 / sqrt((double)d.K);
        Outs out;
        void *o = out.add(rows * d.V * 2), *dq = out.add(rows * d.K * 2), *dk = out.add(rows * d.K * 2);
        void *dv = out.add(rows * d.V * 2);
        float *ST = (float *)out.add(nS * 4), *dg = (float *)out.add(ng * 4), *dS0 = (float *)out.add(nS * 4);
        const gdn_dev_grad gr = {dq, dk, dv, f != GDN_LINEAR ? dg : nullptr, nullptr, dS0};
        const size_t fwb = gdn_cuda_fwd_tc_workspace(f, GDN_DTYPE_BF16, &d);
        const bool has_bwd = gdn_cuda_bwd_tc_supported(f, GDN_DTYPE_BF16, &d) == 0;
        const size_t bwb = has_bwd ? gdn_cuda_bwd_tc_workspace(f, GDN_DTYPE_BF16, &d) : 0;
        void *fw, *bw = nullptr;
        CUDA_CHECK(cudaMalloc(&fw, fwb + 16));
        if (has_bwd) CUDA_CHECK(cudaMalloc(&bw, bwb + 16));
        auto fwd = [&] { GDN_CHECK(gdn_cuda_fwd_tc(f, GDN_DTYPE_BF16, &d, scale, &in, o, ST, fw, fwb, nullptr)); };
        auto bwd = [&] {
            GDN_CHECK(gdn_cuda_bwd_tc(f, GDN_DTYPE_BF16, &d, scale, &in, dO, dST, &gr, bw, bwb, nullptr));
        };
        const double fms = time_ms(fwd, 3, 15, 0);
        printf("%-6s | %9.3f", gdn_family_name(f), fms);
        if (has_bwd)
            printf(" %9.3f %9.3f\n", time_ms([&] { fwd(), bwd(); }, 3, 15, 0), time_ms(bwd, 3, 15, 0));
        else
            printf(" %9s %9s\n", "-", "-");
        fflush(stdout);
        CUDA_CHECK(cudaFree(fw));
        if (bw) CUDA_CHECK(cudaFree(bw));
        for (void *x : {q, k, v, dO, b, (void *)g, (void *)S0, (void *)dST}) CUDA_CHECK(cudaFree(x));
    }
}

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && !strcmp(argv[1], "quick"), timing = argc > 1 && !strcmp(argv[1], "time");
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("SKIP: no usable CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    if (p.major != 9 || p.minor != 0) {
        printf("SKIP: libgdn is built for sm_90a; device 0 is %s, sm_%d%d\n", p.name, p.major, p.minor);
        return 77;
    }
    if (timing) {
        time_members();
        return 0;
    }
    std::vector<Case> cases;
    for (enum gdn_family f : {GDN_LINEAR, GDN_SSD, GDN_GLA, GDN_GDN, GDN_KDA})
        for (int bf = 1; bf >= 0; bf--) {
            cases.push_back({f, (bool)bf, 2, 1000, 4, 128, 128, true});
            cases.push_back({f, (bool)bf, 1, 130, 2, 64, 256, true});
            cases.push_back({f, (bool)bf, 1, 77, 3, 128, 64, false});
            cases.push_back({f, (bool)bf, 2, 64, 2, 64, 64, true});
            if (!gdn_family_per_channel(f)) cases.push_back({f, (bool)bf, 1, 200, 1, 256, 256, true});
        }
    if (!quick)
        for (enum gdn_family f : {GDN_GLA, GDN_KDA}) cases.push_back({f, true, 8, 4096, 16, 128, 128, true});
    int differ = 0;
    for (const Case &c : cases) differ += run_case(c);
    printf("%zu cases, %d with two runs that differ\n", cases.size(), differ);
    return differ ? 1 : 0;
}
