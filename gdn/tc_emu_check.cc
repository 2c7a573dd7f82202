/* tc_emu_check.cc: runs the chunk-parallel forward kernels of gdn/chunk_fwd_tc.cuh (linear
 * attention and SSD) and gdn/chunk_fwd_gdn_tc.cuh (GDN; bf16 on the emulated tensor cores, fp32 on
 * CUDA cores) on the host through
 * gdn/tc_emu.h and compares o and the final state with the fp64 oracle (gdn/oracle.h, GDN_EXACT)
 * at the bars of tests/gpu/test_gdn_tc.cu (relative RMS: bf16 0.0033, fp32 1e-5). Every case
 * runs twice, the CTAs' threads in ascending then descending order, and the two runs must agree
 * bit for bit (a missing __syncthreads shows there); outputs and the workspace start as NaN (an
 * element never written fails), inputs are framed by NaN guards (a read past them shows in o)
 * and outputs by guard bytes that must survive (a write past them fails); one NaN in an input
 * must give the oracle's NaN positions (plus, on the bf16 path, the ones chunk_fwd_tc.cuh
 * documents). First, self-checks of the emulation: bf16 rounding, the mma against a plain
 * product through the kernels' own fragment loaders, shared memory poisoned per CTA. It checks the kernels' indexing, barriers, tails and algorithm; it says
 * nothing about the GPU's timing, its mma's internal rounding or nvcc's FMA contraction.
 *   gcc -std=gnu11 -O2 -c gdn/oracle.c -o oracle.o &&
 *   g++ -std=c++17 -O2 -ffp-contract=off -fno-strict-aliasing -Wno-unknown-pragmas -DTC_HOST_EMU -Igdn \
 *       gdn/tc_emu_check.cc oracle.o -o tc_emu_check
 *   ./tc_emu_check [quick | big] [bwd] [gdn] [hash]   (tests/tc_emu.sh runs all but big in `make check`;
 *   big adds the GPU test's B=2 T=1000 H=4 K=V=128; bwd runs the backward cases alone; gdn keeps of
 *   the backward cases GDN's alone (gdn/chunk_bwd_gdn_tc.cuh), kda KDA's (gdn/chunk_bwd_kda_tc.cuh); hash prints, per
 *   case, a hash of every output and the workspace, so that two builds of the kernels -- a change of
 *   shared-memory layout, of launch bounds -- can be shown bit for bit equal: diff the two logs'
 *   hash lines) */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "chunk_fwd_gdn_tc.cuh" /* includes chunk_fwd_tc.cuh */
#include "chunk_fwd_gla_tc.cuh"
#include "chunk_bwd_tc.cuh"
#include "chunk_bwd_gla_tc.cuh"
#include "chunk_bwd_gdn_tc.cuh"
#include "chunk_bwd_kda_tc.cuh"

extern "C" {
#include "oracle.h"
#include "testutil.h"
}

static const double BAR_BF16 = 0.0033, BAR_F32 = 1e-5;
static int g_fail;
static bool g_hash;     /* the `hash` argument */
static bool g_gdn_only; /* the `gdn` argument: of the backward cases, GDN's alone */
static bool g_kda_only; /* the `kda` argument: of the backward cases, KDA's alone */

/* FNV-1a over the bytes of the buffers' data (not their guards), for g_hash: a case's outputs
 * (and workspace) as one 64-bit value that two builds can compare */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

// ---- buffers with guards -------------------------------------------------------------------------

/* n elements of es bytes between two guards of 64 bytes (the data stays 16-byte aligned). An
 * input's guards hold NaN (0xff); an output's the byte 0xa5, which the kernels never write.
 * Under AddressSanitizer the guards are poisoned too, so that any access to them -- a read that
 * leaves no trace in the outputs included -- is reported where it happens. */
struct Buf {
    static const size_t G = 64;
    std::vector<unsigned char> b;
    size_t bytes = 0;
    void guard_access(bool allow)
    {
#ifdef TC_EMU_ASAN
        if (b.empty()) return;
        if (allow)
            ASAN_UNPOISON_MEMORY_REGION(b.data(), G), ASAN_UNPOISON_MEMORY_REGION(b.data() + G + bytes, G);
        else
            ASAN_POISON_MEMORY_REGION(b.data(), G), ASAN_POISON_MEMORY_REGION(b.data() + G + bytes, G);
#else
        (void)allow;
#endif
    }
    void init(size_t n, size_t es, unsigned char guard, unsigned char fill)
    {
        guard_access(true);
        bytes = n * es;
        b.assign(bytes + 2 * G, guard);
        memset(b.data() + G, fill, bytes);
        guard_access(false);
    }
    ~Buf()
    {
        guard_access(true);
    }
    void *p()
    {
        return b.data() + G;
    }
    bool guards_intact(unsigned char guard)
    {
        guard_access(true);
        bool ok = true;
        for (size_t i = 0; i < G; i++)
            if (b[i] != guard || b[G + bytes + i] != guard) ok = false;
        guard_access(false);
        return ok;
    }
};

static uint16_t emu_bf16_bits(double x)
{
    return __float2bfloat16_rn((float)x).x;
}

static double emu_bf16_val(uint16_t h)
{
    __nv_bfloat16 v;
    v.x = h;
    return __bfloat162float(v);
}

/* x as the kernel's input type stores it, into the input buffer; returns the value it holds. */
static double put(Buf &B, size_t i, double x, bool bf16)
{
    if (bf16) {
        const uint16_t u = emu_bf16_bits(x);
        memcpy((unsigned char *)B.p() + 2 * i, &u, 2);
        return emu_bf16_val(u);
    }
    const float f = (float)x;
    memcpy((unsigned char *)B.p() + 4 * i, &f, 4);
    return f;
}

/* rows unit-norm rows of K normal draws into B (as put stores them) and kd (the values held). */
static void put_unit_rows(Buf &B, std::vector<double> &kd, size_t rows, int K, uint64_t *s, bool bf16)
{
    for (size_t r = 0; r < rows; r++) {
        double n2 = 0, x[256];
        for (int i = 0; i < K; i++) x[i] = rng_normal(s), n2 += x[i] * x[i];
        for (int i = 0; i < K; i++) kd[r * K + i] = put(B, r * K + i, x[i] / sqrt(n2), bf16);
    }
}

static std::vector<double> get(Buf &B, bool bf16)
{
    std::vector<double> x(B.bytes / (bf16 ? 2 : 4));
    for (size_t i = 0; i < x.size(); i++) {
        if (bf16) {
            uint16_t u;
            memcpy(&u, (unsigned char *)B.p() + 2 * i, 2);
            x[i] = emu_bf16_val(u);
        } else {
            float f;
            memcpy(&f, (unsigned char *)B.p() + 4 * i, 4);
            x[i] = f;
        }
    }
    return x;
}

/* ||x - ref|| / ||ref||; INFINITY when x holds a NaN or Inf (an unwritten element stays NaN). */
static double relrms(const std::vector<double> &ref, const std::vector<double> &x)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < x.size(); i++) {
        if (!std::isfinite(x[i])) return INFINITY;
        num += (x[i] - ref[i]) * (x[i] - ref[i]), den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* With g_hash, one line "hash WHAT <16 hex digits>": fnv1a of the data of bufs in order. */
static void hash_line(const char *what, std::initializer_list<Buf *> bufs)
{
    if (!g_hash) return;
    uint64_t h = 0xcbf29ce484222325ull;
    for (Buf *x : bufs) h = fnv1a(h, x->p(), x->bytes);
    printf("hash %s %016llx\n", what, (unsigned long long)h);
}

// ---- self-checks of the emulation ----------------------------------------------------------------

static void check_bf16(void)
{
    struct {
        uint32_t in;
        uint16_t out;
    } t[] = {
        {0x3f800000u, 0x3f80}, /* 1 */
        {0x3f808000u, 0x3f80}, /* 1 + 2^-8: a tie, to even (down) */
        {0x3f818000u, 0x3f82}, /* 1 + 3 2^-8: a tie, to even (up) */
        {0x3f808001u, 0x3f81}, /* just above the tie */
        {0xbf80ffffu, 0xbf81}, /* negative, rounds away from zero by magnitude */
        {0x7f7fffffu, 0x7f80}, /* FLT_MAX overflows to +Inf */
        {0x7f800000u, 0x7f80}, /* +Inf */
        {0xff800000u, 0xff80}, /* -Inf */
        {0x00008000u, 0x0000}, /* subnormal tie to even: 0 */
        {0x00018000u, 0x0002}, /* subnormal tie to even: up */
        {0x80000000u, 0x8000}, /* -0 */
    };
    int bad = 0;
    for (auto &c : t) {
        float f;
        memcpy(&f, &c.in, 4);
        const uint16_t got = __float2bfloat16_rn(f).x;
        if (got != c.out) printf("bf16 rn of 0x%08x: 0x%04x, expected 0x%04x\n", c.in, got, c.out), bad++;
    }
    for (uint32_t u : {0x7fc00000u, 0xffc00001u, 0x7f800001u}) { /* quiet, negative, signalling NaN */
        float f;
        memcpy(&f, &u, 4);
        if (!std::isnan(__bfloat162float(__float2bfloat16_rn(f)))) printf("bf16 of NaN 0x%08x: not NaN\n", u), bad++;
    }
    const __nv_bfloat162 p = __floats2bfloat162_rn(1.f, -2.f);
    uint32_t w;
    memcpy(&w, &p, 4);
    if (w != 0xc0003f80u) printf("bf16x2 of (1, -2): 0x%08x, expected 0xc0003f80\n", w), bad++;
    printf("emulation: bf16 round to nearest even, Inf, NaN, subnormals, bf16x2 halves: %s\n", bad ? "FAIL" : "ok");
    g_fail += bad != 0;
}

/* One warp: D = A B + C through tc_frag_a / tc_frag_b / tc_mma (A row-major 16 x 16, B given as
 * its transpose X, 8 x 16, the kernels' convention) against the plain product in fp64; small
 * integers, so every sum is exact and the order cannot matter. */
static void check_mma(void)
{
    static __nv_bfloat16 A[16 * 24], X[8 * 24];
    float C[16][8], D[16][8];
    double R[16][8];
    uint64_t s = 42;
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 16; k++) A[i * 24 + k] = __float2bfloat16_rn((float)((int)(rng_next(&s) % 17) - 8));
    for (int n = 0; n < 8; n++)
        for (int k = 0; k < 16; k++) X[n * 24 + k] = __float2bfloat16_rn((float)((int)(rng_next(&s) % 17) - 8));
    for (int i = 0; i < 16; i++)
        for (int n = 0; n < 8; n++) {
            C[i][n] = (float)((int)(rng_next(&s) % 101) - 50);
            R[i][n] = C[i][n];
            for (int k = 0; k < 16; k++)
                R[i][n] += (double)__bfloat162float(A[i * 24 + k]) * __bfloat162float(X[n * 24 + k]);
        }
    tc_emu_launch(dim3(1), dim3(32), 0, [&] {
        const int lane = (int)threadIdx.x, g = lane / 4, t = lane % 4;
        float d[4] = {C[g][2 * t], C[g][2 * t + 1], C[g + 8][2 * t], C[g + 8][2 * t + 1]};
        uint32_t a[4], b0, b1;
        tc_frag_a(a, A, 24, 0, 0);
        tc_frag_b(&b0, &b1, X, 24, 0, 0);
        tc_mma(d, a, b0, b1);
        D[g][2 * t] = d[0], D[g][2 * t + 1] = d[1], D[g + 8][2 * t] = d[2], D[g + 8][2 * t + 1] = d[3];
    });
    int bad = 0;
    for (int i = 0; i < 16; i++)
        for (int n = 0; n < 8; n++) bad += !(D[i][n] == R[i][n]);
    printf("emulation: mma.m16n8k16 through tc_frag_a/tc_frag_b equals A B + C: %s (%d of 128 differ)\n",
           bad ? "FAIL" : "ok", bad);
    g_fail += bad != 0;
}

/* The emulated ldmatrix.x4.trans against the fragment loaders it stands for: tc_frag_b_kn2_ldsm
 * against tc_frag_b_kn of two planes, and tc_frag_at_ldsm against tc_frag_a of the transposed
 * tile (St[i][k] = S[k][i]), on a 32 x 40 tile of distinct bf16 values. */
static void check_ldmatrix(void)
{
    alignas(16) static __nv_bfloat16 S[32 * 40], St[40 * 40];
    for (int i = 0; i < 32 * 40; i++) S[i].x = (uint16_t)(i + 1);
    for (int k = 0; k < 32; k++)
        for (int i = 0; i < 40; i++) St[i * 40 + k] = S[k * 40 + i];
    int bad = 0, bad_a = 0;
    tc_emu_launch(dim3(1), dim3(32), 0, [&] {
        uint32_t b[4], r[4];
        tc_frag_b_kn(&r[0], &r[1], S, 40, 8, 0);
        tc_frag_b_kn(&r[2], &r[3], S + 16 * 40, 40, 8, 0);
        tc_frag_b_kn2_ldsm(b, S, 16 * 40, 40, 8, 0);
        for (int j = 0; j < 4; j++) bad += b[j] != r[j];
        tc_frag_a(r, St, 40, 8, 16);
        tc_frag_at_ldsm(b, S, 40, 8, 16);
        for (int j = 0; j < 4; j++) bad_a += b[j] != r[j];
    });
    printf("emulation: ldmatrix.x4.trans gives tc_frag_b_kn's fragments: %s\n", bad ? "FAIL" : "ok");
    printf("emulation: ldmatrix.x4.trans gives tc_frag_a's fragments of the transpose: %s\n", bad_a ? "FAIL" : "ok");
    g_fail += bad != 0 || bad_a != 0;
}

/* The shuffles and __syncwarp of tc_emu.h (for the kernels to come) against their CUDA
 * definitions: two warps, each lane's value 100 w + lane. */
static void check_shfl(void)
{
    int got[64][6];
    tc_emu_launch(dim3(1), dim3(64), 0, [&] {
        const int t = (int)threadIdx.x, v = 100 * (t / 32) + t % 32;
        int sum = v;
        for (int m = 16; m >= 1; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
        __syncwarp();
        got[t][0] = sum;
        got[t][1] = __shfl_sync(0xffffffffu, v, 5);
        got[t][2] = __shfl_sync(0xffffffffu, v, 3, 8);
        got[t][3] = __shfl_down_sync(0xffffffffu, v, 2, 16);
        got[t][4] = __shfl_up_sync(0xffffffffu, v, 3);
        got[t][5] = __shfl_xor_sync(0xffffffffu, v, 8, 8); /* a later group: own value */
    });
    int bad = 0;
    for (int t = 0; t < 64; t++) {
        const int w = t / 32, l = t % 32, base = 100 * w;
        const int want[6] = {32 * base + 496,
                             base + 5,
                             base + (l & ~7) + 3,
                             base + (l % 16 + 2 < 16 ? l + 2 : l),
                             base + (l >= 3 ? l - 3 : l),
                             base + ((l ^ 8) / 8 > l / 8 ? l : l ^ 8)};
        for (int i = 0; i < 6; i++) bad += got[t][i] != want[i];
    }
    printf("emulation: __shfl_sync, _xor, _down, _up (with widths) and __syncwarp: %s\n", bad ? "FAIL" : "ok");
    g_fail += bad != 0;
}

/* Shared memory, static and dynamic, holds NaN at the start of every CTA (CTA 0 writes it,
 * CTA 1 must not see the values); a wrong dynamic size is refused before the launch. */
static void poison_kernel(float *seen)
{
    __shared__ float st[4];
    TC_DYNAMIC_SMEM(dyn);
    float *dy = reinterpret_cast<float *>(dyn);
    const int t = (int)threadIdx.x;
    seen[2 * (blockIdx.x * 4 + t)] = st[t], seen[2 * (blockIdx.x * 4 + t) + 1] = dy[t];
    st[t] = 1.f, dy[t] = 2.f;
    __syncthreads();
}

static void check_poison(void)
{
    float seen[16];
    tc_emu_launch(dim3(2), dim3(4), 16, [&] { poison_kernel(seen); });
    int bad = 0;
    for (float x : seen) bad += !std::isnan(x);
    printf("emulation: static and dynamic shared memory NaN at every CTA's start: %s\n", bad ? "FAIL" : "ok");
    g_fail += bad != 0;
}

/* tc_gdn_invert (gdn/chunk_fwd_gdn_tc.cuh) alone: for a strictly lower A with entries in
 * [-0.5, 0.5], (I + A) T must be I to fp32 accuracy (in fp64), T unit lower with zeros above,
 * with 128 and with 256 threads (the bf16 and the fp32 kernels' block sizes). */
static void check_invert(void)
{
    static float A[TC_C * TC_F32P], Tm[TC_C * TC_F32P];
    uint64_t s = 7;
    for (int i = 0; i < TC_C; i++)
        for (int j = 0; j < TC_C; j++) A[i * TC_F32P + j] = j < i ? (float)(rng_unif(&s) - 0.5) : 0.f;
    double worst = 0;
    int bad = 0;
    for (unsigned nt : {128u, 256u}) {
        memset(Tm, 0xff, sizeof Tm);
        tc_emu_launch(dim3(1), dim3(nt), 768 * 4, [&] {
            TC_DYNAMIC_SMEM(scratch);
            tc_gdn_invert(A, Tm, reinterpret_cast<float *>(scratch));
        });
        for (int i = 0; i < TC_C; i++)
            for (int j = 0; j < TC_C; j++) {
                double r = Tm[i * TC_F32P + j]; /* ((I + A) T)_ij */
                for (int m = 0; m < i; m++) r += (double)A[i * TC_F32P + m] * Tm[m * TC_F32P + j];
                const double e = fabs(r - (i == j));
                worst = e > worst || std::isnan(e) ? e : worst;
                bad += !(e <= 1e-5) || (j > i && Tm[i * TC_F32P + j] != 0.f) || (j == i && Tm[i * TC_F32P + j] != 1.f);
            }
    }
    printf("emulation: tc_gdn_invert gives (I + A)^-1 (max |(I + A) T - I| %.1e, 128 and 256 threads): %s\n", worst,
           bad ? "FAIL" : "ok");
    g_fail += bad != 0;
}

// ---- one configuration ---------------------------------------------------------------------------

struct Cfg {
    gdn_family f;
    bool bf16;
    int B, T, H, K, V;
    bool state;
    bool p6tc = false; /* KDA bf16's backward: pass 6 on tensor cores (tc_kda_bwy_bf16, GDN_KDA_BWY=tc) */
};

/* The launches of gdn/libgdn_tc.cu's tc_run, on the emulation. */
template <int GATE, int K>
static void emu_out(const Cfg &c, int NT, float scale, void *q, void *k, void *v, const float *g, void *ws, void *o)
{
    typedef const __nv_bfloat16 *cb;
    const dim3 grid((unsigned)NT, (unsigned)(c.V / TC_C), (unsigned)(c.B * c.H));
    if constexpr (GATE == TC_CHANNEL) {
        if (c.bf16) {
            tc_emu_launch(grid, dim3(TC_GLA_OUT_THREADS), tc_gla_out_bf16_smem(K), [&] {
                tc_gla_out_bf16<K>((cb)q, (cb)k, (cb)v, g, (cb)ws, (__nv_bfloat16 *)o, c.T, c.H, c.V, NT, scale);
            });
            return;
        }
    } else if (c.bf16) {
        tc_emu_launch(grid, dim3(128), tc_out_bf16_smem(K), [&] {
            tc_out_bf16<GATE, K>((cb)q, (cb)k, (cb)v, g, (cb)ws, (__nv_bfloat16 *)o, c.T, c.H, c.V, NT, scale);
        });
        return;
    }
    tc_emu_launch(grid, dim3(256), tc_out_f32_smem(K, GATE), [&] {
        tc_out_f32<GATE, K>((const float *)q, (const float *)k, (const float *)v, g, (const float *)ws, (float *)o, c.T,
                            c.H, c.V, NT, scale);
    });
}

template <int GATE>
static void emu_run(const Cfg &c, float scale, void *q, void *k, void *v, const float *g, const float *S0, void *o,
                    float *ST, void *ws)
{
    const int NT = (c.T + TC_C - 1) / TC_C;
    const dim3 grid((unsigned)(c.V / TC_C), (unsigned)(c.K / TC_C), (unsigned)(c.B * c.H));
    if (c.bf16)
        tc_emu_launch(grid, dim3(128), tc_state_bf16_smem(GATE), [&] {
            tc_state_bf16<GATE>((const __nv_bfloat16 *)k, (const __nv_bfloat16 *)v, g, S0, (__nv_bfloat16 *)ws, ST, c.T,
                                c.H, c.K, c.V, NT);
        });
    else
        tc_emu_launch(grid, dim3(256), tc_state_f32_smem(GATE), [&] {
            tc_state_f32<GATE>((const float *)k, (const float *)v, g, S0, (float *)ws, ST, c.T, c.H, c.K, c.V, NT);
        });
    if (NT == 0) return;
    switch (c.K) {
    case 64: emu_out<GATE, 64>(c, NT, scale, q, k, v, g, ws, o); break;
    case 128: emu_out<GATE, 128>(c, NT, scale, q, k, v, g, ws, o); break;
    case 256:
        if constexpr (GATE != TC_CHANNEL) emu_out<GATE, 256>(c, NT, scale, q, k, v, g, ws, o);
        break;
    }
}

/* The launches of gdn/libgdn_tc.cu's tc_run_gdn (PC: KDA), on the emulation; ws is laid out by
 * tc_gdn_layout. */
template <int K, bool PC>
static void emu_run_gdn(const Cfg &c, float scale, void *q, void *k, void *v, void *beta, const float *g,
                        const float *S0, void *o, float *ST, void *wsp)
{
    const int NT = (c.T + TC_C - 1) / TC_C;
    const tc_gdn_ws l = tc_gdn_layout(c.bf16, (long long)c.B * c.H, c.T, K, c.V);
    unsigned char *ws = (unsigned char *)wsp;
    const dim3 grid_c((unsigned)NT, (unsigned)(c.B * c.H)), grid_s((unsigned)(c.V / TC_C), (unsigned)(c.B * c.H));
    const dim3 grid_o((unsigned)NT, (unsigned)(c.V / TC_C), (unsigned)(c.B * c.H));
    if (c.bf16) {
        typedef const __nv_bfloat16 *cb;
        if (NT > 0)
            tc_emu_launch(grid_c, dim3(128), tc_gdn_prep_bf16_smem(K, PC), [&] {
                tc_gdn_prep_bf16<K, PC>((cb)k, (cb)v, (cb)beta, g, (__nv_bfloat16 *)(ws + l.w), (float *)(ws + l.u0),
                                        c.T, c.H, c.V, NT);
            });
        tc_emu_launch(grid_s, dim3(2 * K), tc_gdn_state_bf16_smem(K, PC), [&] {
            tc_gdn_state_bf16<K, PC>((cb)k, g, S0, (cb)(ws + l.w), (const float *)(ws + l.u0),
                                     (__nv_bfloat16 *)(ws + l.hs), (__nv_bfloat16 *)(ws + l.u),
                                     (__nv_bfloat16 *)(ws + l.u_lo), ST, c.T, c.H, c.V, NT);
        });
        if (NT > 0 && PC)
            tc_emu_launch(grid_o, dim3(TC_GLA_OUT_THREADS), tc_gla_out_bf16_smem(K, true), [&] {
                tc_gla_out_bf16<K, true>((cb)q, (cb)k, (cb)(ws + l.u), g, (cb)(ws + l.hs), (__nv_bfloat16 *)o, c.T, c.H,
                                         c.V, NT, scale, (cb)(ws + l.u_lo));
            });
        else if (NT > 0)
            tc_emu_launch(grid_o, dim3(128), tc_out_bf16_smem(K, true), [&] {
                tc_out_bf16<true, K, true>((cb)q, (cb)k, (cb)(ws + l.u), g, (cb)(ws + l.hs), (__nv_bfloat16 *)o, c.T,
                                           c.H, c.V, NT, scale, (cb)(ws + l.u_lo));
            });
        return;
    }
    if (NT > 0)
        tc_emu_launch(grid_c, dim3(256), tc_gdn_prep_f32_smem(K, PC), [&] {
            tc_gdn_prep_f32<K, PC>((const float *)k, (const float *)v, (const float *)beta, g, (float *)(ws + l.w),
                                   (float *)(ws + l.u0), c.T, c.H, c.V, NT);
        });
    tc_emu_launch(grid_s, dim3(256), tc_gdn_state_f32_smem(K, PC), [&] {
        tc_gdn_state_f32<K, PC>((const float *)k, g, S0, (const float *)(ws + l.w), (const float *)(ws + l.u0),
                                (float *)(ws + l.hs), (float *)(ws + l.u), ST, c.T, c.H, c.V, NT);
    });
    if (NT > 0)
        tc_emu_launch(grid_o, dim3(256), tc_out_f32_smem(K, PC ? TC_CHANNEL : TC_SCALAR), [&] {
            tc_out_f32<PC ? TC_CHANNEL : TC_SCALAR, K>((const float *)q, (const float *)k, (const float *)(ws + l.u), g,
                                                       (const float *)(ws + l.hs), (float *)o, c.T, c.H, c.V, NT,
                                                       scale);
        });
}

/* Every member's launches; beta is used by GDN only. */
static void emu_any(const Cfg &c, float scale, void *q, void *k, void *v, void *beta, const float *g, const float *S0,
                    void *o, float *ST, void *ws)
{
    if (c.f == GDN_GDN) {
        switch (c.K) {
        case 64: emu_run_gdn<64, false>(c, scale, q, k, v, beta, g, S0, o, ST, ws); break;
        case 128: emu_run_gdn<128, false>(c, scale, q, k, v, beta, g, S0, o, ST, ws); break;
        case 256: emu_run_gdn<256, false>(c, scale, q, k, v, beta, g, S0, o, ST, ws); break;
        }
    } else if (c.f == GDN_KDA) {
        if (c.K == 64)
            emu_run_gdn<64, true>(c, scale, q, k, v, beta, g, S0, o, ST, ws);
        else
            emu_run_gdn<128, true>(c, scale, q, k, v, beta, g, S0, o, ST, ws);
    } else if (c.f == GDN_GLA) {
        emu_run<TC_CHANNEL>(c, scale, q, k, v, g, S0, o, ST, ws);
    } else if (c.f == GDN_SSD) {
        emu_run<TC_SCALAR>(c, scale, q, k, v, g, S0, o, ST, ws);
    } else {
        emu_run<TC_UNGATED>(c, scale, q, k, v, nullptr, S0, o, ST, ws);
    }
}

/* Workspace bytes of a call (gdn/libgdn_tc.cu's gdn_cuda_fwd_tc_workspace). */
static size_t ws_bytes(const Cfg &c)
{
    if (c.f == GDN_GDN || c.f == GDN_KDA)
        return (size_t)tc_gdn_layout(c.bf16, (long long)c.B * c.H, c.T, c.K, c.V).total;
    return (size_t)c.B * c.H * ((c.T + TC_C - 1) / TC_C) * c.K * c.V * 4;
}

/* The inputs of tests/gpu/test_gdn_tc.cu: normal q, v; unit-norm k rows; log gates in
 * [-0.7, -0.01]; beta in [0.05, 0.95]; S0 ~ 0.3 N(0, 1); all rounded to what the kernel reads. */
static void run_cfg(const Cfg &c)
{
    const auto t_start = std::chrono::steady_clock::now();
    const bool bf = c.bf16, gated = c.f != GDN_LINEAR, delta = c.f == GDN_GDN || c.f == GDN_KDA;
    const size_t es = bf ? 2 : 4, rows = (size_t)c.B * c.T * c.H, nS = (size_t)c.B * c.H * c.K * c.V;
    const size_t ng = gdn_family_per_channel(c.f) ? rows * c.K : rows; /* GLA, KDA: a gate per key channel */
    uint64_t s = 0x7c0000u + (uint64_t)c.f * 1000 + (uint64_t)c.T * 7 + (uint64_t)c.K * 3 + (uint64_t)c.V + bf;
    Buf q, k, v, g, S0, bt;
    q.init(rows * c.K, es, 0xff, 0), k.init(rows * c.K, es, 0xff, 0), v.init(rows * c.V, es, 0xff, 0);
    g.init(ng, 4, 0xff, 0), S0.init(nS, 4, 0xff, 0), bt.init(rows, es, 0xff, 0);
    std::vector<double> qd(rows * c.K), kd(rows * c.K), vd(rows * c.V), gd(ng), S0d(nS), bd(rows);
    for (size_t i = 0; i < qd.size(); i++) qd[i] = put(q, i, rng_normal(&s), bf);
    put_unit_rows(k, kd, rows, c.K, &s, bf);
    for (size_t i = 0; i < vd.size(); i++) vd[i] = put(v, i, rng_normal(&s), bf);
    for (size_t i = 0; i < gd.size(); i++) gd[i] = put(g, i, -0.7 + 0.69 * rng_unif(&s), false);
    for (size_t i = 0; i < nS; i++) S0d[i] = put(S0, i, 0.3 * rng_normal(&s), false);
    for (size_t i = 0; i < rows; i++) bd[i] = put(bt, i, 0.05 + 0.9 * rng_unif(&s), bf);

    gdn_dims d = {c.B, c.T, c.H, c.K, c.V};
    std::vector<double> o64(rows * c.V), ST64(nS);
    gdn_in in = {qd.data(),
                 kd.data(),
                 vd.data(),
                 gated ? gd.data() : NULL,
                 delta ? bd.data() : NULL,
                 c.state ? S0d.data() : NULL};
    if (gdn_oracle_fwd(c.f, GDN_EXACT, &d, NAN, &in, o64.data(), ST64.data())) {
        fprintf(stderr, "%s:%d: oracle failed\n", __FILE__, __LINE__);
        exit(2);
    }
    const float scale = (float)(1.0 / sqrt((double)c.K));

    /* two runs, ascending and descending thread order; outputs and workspace start as NaN */
    Buf o[2], ST[2], ws[2];
    bool guards = true;
    for (int r = 0; r < 2; r++) {
        o[r].init(rows * c.V, es, 0xa5, 0xff), ST[r].init(nS, 4, 0xa5, 0xff);
        ws[r].init(ws_bytes(c) / 4, 4, 0xa5, 0xff);
        tc_emu_reverse = r == 1;
        const float *gp = gated ? (const float *)g.p() : nullptr, *S0p = c.state ? (const float *)S0.p() : nullptr;
        emu_any(c, scale, q.p(), k.p(), v.p(), bt.p(), gp, S0p, o[r].p(), (float *)ST[r].p(), ws[r].p());
        guards = guards && o[r].guards_intact(0xa5) && ST[r].guards_intact(0xa5) && ws[r].guards_intact(0xa5);
    }
    tc_emu_reverse = false;
    for (Buf *x : {&o[0], &o[1], &ST[0], &ST[1], &ws[0], &ws[1]}) x->guard_access(true);
    const bool det = o[0].b == o[1].b && ST[0].b == ST[1].b && ws[0].b == ws[1].b;
    const double eo = c.T == 0 ? 0 : relrms(o64, get(o[0], bf)), est = relrms(ST64, get(ST[0], false));
    const double bar = bf ? BAR_BF16 : BAR_F32;
    const bool ok = det && guards && eo <= bar && est <= bar;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    printf("%-6s %-4s B%d T%-4d H%d K%-3d V%-3d S0 %s | o %8.2e  ST %8.2e | det %s guards %s | %5.2fs %s\n",
           gdn_family_name(c.f), bf ? "bf16" : "f32", c.B, c.T, c.H, c.K, c.V, c.state ? "y" : "n", eo, est,
           det ? "ok" : "NO!", guards ? "ok" : "HIT!", secs, ok ? "ok" : "FAIL");
    char what[96];
    snprintf(what, sizeof what, "fwd %s %s B%d T%d H%d K%d V%d S0 %s", gdn_family_name(c.f), bf ? "bf16" : "f32", c.B,
             c.T, c.H, c.K, c.V, c.state ? "y" : "n");
    hash_line(what, {&o[0], &ST[0], &ws[0]});
    fflush(stdout);
    g_fail += !ok;
}

// ---- the backward (gdn/chunk_bwd_tc.cuh: linear attention and SSD, bf16) --------------------------

/* pass 3, 4 or 5: tc_bout_bf16 at the input width kin */
template <int GATED, bool REV>
static void emu_bout(int kin, const Cfg &c, int NT, int vout, const void *x, const void *y, const void *z,
                     const float *g, const void *sp, void *out, const void *dx, float *dot, float scale, float hscale)
{
    typedef const __nv_bfloat16 *cb;
    const dim3 grid((unsigned)NT, (unsigned)(vout / TC_C), (unsigned)(c.B * c.H));
    auto go = [&](auto kk) {
        constexpr int KIN = decltype(kk)::value;
        tc_emu_launch(grid, dim3(128), tc_bout_bf16_smem(KIN), [&] {
            tc_bout_bf16<GATED, KIN, REV>((cb)x, (cb)y, (cb)z, g, (cb)sp, (__nv_bfloat16 *)out, (cb)dx, dot, c.T, c.H,
                                          vout, NT, scale, hscale);
        });
    };
    if (kin == 64) go(std::integral_constant<int, 64>());
    if (kin == 128) go(std::integral_constant<int, 128>());
    if (kin == 256) go(std::integral_constant<int, 256>());
}

/* pass 3, 4 or 5 in fp32: tc_bout_f32 at the input width kin */
template <int GATE, bool REV>
static void emu_bout_f32(int kin, const Cfg &c, int NT, int vout, const void *x, const void *y, const void *z,
                         const float *g, const float *sp, void *out, const void *dx, float *dot, float scale,
                         float hscale)
{
    const dim3 grid((unsigned)NT, (unsigned)(vout / TC_C), (unsigned)(c.B * c.H));
    auto go = [&](auto kk) {
        constexpr int KIN = decltype(kk)::value;
        tc_emu_launch(grid, dim3(256), tc_out_f32_smem(KIN, GATE), [&] {
            tc_bout_f32<GATE, KIN, REV>((const float *)x, (const float *)y, (const float *)z, g, sp, (float *)out,
                                        (const float *)dx, dot, c.T, c.H, vout, NT, scale, hscale);
        });
    };
    if (kin == 64) go(std::integral_constant<int, 64>());
    if (kin == 128) go(std::integral_constant<int, 128>());
    if (kin == 256) go(std::integral_constant<int, 256>());
}

/* gdn/libgdn_tc.cu's tc_run_bwd (bf16) and tc_run_bwd_f32, on the emulation */
template <int GATE>
static void emu_bwd(const Cfg &c, float scale, const void *q, const void *k, const void *v, const float *g,
                    const float *S0, const void *dO, const float *dST, void *dq, void *dk, void *dv, float *dg,
                    float *dS0, float *ws)
{
    typedef const __nv_bfloat16 *cb;
    const int NT = (c.T + TC_C - 1) / TC_C;
    const tc_bwd_ws W = tc_bwd_layout((long long)c.B * c.H, c.T, c.K, c.V);
    float *st = ws + W.st, *qdot = ws + W.qdot, *kdot = ws + W.kdot;
    const dim3 grid((unsigned)(c.V / TC_C), (unsigned)(c.K / TC_C), (unsigned)(c.B * c.H));
    constexpr bool G = GATE == TC_SCALAR;
    if (!c.bf16) {
        float *h_vk = ws + W.h_kv, *dh_kv = ws + W.dh_kv, *dh_vk = ws + W.dh_vk;
        tc_emu_launch(grid, dim3(256), tc_state_f32_smem(GATE), [&] {
            tc_bscan_f32<GATE, false, TC_PLANES_VK>((const float *)k, (const float *)v, g, S0, nullptr, h_vk,
                                                    G ? st : nullptr, c.T, c.H, c.K, c.V, NT, scale);
        });
        tc_emu_launch(grid, dim3(256), tc_state_f32_smem(GATE), [&] {
            tc_bscan_f32<GATE, true, TC_PLANES_KV | TC_PLANES_VK>((const float *)q, (const float *)dO, g, dST, dh_kv,
                                                                  dh_vk, dS0, c.T, c.H, c.K, c.V, NT, scale);
        });
        if (NT == 0) return;
        emu_bout_f32<GATE, false>(c.V, c, NT, c.K, dO, v, k, g, h_vk, dq, nullptr, nullptr, scale, scale);
        emu_bout_f32<GATE, true>(c.V, c, NT, c.K, v, dO, q, g, dh_vk, dk, nullptr, nullptr, scale, 1.f);
        emu_bout_f32<GATE, true>(c.K, c, NT, c.V, k, q, dO, g, dh_kv, dv, nullptr, nullptr, scale, 1.f);
        return; /* linear attention only: no dg */
    } else {
        __nv_bfloat16 *hkv = (__nv_bfloat16 *)(ws + W.h_kv), *dhkv = (__nv_bfloat16 *)(ws + W.dh_kv),
                      *dhvk = (__nv_bfloat16 *)(ws + W.dh_vk);
        tc_emu_launch(grid, dim3(128), tc_scan_bf16_smem(), [&] {
            tc_scan_bf16<GATE, false, TC_PLANES_KV>((cb)k, (cb)v, g, S0, nullptr, hkv, G ? st : nullptr, c.T, c.H, c.K,
                                                    c.V, NT, scale);
        });
        tc_emu_launch(grid, dim3(128), tc_scan_bf16_smem(), [&] {
            tc_scan_bf16<GATE, true, TC_PLANES_KV | TC_PLANES_VK>((cb)q, (cb)dO, g, dST, dhvk, dhkv, dS0, c.T, c.H, c.K,
                                                                  c.V, NT, scale);
        });
        if (NT == 0) return;
        emu_bout<G, false>(c.V, c, NT, c.K, dO, v, k, g, hkv, dq, q, G ? qdot : nullptr, scale, scale);
        emu_bout<G, true>(c.V, c, NT, c.K, v, dO, q, g, dhkv, dk, k, G ? kdot : nullptr, scale, 1.f);
        emu_bout<G, true>(c.K, c, NT, c.V, k, q, dO, g, dhvk, dv, nullptr, nullptr, scale, 1.f);
    }
    if (G)
        tc_emu_launch(dim3((unsigned)(c.B * c.H)), dim3(256), 0,
                      [&] { tc_ssd_dg(qdot, kdot, c.K / TC_C, dST, st, dg, c.T, c.H, c.K, c.V); });
}

/* gdn/libgdn_tc.cu's tc_run_bwd_gla_f32, on the emulation */
static void emu_bwd_gla_f32(const Cfg &c, float scale, const float *q, const float *k, const float *v, const float *g,
                            const float *S0, const float *dO, const float *dST, float *dq, float *dk, float *dv,
                            float *dg, float *dS0, float *ws)
{
    const int NT = (c.T + TC_C - 1) / TC_C;
    const tc_bwd_ws W = tc_bwd_layout((long long)c.B * c.H, c.T, c.K, c.V, true);
    float *st = dST ? ws + W.st : nullptr, *qdq = ws + W.qdot, *kdk = ws + W.kdot;
    float *hkv = ws + W.h_kv, *dhkv = ws + W.dh_kv;
    const dim3 grid((unsigned)(c.V / TC_C), (unsigned)(c.K / TC_C), (unsigned)(c.B * c.H));
    if (NT > 0 || st)
        tc_emu_launch(grid, dim3(256), tc_state_f32_smem(TC_CHANNEL), [&] {
            tc_bscan_f32<TC_CHANNEL, false, TC_PLANES_KV>(k, v, g, S0, hkv, nullptr, st, c.T, c.H, c.K, c.V, NT, scale);
        });
    tc_emu_launch(grid, dim3(256), tc_state_f32_smem(TC_CHANNEL), [&] {
        tc_bscan_f32<TC_CHANNEL, true, TC_PLANES_KV>(q, dO, g, dST, dhkv, nullptr, dS0, c.T, c.H, c.K, c.V, NT, scale);
    });
    if (NT == 0) return;
    const dim3 gq((unsigned)NT, (unsigned)(c.K / TC_C), (unsigned)(c.B * c.H));
    auto bdq = [&](auto vv) {
        constexpr int KIN = decltype(vv)::value;
        tc_emu_launch(gq, dim3(256), tc_gla_bdq_f32_smem(KIN), [&] {
            tc_gla_bdq_f32<KIN, false>(dO, v, k, g, hkv, dq, q, qdq, c.T, c.H, c.K, NT, scale, scale);
        });
        tc_emu_launch(gq, dim3(256), tc_gla_bdq_f32_smem(KIN),
                      [&] { tc_gla_bdq_f32<KIN, true>(v, dO, q, g, dhkv, dk, k, kdk, c.T, c.H, c.K, NT, scale, 1.f); });
    };
    if (c.V == 64) bdq(std::integral_constant<int, 64>());
    if (c.V == 128) bdq(std::integral_constant<int, 128>());
    if (c.V == 256) bdq(std::integral_constant<int, 256>());
    const dim3 gv((unsigned)NT, (unsigned)(c.V / TC_C), (unsigned)(c.B * c.H));
    auto bdv = [&](auto kk) {
        constexpr int K = decltype(kk)::value;
        tc_emu_launch(gv, dim3(256), tc_out_f32_smem(K, TC_CHANNEL),
                      [&] { tc_gla_bdv_f32<K>(k, q, dO, g, dhkv, dv, c.T, c.H, c.V, NT, scale); });
    };
    if (c.K == 64) bdv(std::integral_constant<int, 64>());
    if (c.K == 128) bdv(std::integral_constant<int, 128>());
    tc_emu_launch(dim3((unsigned)(c.B * c.H), (unsigned)(c.K / 32)), dim3(256), 0,
                  [&] { tc_gla_dg_local(qdq, kdk, hkv, dhkv, dST, st, dg, c.T, c.H, c.K, c.V, NT); });
}

/* gdn/libgdn_tc.cu's tc_run_bwd_gla (bf16), on the emulation */
static void emu_bwd_gla(const Cfg &c, float scale, const void *q, const void *k, const void *v, const float *g,
                        const float *S0, const void *dO, const float *dST, void *dq, void *dk, void *dv, float *dg,
                        float *dS0, float *ws)
{
    typedef const __nv_bfloat16 *cb;
    if (!c.bf16)
        return emu_bwd_gla_f32(c, scale, (const float *)q, (const float *)k, (const float *)v, g, S0, (const float *)dO,
                               dST, (float *)dq, (float *)dk, (float *)dv, dg, dS0, ws);
    const int NT = (c.T + TC_C - 1) / TC_C;
    const tc_bwd_ws W = tc_bwd_layout((long long)c.B * c.H, c.T, c.K, c.V, true);
    float *st = dST ? ws + W.st : nullptr, *qdq = ws + W.qdot, *kdk = ws + W.kdot;
    __nv_bfloat16 *hkv = (__nv_bfloat16 *)(ws + W.h_kv), *dhkv = (__nv_bfloat16 *)(ws + W.dh_kv),
                  *dhvk = (__nv_bfloat16 *)(ws + W.dh_vk);
    const dim3 grid((unsigned)(c.V / TC_C), (unsigned)(c.K / TC_C), (unsigned)(c.B * c.H));
    if (NT > 0 || st)
        tc_emu_launch(grid, dim3(128), tc_scan_bf16_smem(TC_CHANNEL), [&] {
            tc_scan_bf16<TC_CHANNEL, false, TC_PLANES_KV>((cb)k, (cb)v, g, S0, nullptr, hkv, st, c.T, c.H, c.K, c.V, NT,
                                                          scale);
        });
    tc_emu_launch(grid, dim3(128), tc_scan_bf16_smem(TC_CHANNEL), [&] {
        tc_scan_bf16<TC_CHANNEL, true, TC_PLANES_KV | TC_PLANES_VK>((cb)q, (cb)dO, g, dST, dhvk, dhkv, dS0, c.T, c.H,
                                                                    c.K, c.V, NT, scale);
    });
    if (NT == 0) return;
    const dim3 gq((unsigned)NT, (unsigned)(c.K / TC_C), (unsigned)(c.B * c.H));
    auto bdq = [&](auto vv) {
        constexpr int KIN = decltype(vv)::value;
        tc_emu_launch(gq, dim3(TC_GLA_BDQ_THREADS), tc_gla_bdq_bf16_smem(KIN), [&] {
            tc_gla_bdq_bf16<KIN, false>((cb)dO, (cb)v, (cb)k, g, hkv, (__nv_bfloat16 *)dq, (cb)q, qdq, c.T, c.H, c.K,
                                        NT, scale, scale);
        });
        tc_emu_launch(gq, dim3(TC_GLA_BDQ_THREADS), tc_gla_bdq_bf16_smem(KIN), [&] {
            tc_gla_bdq_bf16<KIN, true>((cb)v, (cb)dO, (cb)q, g, dhkv, (__nv_bfloat16 *)dk, (cb)k, kdk, c.T, c.H, c.K,
                                       NT, scale, 1.f);
        });
    };
    if (c.V == 64) bdq(std::integral_constant<int, 64>());
    if (c.V == 128) bdq(std::integral_constant<int, 128>());
    if (c.V == 256) bdq(std::integral_constant<int, 256>());
    const dim3 gv((unsigned)NT, (unsigned)(c.V / TC_C), (unsigned)(c.B * c.H));
    auto bdv = [&](auto kk) {
        constexpr int K = decltype(kk)::value;
        tc_emu_launch(gv, dim3(TC_GLA_OUT_THREADS), tc_gla_out_bf16_smem(K), [&] {
            tc_gla_bdv_bf16<K>((cb)k, (cb)q, (cb)dO, g, dhvk, (__nv_bfloat16 *)dv, c.T, c.H, c.V, NT, scale);
        });
    };
    if (c.K == 64) bdv(std::integral_constant<int, 64>());
    if (c.K == 128) bdv(std::integral_constant<int, 128>());
    tc_emu_launch(dim3((unsigned)(c.B * c.H), (unsigned)(c.K / 32)), dim3(256), 0,
                  [&] { tc_gla_dg(qdq, kdk, dST, st, dg, c.T, c.H, c.K, c.V); });
}

/* gdn/libgdn_tc.cu's tc_run_bwd_gdn (GDN, either dtype), on the emulation; ws laid out by
 * tc_gdn_bwd_layout */
template <int K>
static void emu_bwd_gdn(const Cfg &c, float scale, const void *q, const void *k, const void *v, const void *beta,
                        const float *g, const float *S0, const void *dO, const float *dST, void *dq, void *dk, void *dv,
                        float *dg, float *db, float *dS0, void *wsp)
{
    const int NT = (c.T + TC_C - 1) / TC_C, BH = c.B * c.H;
    const tc_gdn_bws l = tc_gdn_bwd_layout(c.bf16, BH, c.T, K, c.V);
    unsigned char *ws = (unsigned char *)wsp;
    const float *fq = (const float *)q, *fk = (const float *)k, *fv = (const float *)v, *fb = (const float *)beta,
                *fo = (const float *)dO;
    float *W = (float *)(ws + l.f.w), *U0 = (float *)(ws + l.f.u0), *hs = (float *)(ws + l.f.hs);
    float *u = (float *)(ws + l.f.u), *dh = (float *)(ws + l.dh), *du = (float *)(ws + l.du);
    float *dqh = (float *)(ws + l.dqh), *dks = (float *)(ws + l.dks), *hdh = (float *)(ws + l.hdh);
    typedef __nv_bfloat16 bf;
    bf *Wb = (bf *)W, *hsb = (bf *)hs, *ub = (bf *)(ws + l.f.u), *ulb = (bf *)(ws + l.f.u_lo);
    const dim3 grid_c((unsigned)NT, (unsigned)BH), grid_s((unsigned)(c.V / TC_C), (unsigned)BH);
    if (NT > 0 && c.bf16) {
        tc_emu_launch(grid_c, dim3(128), tc_gdn_prep_bf16_smem(K), [&] {
            tc_gdn_prep_bf16<K>((const bf *)k, (const bf *)v, (const bf *)beta, g, Wb, U0, c.T, c.H, c.V, NT);
        });
        tc_emu_launch(grid_s, dim3(2 * K), tc_gdn_state_bf16_smem(K), [&] {
            tc_gdn_state_bf16<K, false, true>((const bf *)k, g, S0, Wb, U0, hsb, ub, ulb, nullptr, c.T, c.H, c.V, NT);
        });
    } else if (NT > 0) {
        tc_emu_launch(grid_c, dim3(256), tc_gdn_prep_f32_smem(K),
                      [&] { tc_gdn_prep_f32<K>(fk, fv, fb, g, W, U0, c.T, c.H, c.V, NT); });
        tc_emu_launch(grid_s, dim3(256), tc_gdn_state_f32_smem(K),
                      [&] { tc_gdn_state_f32<K>(fk, g, S0, W, U0, hs, u, nullptr, c.T, c.H, c.V, NT); });
    }
    if (NT > 0 && c.bf16)
        tc_emu_launch(grid_c, dim3(128), tc_gdn_bdu_bf16_smem(K), [&] {
            tc_gdn_bdu_bf16<K>((const bf *)q, (const bf *)k, g, (const bf *)dO, du, c.T, c.H, c.V, scale);
        });
    else if (NT > 0)
        tc_emu_launch(grid_c, dim3(256), tc_gdn_bdu_f32_smem(),
                      [&] { tc_gdn_bdu_f32(fq, fk, g, fo, du, c.T, c.H, K, c.V, scale); });
    if (c.bf16)
        tc_emu_launch(grid_s, dim3(2 * K), tc_gdn_bscan_bf16_smem(K), [&] {
            tc_gdn_bscan_bf16<K>((const bf *)q, (const bf *)k, g, (const bf *)dO, dST, Wb, dh, du, dS0, c.T, c.H, c.V,
                                 NT, scale);
        });
    else
        tc_emu_launch(grid_s, dim3(256), tc_gdn_bscan_f32_smem(K),
                      [&] { tc_gdn_bscan_f32<K>(fq, fk, g, fo, dST, W, dh, du, dS0, c.T, c.H, c.V, NT, scale); });
    if (NT == 0) return;
    const dim3 grid_h((unsigned)(K / TC_C), (unsigned)NT, (unsigned)BH);
    if (c.bf16)
        tc_emu_launch(grid_h, dim3(TC_GDN_BDH_THREADS), tc_gdn_bdh_bf16_smem(), [&] {
            tc_gdn_bdh_bf16(g, (const bf *)dO, hsb, dh, ub, ulb, du, W, dqh, dks, hdh, c.T, c.H, K, c.V, NT, scale);
        });
    else
        tc_emu_launch(grid_h, dim3(256), tc_gdn_bdh_f32_smem(),
                      [&] { tc_gdn_bdh_f32(g, fo, hs, dh, u, du, W, dqh, dks, hdh, c.T, c.H, K, c.V, NT, scale); });
    if (c.bf16)
        tc_emu_launch(grid_c, dim3(256), tc_gdn_bwy_bf16_smem(), [&] {
            tc_gdn_bwy_bf16((const bf *)q, (const bf *)k, (const bf *)v, (const bf *)beta, g, (const bf *)dO, ub, ulb,
                            du, W, dqh, dks, hdh, (bf *)dq, (bf *)dk, (bf *)dv, dg, db, c.T, c.H, K, c.V, NT, scale);
        });
    else
        tc_emu_launch(grid_c, dim3(256), tc_gdn_bwy_f32_smem(), [&] {
            tc_gdn_bwy_f32(fq, fk, fv, fb, g, fo, u, du, W, dqh, dks, hdh, (float *)dq, (float *)dk, (float *)dv, dg,
                           db, c.T, c.H, K, c.V, NT, scale);
        });
}

/* gdn/libgdn_tc.cu's tc_run_bwd_kda (KDA, either dtype), on the emulation; ws laid out by
 * tc_kda_bwd_layout; c.p6tc: bf16's pass 6 on tensor cores (tc_kda_bwy_bf16), as GDN_KDA_BWY=tc */
template <int K>
static void emu_bwd_kda(const Cfg &c, float scale, const void *q, const void *k, const void *v, const void *beta,
                        const float *g, const float *S0, const void *dO, const float *dST, void *dq, void *dk, void *dv,
                        float *dg, float *db, float *dS0, void *wsp)
{
    const int NT = (c.T + TC_C - 1) / TC_C, BH = c.B * c.H;
    const tc_kda_bws l = tc_kda_bwd_layout(c.bf16, BH, c.T, K, c.V);
    unsigned char *ws = (unsigned char *)wsp;
    const float *x[5] = {(const float *)q, (const float *)k, (const float *)v, (const float *)beta, (const float *)dO};
    if (c.bf16 && NT > 0) {
        const long long rows = (long long)BH * c.T;
        const void *src[5] = {q, k, v, beta, dO};
        const unsigned long long at[5] = {l.q, l.k, l.v, l.beta, l.dO};
        const long long len[5] = {rows * K, rows * K, rows * c.V, rows, rows * c.V};
        for (int i = 0; i < 5; i++) {
            if (c.p6tc && (i == 2 || i == 3)) continue; /* v, beta: read as bf16 by tc_kda_bwy_bf16 */
            tc_emu_launch(dim3(4), dim3(256), 0,
                          [&] { tc_kda_widen((const __nv_bfloat16 *)src[i], (float *)(ws + at[i]), len[i]); });
            x[i] = (const float *)(ws + at[i]);
        }
    }
    float *W = (float *)(ws + l.g.f.w), *U0 = (float *)(ws + l.g.f.u0), *hs = (float *)(ws + l.g.f.hs);
    float *u = (float *)(ws + l.g.f.u), *dh = (float *)(ws + l.g.dh), *du = (float *)(ws + l.g.du);
    float *dqh = (float *)(ws + l.g.dqh), *dks = (float *)(ws + l.g.dks), *hdh = (float *)(ws + l.g.hdh);
    const dim3 grid_c((unsigned)NT, (unsigned)BH), grid_s((unsigned)(c.V / TC_C), (unsigned)BH);
    typedef __nv_bfloat16 bf;
    bf *Wb = (bf *)W;
    if (NT > 0 && c.bf16) {
        const long long rows = (long long)BH * c.T, nst = (long long)BH * NT;
        bf *hsb = (bf *)dh, *ub = (bf *)du, *ulb = ub + rows * c.V;
        tc_emu_launch(grid_c, dim3(128), tc_gdn_prep_bf16_smem(K, true), [&] {
            tc_gdn_prep_bf16<K, true>((const bf *)k, (const bf *)v, (const bf *)beta, g, Wb, U0, c.T, c.H, c.V, NT);
        });
        tc_emu_launch(grid_s, dim3(2 * K), tc_gdn_state_bf16_smem(K, true), [&] {
            tc_gdn_state_bf16<K, true, true>((const bf *)k, g, S0, Wb, U0, hsb, ub, ulb, nullptr, c.T, c.H, c.V, NT);
        });
        tc_emu_launch(dim3(4), dim3(256), 0, [&] { tc_kda_unsplit(hsb, hs, nst * K * c.V, (long long)K * c.V, c.V); });
        tc_emu_launch(dim3(4), dim3(256), 0, [&] { tc_kda_unsplit(ub, u, rows * c.V, rows * c.V, 0); });
    } else if (NT > 0) {
        tc_emu_launch(grid_c, dim3(256), tc_gdn_prep_f32_smem(K, true),
                      [&] { tc_gdn_prep_f32<K, true>(x[1], x[2], x[3], g, W, U0, c.T, c.H, c.V, NT); });
        tc_emu_launch(grid_s, dim3(256), tc_gdn_state_f32_smem(K, true),
                      [&] { tc_gdn_state_f32<K, true>(x[1], g, S0, W, U0, hs, u, nullptr, c.T, c.H, c.V, NT); });
    }
    if (NT > 0) {
        tc_emu_launch(grid_c, dim3(256), tc_kda_bdu_f32_smem(),
                      [&] { tc_kda_bdu_f32(x[0], x[1], g, x[4], du, c.T, c.H, K, c.V, scale); });
    }
    if (c.bf16)
        tc_emu_launch(grid_s, dim3(2 * K), tc_gdn_bscan_bf16_smem(K, true), [&] {
            tc_gdn_bscan_bf16<K, true>((const bf *)q, (const bf *)k, g, (const bf *)dO, dST, Wb, dh, du, dS0, c.T, c.H,
                                       c.V, NT, scale);
        });
    else
        tc_emu_launch(grid_s, dim3(256), tc_gdn_bscan_f32_smem(K, true), [&] {
            tc_gdn_bscan_f32<K, true>(x[0], x[1], g, x[4], dST, W, dh, du, dS0, c.T, c.H, c.V, NT, scale);
        });
    if (NT == 0) return;
    const dim3 grid_h((unsigned)(K / TC_C), (unsigned)NT, (unsigned)BH);
    tc_emu_launch(grid_h, dim3(256), tc_kda_bdh_f32_smem(),
                  [&] { tc_kda_bdh_f32(g, x[4], hs, dh, u, du, W, dqh, dks, hdh, c.T, c.H, K, c.V, NT, scale); });
    if (c.bf16 && c.p6tc)
        tc_emu_launch(grid_c, dim3(256), tc_kda_bwy_bf16_smem(K), [&] {
            tc_kda_bwy_bf16<K>((const bf *)q, (const bf *)k, (const bf *)v, (const bf *)beta, g, (const bf *)dO, u, du,
                               W, dqh, dks, hdh, (bf *)dq, (bf *)dk, (bf *)dv, dg, db, c.T, c.H, c.V, NT, scale);
        });
    else if (c.bf16)
        tc_emu_launch(grid_c, dim3(256), tc_kda_bwy_f32_smem(K), [&] {
            tc_kda_bwy_f32<K, bf>(x[0], x[1], x[2], x[3], g, x[4], u, du, W, dqh, dks, hdh, (bf *)dq, (bf *)dk,
                                  (bf *)dv, dg, db, c.T, c.H, c.V, NT, scale);
        });
    else
        tc_emu_launch(grid_c, dim3(256), tc_kda_bwy_f32_smem(K), [&] {
            tc_kda_bwy_f32<K, float>(x[0], x[1], x[2], x[3], g, x[4], u, du, W, dqh, dks, hdh, (float *)dq, (float *)dk,
                                     (float *)dv, dg, db, c.T, c.H, c.V, NT, scale);
        });
}

/* The backward of one configuration (c.state: S0 and dST both given) against the oracle's
 * gradients, at the bf16 bar; two runs in opposite thread orders must agree bit for bit, every
 * output starts as NaN and keeps its guards. */
static void run_bwd_cfg(const Cfg &c)
{
    const auto t_start = std::chrono::steady_clock::now();
    const bool kda = c.f == GDN_KDA, delta = c.f == GDN_GDN || kda, gated = c.f != GDN_LINEAR, bf = c.bf16,
               pc = c.f == GDN_GLA;
    const size_t es = bf ? 2 : 4;
    const size_t rows = (size_t)c.B * c.T * c.H, nS = (size_t)c.B * c.H * c.K * c.V;
    const size_t ng = (pc || kda) ? rows * c.K : rows;
    uint64_t s = 0x5b0000u + (uint64_t)c.f * 1000 + (uint64_t)c.T * 7 + (uint64_t)c.K * 3 + (uint64_t)c.V;
    Buf q, k, v, g, S0, dO, dST, bt;
    q.init(rows * c.K, es, 0xff, 0), k.init(rows * c.K, es, 0xff, 0), v.init(rows * c.V, es, 0xff, 0);
    g.init(ng, 4, 0xff, 0), S0.init(nS, 4, 0xff, 0), dO.init(rows * c.V, es, 0xff, 0), dST.init(nS, 4, 0xff, 0);
    bt.init(rows, es, 0xff, 0);
    std::vector<double> qd(rows * c.K), kd(rows * c.K), vd(rows * c.V), gd(ng), S0d(nS), dOd(rows * c.V), dSTd(nS);
    for (size_t i = 0; i < qd.size(); i++) qd[i] = put(q, i, rng_normal(&s), bf);
    put_unit_rows(k, kd, rows, c.K, &s, bf);
    for (size_t i = 0; i < vd.size(); i++) vd[i] = put(v, i, rng_normal(&s), bf);
    for (size_t i = 0; i < gd.size(); i++) gd[i] = put(g, i, -0.7 + 0.69 * rng_unif(&s), false);
    for (size_t i = 0; i < nS; i++) S0d[i] = put(S0, i, 0.3 * rng_normal(&s), false);
    for (size_t i = 0; i < dOd.size(); i++) dOd[i] = put(dO, i, rng_normal(&s), bf);
    for (size_t i = 0; i < nS; i++) dSTd[i] = put(dST, i, 0.3 * rng_normal(&s), false);
    std::vector<double> bd(rows), db64(rows);
    for (size_t i = 0; i < rows; i++) bd[i] = put(bt, i, 0.05 + 0.9 * rng_unif(&s), bf);

    gdn_dims d = {c.B, c.T, c.H, c.K, c.V};
    std::vector<double> dq64(rows * c.K), dk64(rows * c.K), dv64(rows * c.V), dg64(ng), dS064(nS);
    gdn_in in = {qd.data(),
                 kd.data(),
                 vd.data(),
                 gated ? gd.data() : NULL,
                 delta ? bd.data() : NULL,
                 c.state ? S0d.data() : NULL};
    gdn_grad gr = {dq64.data(), dk64.data(), dv64.data(), gated ? dg64.data() : NULL, delta ? db64.data() : NULL,
                   dS064.data()};
    if (gdn_oracle_bwd(c.f, GDN_EXACT, &d, NAN, &in, dOd.data(), c.state ? dSTd.data() : NULL, &gr)) {
        fprintf(stderr, "%s:%d: oracle backward failed\n", __FILE__, __LINE__);
        exit(2);
    }
    const float scale = (float)(1.0 / sqrt((double)c.K));
    Buf dq[2], dk[2], dv[2], dg[2], dS0[2], ws[2], db[2];
    bool guards = true;
    for (int r = 0; r < 2; r++) {
        dq[r].init(rows * c.K, es, 0xa5, 0xff), dk[r].init(rows * c.K, es, 0xa5, 0xff);
        dv[r].init(rows * c.V, es, 0xa5, 0xff), dg[r].init(ng, 4, 0xa5, 0xff), dS0[r].init(nS, 4, 0xa5, 0xff);
        db[r].init(rows, 4, 0xa5, 0xff);
        ws[r].init(kda     ? (size_t)tc_kda_bwd_layout(bf, (long long)c.B * c.H, c.T, c.K, c.V).total / 4
                   : delta ? (size_t)tc_gdn_bwd_layout(bf, (long long)c.B * c.H, c.T, c.K, c.V).total / 4
                           : (size_t)tc_bwd_layout((long long)c.B * c.H, c.T, c.K, c.V, pc).total,
                   4, 0xa5, 0xff);
        tc_emu_reverse = r == 1;
        const float *gp = gated ? (const float *)g.p() : nullptr, *S0p = c.state ? (const float *)S0.p() : nullptr;
        const float *dSTp = c.state ? (const float *)dST.p() : nullptr;
        if (kda) {
            auto run = [&](auto kk) {
                emu_bwd_kda<decltype(kk)::value>(c, scale, q.p(), k.p(), v.p(), bt.p(), gp, S0p, dO.p(), dSTp,
                                                 dq[r].p(), dk[r].p(), dv[r].p(), (float *)dg[r].p(),
                                                 (float *)db[r].p(), (float *)dS0[r].p(), ws[r].p());
            };
            if (c.K == 64) run(std::integral_constant<int, 64>());
            if (c.K == 128) run(std::integral_constant<int, 128>());
        } else if (delta) {
            auto run = [&](auto kk) {
                emu_bwd_gdn<decltype(kk)::value>(c, scale, q.p(), k.p(), v.p(), bt.p(), gp, S0p, dO.p(), dSTp,
                                                 dq[r].p(), dk[r].p(), dv[r].p(), (float *)dg[r].p(),
                                                 (float *)db[r].p(), (float *)dS0[r].p(), ws[r].p());
            };
            if (c.K == 64) run(std::integral_constant<int, 64>());
            if (c.K == 128) run(std::integral_constant<int, 128>());
            if (c.K == 256) run(std::integral_constant<int, 256>());
        } else if (pc)
            emu_bwd_gla(c, scale, q.p(), k.p(), v.p(), gp, S0p, dO.p(), dSTp, dq[r].p(), dk[r].p(), dv[r].p(),
                        (float *)dg[r].p(), (float *)dS0[r].p(), (float *)ws[r].p());
        else if (gated)
            emu_bwd<TC_SCALAR>(c, scale, q.p(), k.p(), v.p(), gp, S0p, dO.p(), dSTp, dq[r].p(), dk[r].p(), dv[r].p(),
                               (float *)dg[r].p(), (float *)dS0[r].p(), (float *)ws[r].p());
        else
            emu_bwd<TC_UNGATED>(c, scale, q.p(), k.p(), v.p(), nullptr, S0p, dO.p(), dSTp, dq[r].p(), dk[r].p(),
                                dv[r].p(), nullptr, (float *)dS0[r].p(), (float *)ws[r].p());
        for (Buf *x : {&dq[r], &dk[r], &dv[r], &dg[r], &dS0[r], &ws[r], &db[r]})
            guards = guards && x->guards_intact(0xa5);
    }
    tc_emu_reverse = false;
    bool det = true;
    for (int i = 0; i < 7; i++) {
        Buf *a[7] = {&dq[0], &dk[0], &dv[0], &dg[0], &dS0[0], &ws[0], &db[0]},
            *b[7] = {&dq[1], &dk[1], &dv[1], &dg[1], &dS0[1], &ws[1], &db[1]};
        a[i]->guard_access(true), b[i]->guard_access(true);
        if ((i == 3 && !gated) || (i == 6 && !delta)) continue; /* dg, db: not written */
        det = det && a[i]->b == b[i]->b;
    }
    const bool t0 = c.T == 0;
    const double eq = t0 ? 0 : relrms(dq64, get(dq[0], bf)), ek = t0 ? 0 : relrms(dk64, get(dk[0], bf));
    const double ev = t0 ? 0 : relrms(dv64, get(dv[0], bf)), es0 = relrms(dS064, get(dS0[0], false));
    const double eg = (!gated || t0) ? 0 : relrms(dg64, get(dg[0], false));
    const double eb = (!delta || t0) ? 0 : relrms(db64, get(db[0], false));
    const double worst = fmax(fmax(fmax(eq, ek), eb), fmax(fmax(ev, es0), eg));
    const bool ok = det && guards && worst <= (bf ? BAR_BF16 : BAR_F32);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    printf(
        "bwd %-6s %-4s B%d T%-4d H%d K%-3d V%-3d S0 %s | dq %8.2e dk %8.2e dv %8.2e dg %8.2e db %8.2e dS0 %8.2e | det "
        "%s "
        "guards %s | %5.2fs %s\n",
        c.p6tc ? "kda-p6tc" : gdn_family_name(c.f), bf ? "bf16" : "f32", c.B, c.T, c.H, c.K, c.V, c.state ? "y" : "n",
        eq, ek, ev, eg, eb, es0, det ? "ok" : "NO!", guards ? "ok" : "HIT!", secs, ok ? "ok" : "FAIL");
    char what[96];
    snprintf(what, sizeof what, "bwd %s %s B%d T%d H%d K%d V%d S0 %s", c.p6tc ? "kda-p6tc" : gdn_family_name(c.f),
             bf ? "bf16" : "f32", c.B, c.T, c.H, c.K, c.V, c.state ? "y" : "n");
    if (delta)
        hash_line(what, {&dq[0], &dk[0], &dv[0], &dg[0], &dS0[0], &ws[0], &db[0]});
    else
        hash_line(what, {&dq[0], &dk[0], &dv[0], &dg[0], &dS0[0], &ws[0]});
    fflush(stdout);
    g_fail += !ok;
}

/* One NaN in q, k, v, g or beta (GDN) at step t* = 70 (chunk 1) of batch 0, head 0: the NaN
 * positions of o and ST against the oracle's. The fp32 path must match them exactly; the bf16
 * path may add NaN only where the headers say -- a NaN in v_j (and for GDN in k_j, g_j, beta_j)
 * reaches rows i < j of its chunk through 0 * NaN in P V, T X -- and never in an earlier chunk. */
static void run_nan(gdn_family f, bool bf, int which)
{
    const char *names[5] = {"q", "k", "v", "g", "beta"};
    const bool gated = f != GDN_LINEAR, delta = f == GDN_GDN || f == GDN_KDA;
    if ((which == 3 && !gated) || (which == 4 && !delta)) return;
    const int B = 1, T = 150, H = 2, K = 64, V = 64, ts = 70;
    const size_t es = bf ? 2 : 4, rows = (size_t)B * T * H, nS = (size_t)B * H * K * V;
    const size_t ng = gdn_family_per_channel(f) ? rows * K : rows;
    uint64_t s = 99;
    Buf q, k, v, g, bt;
    q.init(rows * K, es, 0xff, 0), k.init(rows * K, es, 0xff, 0), v.init(rows * V, es, 0xff, 0);
    g.init(ng, 4, 0xff, 0), bt.init(rows, es, 0xff, 0);
    std::vector<double> qd(rows * K), kd(rows * K), vd(rows * V), gd(ng), bd(rows);
    const size_t rqk = (size_t)ts * H * K + 3, rv = (size_t)ts * H * V + 5;
    const size_t rg = gdn_family_per_channel(f) ? (size_t)ts * H * K + 7 : (size_t)ts * H;
    for (size_t i = 0; i < qd.size(); i++) qd[i] = put(q, i, which == 0 && i == rqk ? NAN : rng_normal(&s), bf);
    for (size_t i = 0; i < kd.size(); i++)
        kd[i] = put(k, i, which == 1 && i == rqk ? NAN : rng_normal(&s) / sqrt((double)K), bf);
    for (size_t i = 0; i < vd.size(); i++) vd[i] = put(v, i, which == 2 && i == rv ? NAN : rng_normal(&s), bf);
    for (size_t i = 0; i < gd.size(); i++)
        gd[i] = put(g, i, which == 3 && i == rg ? NAN : -0.7 + 0.69 * rng_unif(&s), false);
    for (size_t i = 0; i < bd.size(); i++)
        bd[i] = put(bt, i, which == 4 && i == (size_t)ts * H ? NAN : 0.05 + 0.9 * rng_unif(&s), bf);
    gdn_dims d = {B, T, H, K, V};
    std::vector<double> o64(rows * V), ST64(nS);
    gdn_in in = {qd.data(), kd.data(), vd.data(), gated ? gd.data() : NULL, delta ? bd.data() : NULL, NULL};
    gdn_oracle_fwd(f, GDN_EXACT, &d, NAN, &in, o64.data(), ST64.data());
    const Cfg c = {f, bf, B, T, H, K, V, false};
    Buf o, ST, ws;
    o.init(rows * V, es, 0xa5, 0xff), ST.init(nS, 4, 0xa5, 0xff), ws.init(ws_bytes(c) / 4, 4, 0xa5, 0xff);
    const float scale = (float)(1.0 / sqrt((double)K)), *gp = gated ? (const float *)g.p() : nullptr;
    emu_any(c, scale, q.p(), k.p(), v.p(), bt.p(), gp, nullptr, o.p(), (float *)ST.p(), ws.p());
    const std::vector<double> og = get(o, bf), sg = get(ST, false);
    const bool documented = bf && (which == 2 || (delta && which != 0));
    size_t missing = 0, extra = 0, extra_allowed = 0, n64 = 0;
    for (size_t i = 0; i < og.size(); i++) {
        const bool a = std::isnan(og[i]), e = std::isnan(o64[i]);
        const int t = (int)(i / ((size_t)H * V));
        n64 += e, missing += e && !a;
        if (a && !e) {
            if (documented && t / TC_C == ts / TC_C && t < ts)
                extra_allowed++;
            else
                extra++;
        }
    }
    for (size_t i = 0; i < nS; i++) {
        const bool a = std::isnan(sg[i]), e = std::isnan(ST64[i]);
        missing += e && !a, extra += a && !e;
    }
    const bool ok = missing == 0 && extra == 0;
    printf("nan    %-6s %-4s NaN in %-4s at t=%d: oracle NaN in o %zu; missing %zu, extra %zu (+%zu documented) %s\n",
           gdn_family_name(f), bf ? "bf16" : "f32", names[which], ts, n64, missing, extra, extra_allowed,
           ok ? "ok" : "FAIL");
    char what[64];
    snprintf(what, sizeof what, "nan %s %s %s", gdn_family_name(f), bf ? "bf16" : "f32", names[which]);
    hash_line(what, {&o, &ST, &ws});
    g_fail += !ok;
}

// ---- dispatch ------------------------------------------------------------------------------------

int main(int argc, char **argv)
{
    bool quick = false, big = false, bwd_only = false; /* bwd: the backward cases alone */
    for (int i = 1; i < argc; i++)
        quick = quick || !strcmp(argv[i], "quick"), big = big || !strcmp(argv[i], "big"),
        bwd_only = bwd_only || !strcmp(argv[i], "bwd"), g_hash = g_hash || !strcmp(argv[i], "hash"),
        g_gdn_only = g_gdn_only || !strcmp(argv[i], "gdn"), g_kda_only = g_kda_only || !strcmp(argv[i], "kda");
    check_bf16();
    check_mma();
    check_ldmatrix();
    check_poison();
    check_shfl();
    check_invert();
    std::vector<Cfg> cfgs;
    if (big) /* the headline size of tests/gpu/test_gdn_tc.cu (minutes here) */
        for (gdn_family f : {GDN_LINEAR, GDN_SSD})
            for (int bf = 1; bf >= 0; bf--) cfgs.push_back({f, (bool)bf, 2, 1000, 4, 128, 128, true});
    for (gdn_family f : {GDN_LINEAR, GDN_SSD, GDN_GLA})
        for (int bf = 1; bf >= 0; bf--) {
            cfgs.push_back({f, (bool)bf, 2, 65, 2, 64, 64, true});
            cfgs.push_back({f, (bool)bf, 1, 0, 1, 64, 128, true});
            cfgs.push_back({f, (bool)bf, 1, 130, 1, 128, 64, false});
            if (quick || big) continue;
            for (int T : {1, 63, 64}) cfgs.push_back({f, (bool)bf, 1, T, 1, 64, 128, true});
            if (f == GDN_GLA) { /* K <= 128 (chunk_fwd_gla_tc.cuh) */
                cfgs.push_back({f, (bool)bf, 1, 65, 1, 128, 256, true});
                cfgs.push_back({f, (bool)bf, 1, 64, 1, 64, 256, false});
                cfgs.push_back({f, (bool)bf, 1, 130, 1, 128, 128, true});
                continue;
            }
            cfgs.push_back({f, (bool)bf, 1, 65, 1, 256, 128, true});
            cfgs.push_back({f, (bool)bf, 1, 64, 1, 64, 256, false});
            cfgs.push_back({f, (bool)bf, 1, 130, 1, 256, 256, true});
        }
    /* GDN: T in {0, 1, 63, 64, 65, 130}, K = V in {64, 128} (one 256), with and without S0, B, H > 1 */
    for (int bf = 1; bf >= 0; bf--) {
        if (big) cfgs.push_back({GDN_GDN, (bool)bf, 2, 1000, 4, 128, 128, true});
        cfgs.push_back({GDN_GDN, (bool)bf, 2, 65, 2, 64, 64, true});
        cfgs.push_back({GDN_GDN, (bool)bf, 1, 0, 1, 64, 128, true});
        cfgs.push_back({GDN_GDN, (bool)bf, 1, 130, 1, 128, 128, false});
        if (quick || big) continue;
        for (int T : {1, 63, 64}) cfgs.push_back({GDN_GDN, (bool)bf, 1, T, 2, 64, 64, T != 63});
        cfgs.push_back({GDN_GDN, (bool)bf, 2, 130, 2, 64, 64, false});
        cfgs.push_back({GDN_GDN, (bool)bf, 1, 65, 1, 128, 128, true});
        cfgs.push_back({GDN_GDN, (bool)bf, 1, 70, 1, 64, 128, true}); /* K != V, both ways */
        cfgs.push_back({GDN_GDN, (bool)bf, 1, 70, 1, 128, 64, true});
        cfgs.push_back({GDN_GDN, (bool)bf, 1, 130, 1, 256, 256, true});
    }
    /* KDA: GDN's cases with K <= 128 */
    for (int bf = 1; bf >= 0; bf--) {
        if (big) cfgs.push_back({GDN_KDA, (bool)bf, 2, 1000, 4, 128, 128, true});
        cfgs.push_back({GDN_KDA, (bool)bf, 2, 65, 2, 64, 64, true});
        cfgs.push_back({GDN_KDA, (bool)bf, 1, 0, 1, 64, 128, true});
        cfgs.push_back({GDN_KDA, (bool)bf, 1, 130, 1, 128, 128, false});
        if (quick || big) continue;
        for (int T : {1, 63, 64}) cfgs.push_back({GDN_KDA, (bool)bf, 1, T, 2, 64, 64, T != 63});
        cfgs.push_back({GDN_KDA, (bool)bf, 1, 65, 1, 128, 128, true});
        cfgs.push_back({GDN_KDA, (bool)bf, 1, 70, 1, 64, 128, true});
        cfgs.push_back({GDN_KDA, (bool)bf, 1, 70, 1, 128, 64, true});
        cfgs.push_back({GDN_KDA, (bool)bf, 1, 130, 1, 128, 256, true});
    }
    if (bwd_only) cfgs.clear();
    for (const Cfg &c : cfgs) run_cfg(c);
    /* the backward: linear attention and SSD, bf16 and fp32; T in {0, 1, 63, 64, 65, 130}, K != V both ways */
    std::vector<Cfg> bw;
    for (gdn_family f : {GDN_LINEAR, GDN_SSD})
        for (int b = 1; b >= 0; b--) {
            const bool bf = b;
            if (!bf && f == GDN_SSD) continue; /* libgdn_tc.cu: SSD's backward is bf16 only */
            if (big) bw.push_back({f, bf, 2, 1000, 4, 128, 128, true});
            bw.push_back({f, bf, 2, 65, 2, 64, 64, true});
            bw.push_back({f, bf, 1, 0, 1, 64, 128, true});
            bw.push_back({f, bf, 1, 130, 1, 128, 64, false});
            if (quick || big) continue;
            for (int T : {1, 63, 64}) bw.push_back({f, bf, 1, T, 1, 64, 128, T != 63});
            bw.push_back({f, bf, 1, 130, 1, 128, 128, true});
            bw.push_back({f, bf, 1, 65, 1, 256, 128, true});
        }
    /* GLA (K <= 128): T in {0, 1, 63, 64, 65, 70, 130}, K, V in {64, 128} both ways, V = 256 */
    for (int b = 1; b >= 0; b--) {
        const bool bf = b;
        if (big) bw.push_back({GDN_GLA, bf, 2, 1000, 4, 128, 128, true});
        bw.push_back({GDN_GLA, bf, 2, 65, 2, 64, 64, true});
        bw.push_back({GDN_GLA, bf, 1, 0, 1, 64, 128, true});
        bw.push_back({GDN_GLA, bf, 1, 130, 1, 128, 64, false});
        if (quick || big) continue;
        for (int T : {1, 63, 64}) bw.push_back({GDN_GLA, bf, 1, T, 1, 64, 128, T != 63});
        bw.push_back({GDN_GLA, bf, 1, 130, 1, 128, 128, true});
        bw.push_back({GDN_GLA, bf, 1, 65, 1, 128, 256, true});
        bw.push_back({GDN_GLA, bf, 1, 70, 1, 64, 256, false});
    }
    /* GDN: T in {0, 1, 63, 64, 65, 70, 130}, K, V in {64, 128, 256} both ways, with and without S0 */
    for (int b = 1; b >= 0; b--) {
        const bool bf = b;
        if (big) bw.push_back({GDN_GDN, bf, 2, 1000, 4, 128, 128, true});
        bw.push_back({GDN_GDN, bf, 2, 65, 2, 64, 64, true});
        bw.push_back({GDN_GDN, bf, 1, 0, 1, 64, 128, true});
        bw.push_back({GDN_GDN, bf, 1, 130, 1, 128, 64, false});
        if (quick || big) continue;
        for (int T : {1, 63, 64}) bw.push_back({GDN_GDN, bf, 1, T, 1, 64, 128, T != 63});
        bw.push_back({GDN_GDN, bf, 1, 70, 2, 64, 64, true});
        bw.push_back({GDN_GDN, bf, 1, 130, 1, 128, 128, true});
        bw.push_back({GDN_GDN, bf, 1, 65, 1, 256, 128, true});
        bw.push_back({GDN_GDN, bf, 1, 70, 1, 128, 256, false});
    }
    /* KDA (K <= 128): T in {0, 1, 63, 64, 65, 70, 130}, K, V in {64, 128} both ways, V = 256, with
     * and without S0 */
    for (int b = 1; b >= 0; b--) {
        const bool bf = b;
        if (big) bw.push_back({GDN_KDA, bf, 2, 1000, 4, 128, 128, true});
        bw.push_back({GDN_KDA, bf, 2, 65, 2, 64, 64, true});
        bw.push_back({GDN_KDA, bf, 1, 0, 1, 64, 128, true});
        bw.push_back({GDN_KDA, bf, 1, 130, 1, 128, 64, false});
        if (quick || big) continue;
        for (int T : {1, 63, 64}) bw.push_back({GDN_KDA, bf, 1, T, 1, 64, 128, T != 63});
        bw.push_back({GDN_KDA, bf, 1, 70, 2, 64, 64, true});
        bw.push_back({GDN_KDA, bf, 1, 130, 1, 128, 128, true});
        bw.push_back({GDN_KDA, bf, 1, 65, 1, 128, 256, true});
        bw.push_back({GDN_KDA, bf, 1, 70, 1, 64, 256, false});
    }
    /* KDA bf16 again with pass 6 on tensor cores (tc_kda_bwy_bf16, GDN_KDA_BWY=tc): the same cases */
    for (size_t i = 0, nb = bw.size(); i < nb; i++)
        if (bw[i].f == GDN_KDA && bw[i].bf16) {
            Cfg t = bw[i];
            t.p6tc = true;
            bw.push_back(t);
        }
    if (g_gdn_only)
        bw.erase(std::remove_if(bw.begin(), bw.end(), [](const Cfg &c) { return c.f != GDN_GDN; }), bw.end());
    if (g_kda_only)
        bw.erase(std::remove_if(bw.begin(), bw.end(), [](const Cfg &c) { return c.f != GDN_KDA; }), bw.end());
    for (const Cfg &c : bw) run_bwd_cfg(c);
    for (gdn_family f : {GDN_LINEAR, GDN_SSD, GDN_GLA, GDN_GDN, GDN_KDA})
        for (int bf = 1; bf >= 0 && !bwd_only; bf--)
            for (int w = 0; w < 5; w++) run_nan(f, (bool)bf, w);
    printf("%s: %d check%s failed\n", g_fail ? "FAILED" : "all ok", g_fail, g_fail == 1 ? "" : "s");
    return g_fail ? 1 : 0;
}
