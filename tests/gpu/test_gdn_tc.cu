/* test_gdn_tc.cu: the chunk-parallel forward gdn_cuda_fwd_tc (gdn/chunk_fwd_tc.cuh, and
 * gdn/chunk_fwd_gdn_tc.cuh for GDN) for linear attention, SSD and GDN against the fp64 oracle (gdn/oracle.c, GDN_EXACT): o and the final state as
 * relative RMS errors (bf16 inputs <= 0.0033, fp32 <= 1e-5) at B=2 T=1000 H=4 K=V=128, at odd T
 * (0, 1, 63, 65, 130) and K, V in {64, 128, 256}; every output written (outputs poisoned with NaN
 * bytes before each run); bitwise equal over two runs; and the API's refusals. Then the
 * chunk-parallel backward gdn_cuda_bwd_tc (gdn/chunk_bwd_tc.cuh: linear attention in bf16 and
 * fp32, SSD in bf16; gdn/chunk_bwd_gla_tc.cuh: GLA in bf16 and fp32; gdn/chunk_bwd_gdn_tc.cuh: GDN in
 * bf16 and fp32; gdn/chunk_bwd_kda_tc.cuh: KDA in bf16 and fp32): dq, dk, dv, dg, db, dS0 against gdn_oracle_bwd at the same bars and sizes. Exits 77 (SKIP)
 * without an sm_90 GPU. Built by gdn/local.mk; run: tests/gpu/test_gdn_tc. */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h> /* setenv */
#include <string.h>

#include <vector>

extern "C" {
#include "oracle.h"
}
#include "libgdn.h"
#include "testutil.h"

#define SKIP 77

static const double BAR_BF16 = 0.0033, BAR_F32 = 1e-5;

// ---- inputs and the oracle ---------------------------------------------------------------------

static double to_dtype(double x, bool bf16)
{
    return bf16 ? bf16_val(bf16_bits((float)x)) : (double)(float)x;
}

struct Cfg {
    enum gdn_family f;
    bool bf16;
    int B, T, H, K, V;
    bool state; /* S0 given */
};

struct Inputs {
    gdn_dims d;
    std::vector<double> q, k, v, g, b, S0;
};

/* The distributions of tests/gpu/test_gdn_cuda.cu: normal q, v; unit-norm k rows; log gates in
 * [-0.7, -0.01]; beta in [0.05, 0.95] (GDN); S0 ~ 0.3 N(0, 1); all rounded to what the kernel
 * reads. */
static void make_inputs(const Cfg &c, Inputs *in)
{
    in->d = {c.B, c.T, c.H, c.K, c.V};
    const size_t rows = (size_t)c.B * c.T * c.H;
    uint64_t s = 0x7c0000u + (uint64_t)c.f * 1000 + (uint64_t)c.T * 7 + (uint64_t)c.K * 3 + (uint64_t)c.V + c.bf16;
    in->q.resize(rows * c.K), in->k.resize(rows * c.K), in->v.resize(rows * c.V),
        in->g.resize(gdn_family_per_channel(c.f) ? rows * c.K : rows);
    in->S0.resize((size_t)c.B * c.H * c.K * c.V);
    for (auto &x : in->q) x = to_dtype(rng_normal(&s), c.bf16);
    for (size_t r = 0; r < rows; r++) {
        double n2 = 0;
        for (int i = 0; i < c.K; i++) n2 += (in->k[r * c.K + i] = rng_normal(&s)) * in->k[r * c.K + i];
        for (int i = 0; i < c.K; i++) in->k[r * c.K + i] = to_dtype(in->k[r * c.K + i] / sqrt(n2), c.bf16);
    }
    for (auto &x : in->v) x = to_dtype(rng_normal(&s), c.bf16);
    for (auto &x : in->g) x = (double)(float)(-0.7 + 0.69 * rng_unif(&s));
    for (auto &x : in->S0) x = (double)(float)(0.3 * rng_normal(&s));
    in->b.resize(rows);
    for (auto &x : in->b) x = to_dtype(0.05 + 0.9 * rng_unif(&s), c.bf16);
}

// ---- the kernel --------------------------------------------------------------------------------

static void *upload(const std::vector<double> &x, bool bf16)
{
    const size_t es = bf16 ? 2 : 4;
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, x.size() * es + 16));
    std::vector<uint8_t> h(x.size() * es);
    for (size_t i = 0; i < x.size(); i++) {
        if (bf16) {
            uint16_t u = bf16_bits((float)x[i]);
            memcpy(&h[i * 2], &u, 2);
        } else {
            float f = (float)x[i];
            memcpy(&h[i * 4], &f, 4);
        }
    }
    CUDA_CHECK(cudaMemcpy(p, h.data(), h.size(), cudaMemcpyHostToDevice));
    return p;
}

static std::vector<double> decode(const std::vector<uint8_t> &h, bool bf16)
{
    const size_t es = bf16 ? 2 : 4;
    std::vector<double> x(h.size() / es);
    for (size_t i = 0; i < x.size(); i++) {
        if (bf16) {
            uint16_t u;
            memcpy(&u, &h[i * 2], 2);
            x[i] = bf16_val(u);
        } else {
            float f;
            memcpy(&f, &h[i * 4], 4);
            x[i] = f;
        }
    }
    return x;
}

/* Two runs of gdn_cuda_fwd_tc, outputs and workspace poisoned with 0xff (NaN) before each; the
 * first run's o and ST bytes into o_bytes / st_bytes, *det = the second run's bytes equal them
 * and the 4 bytes past o stayed poisoned (no write past the end). */
static void gpu_run(const Cfg &c, const Inputs &in, std::vector<uint8_t> *o_bytes, std::vector<uint8_t> *st_bytes,
                    bool *det)
{
    const bool bf = c.bf16;
    const gdn_dtype dt = bf ? GDN_DTYPE_BF16 : GDN_DTYPE_F32;
    void *q = upload(in.q, bf), *k = upload(in.k, bf), *v = upload(in.v, bf);
    float *g = (float *)upload(in.g, false), *S0 = (float *)upload(in.S0, false);
    void *b = upload(in.b, bf);
    const size_t ob = in.v.size() * (bf ? 2 : 4) + 4, sb = in.S0.size() * 4;
    void *o = NULL, *ws = NULL;
    float *ST = NULL;
    CUDA_CHECK(cudaMalloc(&o, ob));
    CUDA_CHECK(cudaMalloc((void **)&ST, sb));
    const size_t wsb = gdn_cuda_fwd_tc_workspace(c.f, dt, &in.d);
    CUDA_CHECK(cudaMalloc(&ws, wsb + 16));
    gdn_dev_in din = {q, k, v, g, b, c.state ? S0 : NULL};
    std::vector<uint8_t> o2(ob), s2(sb);
    o_bytes->resize(ob), st_bytes->resize(sb);
    for (int r = 0; r < 2; r++) {
        CUDA_CHECK(cudaMemset(o, 0xff, ob));
        CUDA_CHECK(cudaMemset(ST, 0xff, sb));
        CUDA_CHECK(cudaMemset(ws, 0xff, wsb + 16));
        GDN_CHECK(gdn_cuda_fwd_tc(c.f, dt, &in.d, NAN, &din, o, ST, ws, wsb, NULL));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(r ? o2.data() : o_bytes->data(), o, ob, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(r ? s2.data() : st_bytes->data(), ST, sb, cudaMemcpyDeviceToHost));
    }
    *det = o2 == *o_bytes && s2 == *st_bytes;
    for (size_t i = ob - 4; i < ob; i++)
        if ((*o_bytes)[i] != 0xff) {
            printf("a write past the end of o (byte %zu): FAIL\n", i);
            *det = false;
        }
    o_bytes->resize(ob - 4);
    void *all[] = {q, k, v, g, b, S0, o, ST, ws};
    for (void *p : all) CUDA_CHECK(cudaFree(p));
}

/* ||x - ref|| / ||ref||; INFINITY when x holds a NaN or Inf (an unwritten element stays NaN). */
static double relrms(const std::vector<double> &ref, const std::vector<double> &x)
{
    return rel_rms_finite(x.data(), ref.data(), (int64_t)x.size());
}

/* One configuration: 0 when it passes. */
static int run_cfg(const Cfg &c)
{
    Inputs in;
    make_inputs(c, &in);
    std::vector<double> o(in.v.size()), ST(in.S0.size());
    gdn_in gi = {in.q.data(),
                 in.k.data(),
                 in.v.data(),
                 gdn_family_has_gate(c.f) ? in.g.data() : NULL,
                 gdn_family_has_delta(c.f) ? in.b.data() : NULL,
                 c.state ? in.S0.data() : NULL};
    if (gdn_oracle_fwd(c.f, GDN_EXACT, &in.d, NAN, &gi, o.data(), ST.data())) {
        fprintf(stderr, "%s:%d: oracle failed\n", __FILE__, __LINE__);
        return 1;
    }
    std::vector<uint8_t> ob, sb;
    bool det;
    gpu_run(c, in, &ob, &sb, &det);
    double eo = relrms(o, decode(ob, c.bf16)), es = relrms(ST, decode(sb, false));
    if (c.T == 0) eo = 0;
    const double bar = c.bf16 ? BAR_BF16 : BAR_F32;
    const bool ok = det && eo <= bar && es <= bar;
    printf("%-6s %-4s B%d T%-4d H%d K%-3d V%-3d S0 %s | o %8.2e  ST %8.2e | det %s | %s\n", gdn_family_name(c.f),
           c.bf16 ? "bf16" : "f32", c.B, c.T, c.H, c.K, c.V, c.state ? "y" : "n", eo, es, det ? "ok " : "NO!",
           ok ? "ok" : "FAIL");
    return !ok;
}

/* The chunk-parallel backward gdn_cuda_bwd_tc (linear attention, SSD, GLA, GDN, KDA) of one configuration
 * (c.state: S0 and dST given) against the oracle's gradients: dq, dk, dv, dg (SSD, GLA, GDN, KDA), db (GDN, KDA), dS0 at the
 * dtype's bar; two runs bitwise equal, outputs and workspace poisoned before each. 0 when it
 * passes. */
static int run_bwd_cfg(const Cfg &c)
{
    Inputs in;
    make_inputs(c, &in);
    const size_t rows = (size_t)c.B * c.T * c.H, nS = in.S0.size();
    const bool delta = c.f == GDN_GDN || c.f == GDN_KDA, gated = c.f != GDN_LINEAR, bf = c.bf16;
    const size_t ng = in.g.size(); /* GLA, KDA: a gate (and dg) per key channel */
    const gdn_dtype dt = bf ? GDN_DTYPE_BF16 : GDN_DTYPE_F32;
    const size_t es = bf ? 2 : 4;
    uint64_t s = 0xbd0000u + (uint64_t)c.T * 11 + (uint64_t)c.K + (uint64_t)c.f;
    std::vector<double> dO(rows * c.V), dST(nS);
    for (auto &x : dO) x = to_dtype(rng_normal(&s), bf);
    for (auto &x : dST) x = to_dtype(0.3 * rng_normal(&s), false);
    std::vector<double> dq(rows * c.K), dk(rows * c.K), dv(rows * c.V), dg(ng), dS0(nS), db(rows);
    gdn_in gi = {in.q.data(),
                 in.k.data(),
                 in.v.data(),
                 gated ? in.g.data() : NULL,
                 delta ? in.b.data() : NULL,
                 c.state ? in.S0.data() : NULL};
    gdn_grad gr = {dq.data(), dk.data(), dv.data(), gated ? dg.data() : NULL, delta ? db.data() : NULL, dS0.data()};
    if (gdn_oracle_bwd(c.f, GDN_EXACT, &in.d, NAN, &gi, dO.data(), c.state ? dST.data() : NULL, &gr)) {
        fprintf(stderr, "%s:%d: oracle backward failed\n", __FILE__, __LINE__);
        return 1;
    }
    void *q = upload(in.q, bf), *k = upload(in.k, bf), *v = upload(in.v, bf), *ddO = upload(dO, bf);
    void *bt = upload(in.b, bf);
    float *g = (float *)upload(in.g, false), *S0 = (float *)upload(in.S0, false), *ddST = (float *)upload(dST, false);
    const size_t qb = in.q.size() * es, vb = in.v.size() * es, gb = ng * 4, sb = nS * 4;
    const size_t wsb = gdn_cuda_bwd_tc_workspace(c.f, dt, &in.d);
    void *gq = NULL, *gk = NULL, *gv = NULL, *ws = NULL;
    float *gg = NULL, *gs = NULL, *gb2 = NULL;
    CUDA_CHECK(cudaMalloc(&gq, qb + 16));
    CUDA_CHECK(cudaMalloc(&gk, qb + 16));
    CUDA_CHECK(cudaMalloc(&gv, vb + 16));
    CUDA_CHECK(cudaMalloc((void **)&gg, gb + 16));
    CUDA_CHECK(cudaMalloc((void **)&gs, sb + 16));
    CUDA_CHECK(cudaMalloc((void **)&gb2, rows * 4 + 16));
    CUDA_CHECK(cudaMalloc(&ws, wsb + 16));
    gdn_dev_in din = {q, k, v, g, delta ? bt : NULL, c.state ? S0 : NULL};
    gdn_dev_grad dout = {gq, gk, gv, gated ? gg : NULL, delta ? gb2 : NULL, gs};
    std::vector<uint8_t> h[2][6];
    void *dev[6] = {gq, gk, gv, gg, gs, gb2};
    const size_t bytes[6] = {qb, qb, vb, gb, sb, rows * 4};
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < 6; i++) CUDA_CHECK(cudaMemset(dev[i], 0xff, bytes[i] + 16));
        CUDA_CHECK(cudaMemset(ws, 0xff, wsb + 16));
        GDN_CHECK(gdn_cuda_bwd_tc(c.f, dt, &in.d, NAN, &din, ddO, c.state ? ddST : NULL, &dout, ws, wsb, NULL));
        CUDA_CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < 6; i++) {
            h[r][i].resize(bytes[i] + 16);
            CUDA_CHECK(cudaMemcpy(h[r][i].data(), dev[i], bytes[i] + 16, cudaMemcpyDeviceToHost));
        }
    }
    bool det = true, past = false;
    for (int i = 0; i < 6; i++) {
        det = det && h[0][i] == h[1][i];
        for (size_t b = bytes[i]; b < bytes[i] + 16; b++) past = past || h[0][i][b] != 0xff;
        h[0][i].resize(bytes[i]);
    }
    const bool t0 = c.T == 0;
    const double eq = t0 ? 0 : relrms(dq, decode(h[0][0], bf)), ek = t0 ? 0 : relrms(dk, decode(h[0][1], bf));
    const double ev = t0 ? 0 : relrms(dv, decode(h[0][2], bf));
    const double eg = (!gated || t0) ? 0 : relrms(dg, decode(h[0][3], false));
    const double es0 = relrms(dS0, decode(h[0][4], false));
    const double eb = (!delta || t0) ? 0 : relrms(db, decode(h[0][5], false));
    const double worst = fmax(fmax(fmax(eq, ek), eb), fmax(fmax(ev, eg), es0));
    const bool ok = det && !past && worst <= (bf ? BAR_BF16 : BAR_F32);
    printf("bwd %-6s %-4s B%d T%-4d H%d K%-3d V%-3d S0 %s | dq %8.2e dk %8.2e dv %8.2e dg %8.2e db %8.2e dS0 %8.2e | "
           "det %s%s | %s\n",
           gdn_family_name(c.f), bf ? "bf16" : "f32", c.B, c.T, c.H, c.K, c.V, c.state ? "y" : "n", eq, ek, ev, eg, eb,
           es0, det ? "ok " : "NO!", past ? " WRITE PAST END" : "", ok ? "ok" : "FAIL");
    void *all[] = {q, k, v, ddO, bt, g, S0, ddST, gq, gk, gv, gg, gs, gb2, ws};
    for (void *p : all) CUDA_CHECK(cudaFree(p));
    return !ok;
}

static int refusal_check(void)
{
    int bad = 0;
    gdn_dims d = {1, 10, 1, 64, 64}, odd = {1, 10, 1, 96, 64};
    gdn_dims k256 = {1, 10, 1, 256, 64};
    if (gdn_cuda_fwd_tc_supported(GDN_GLA, &k256) != GDN_EUNSUPPORTED) bad++, printf("GLA K = 256 not refused: FAIL\n");
    if (gdn_cuda_fwd_tc_supported(GDN_GLA, &d) != 0) bad++, printf("GLA K = V = 64 refused: FAIL\n");
    if (gdn_cuda_fwd_tc_supported(GDN_SSD, &odd) != GDN_EUNSUPPORTED) bad++, printf("K = 96 not refused: FAIL\n");
    if (gdn_cuda_fwd_tc_supported(GDN_LINEAR, &d) != 0) bad++, printf("K = V = 64 refused: FAIL\n");
    gdn_dev_in din = {(void *)64, (void *)64, (void *)64, (float *)64, NULL, NULL};
    int rc = gdn_cuda_fwd_tc(GDN_SSD, GDN_DTYPE_BF16, &d, NAN, &din, (void *)64, NULL, (void *)64, 16, NULL);
    if (rc != GDN_EWORKSPACE) bad++, printf("a 16-byte workspace not refused (%d): FAIL\n", rc);
    if (gdn_cuda_fwd_tc_supported(GDN_KDA, &k256) != GDN_EUNSUPPORTED) bad++, printf("KDA K = 256 not refused: FAIL\n");
    if (gdn_cuda_fwd_tc_supported(GDN_KDA, &d) != 0) bad++, printf("KDA K = V = 64 refused: FAIL\n");
    if (gdn_cuda_fwd_tc_supported(GDN_GDN, &odd) != GDN_EUNSUPPORTED) bad++, printf("GDN K = 96 not refused: FAIL\n");
    if (gdn_cuda_fwd_tc_supported(GDN_GDN, &d) != 0) bad++, printf("GDN K = V = 64 refused: FAIL\n");
    /* GDN: the states plus W, U0 (64 rows per chunk) and u */
    if (gdn_cuda_fwd_tc_workspace(GDN_GDN, GDN_DTYPE_BF16, &d) != (size_t)(64 * 64 + 64 * 64 + 64 * 64 + 10 * 64) * 4)
        bad++, printf("GDN workspace size %zu: FAIL\n", gdn_cuda_fwd_tc_workspace(GDN_GDN, GDN_DTYPE_BF16, &d));
    if (gdn_cuda_bwd_tc_supported(GDN_GDN, GDN_DTYPE_BF16, &d) != 0 ||
        gdn_cuda_bwd_tc_supported(GDN_GDN, GDN_DTYPE_F32, &d) != 0 ||
        gdn_cuda_bwd_tc_supported(GDN_KDA, GDN_DTYPE_BF16, &d) != 0 ||
        gdn_cuda_bwd_tc_supported(GDN_KDA, GDN_DTYPE_F32, &d) != 0 ||
        gdn_cuda_bwd_tc_supported(GDN_KDA, GDN_DTYPE_F32, &k256) != GDN_EUNSUPPORTED ||
        gdn_cuda_bwd_tc_supported(GDN_GLA, GDN_DTYPE_F32, &d) != 0 ||
        gdn_cuda_bwd_tc_supported(GDN_GLA, GDN_DTYPE_BF16, &d) != 0 ||
        gdn_cuda_bwd_tc_supported(GDN_GLA, GDN_DTYPE_BF16, &k256) != GDN_EUNSUPPORTED ||
        gdn_cuda_bwd_tc_supported(GDN_SSD, GDN_DTYPE_F32, &d) != GDN_EUNSUPPORTED ||
        gdn_cuda_bwd_tc_supported(GDN_LINEAR, GDN_DTYPE_F32, &d) != 0 ||
        gdn_cuda_bwd_tc_supported(GDN_LINEAR, GDN_DTYPE_BF16, &d) != 0)
        bad++, printf("gdn_cuda_bwd_tc's members and dtypes: FAIL\n");
    rc = gdn_cuda_fwd_tc(GDN_GDN, GDN_DTYPE_BF16, &d, NAN, &din, (void *)64, NULL, (void *)64, 1 << 20, NULL);
    if (rc != GDN_EINVAL) bad++, printf("GDN without beta not refused (%d): FAIL\n", rc);
    const gdn_dev_grad gout = {(void *)64, (void *)64, (void *)64, NULL, NULL, NULL};
    rc = gdn_cuda_bwd_tc(GDN_GDN, GDN_DTYPE_BF16, &d, NAN, &din, (void *)64, NULL, &gout, (void *)64, 1 << 30, NULL);
    if (rc != GDN_EINVAL) bad++, printf("GDN's backward without beta not refused (%d): FAIL\n", rc);
    din.g = NULL;
    rc = gdn_cuda_fwd_tc(GDN_SSD, GDN_DTYPE_F32, &d, NAN, &din, (void *)64, NULL, (void *)64, 1 << 20, NULL);
    if (rc != GDN_EINVAL) bad++, printf("SSD without g not refused (%d): FAIL\n", rc);
    return bad;
}

// ---- dispatch -------------------------------------------------------------------------------------

int main(void)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("SKIP: no usable CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return SKIP;
    }
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    if (p.major != 9 || p.minor != 0) {
        printf("SKIP: libgdn is built for sm_90a (H100/H200); device 0 is %s, sm_%d%d\n", p.name, p.major, p.minor);
        return SKIP;
    }
    printf("device 0: %s; gdn_cuda_fwd_tc vs the fp64 oracle (relative RMS; bars bf16 %.4f, fp32 %.0e), "
           "two runs bitwise equal\n",
           p.name, BAR_BF16, BAR_F32);
    std::vector<Cfg> cfgs;
    for (enum gdn_family f : {GDN_LINEAR, GDN_SSD, GDN_GLA, GDN_GDN, GDN_KDA})
        for (int bf = 1; bf >= 0; bf--) {
            for (int st = 1; st >= 0; st--) cfgs.push_back({f, (bool)bf, 2, 1000, 4, 128, 128, (bool)st});
            for (int T : {0, 1, 63, 65, 130}) cfgs.push_back({f, (bool)bf, 1, T, 2, 128, 128, true});
            cfgs.push_back({f, (bool)bf, 2, 77, 3, 64, 64, true});
            cfgs.push_back({f, (bool)bf, 1, 130, 2, 64, 256, true});
            if (gdn_family_per_channel(f)) { /* GLA, KDA: K <= 128 */
                cfgs.push_back({f, (bool)bf, 1, 130, 2, 128, 256, false});
                continue;
            }
            cfgs.push_back({f, (bool)bf, 1, 130, 2, 256, 128, false});
            cfgs.push_back({f, (bool)bf, 1, 200, 1, 256, 256, true});
            if (f == GDN_GDN || f == GDN_KDA) /* T = 64 exactly, no S0, B and H > 1 */
                cfgs.push_back({f, (bool)bf, 2, 64, 3, 64, 64, false});
        }
    int fails = 0;
    for (const Cfg &c : cfgs) fails += run_cfg(c);
    /* the backward: linear attention, SSD, GLA, GDN and KDA, bf16 and fp32 */
    std::vector<Cfg> bw;
    for (enum gdn_family f : {GDN_LINEAR, GDN_SSD, GDN_GLA, GDN_GDN, GDN_KDA})
        for (int b = 1; b >= 0; b--) {
            const bool bf = b;
            if (!bf && f == GDN_SSD) continue; /* SSD's backward is bf16 only (gdn/libgdn_tc.cu) */
            for (int st = 1; st >= 0; st--) bw.push_back({f, bf, 2, 1000, 4, 128, 128, (bool)st});
            for (int T : {0, 1, 63, 65, 130}) bw.push_back({f, bf, 1, T, 2, 128, 128, true});
            bw.push_back({f, bf, 2, 77, 3, 64, 64, true});
            bw.push_back({f, bf, 1, 130, 2, 64, 256, true});
            if (gdn_family_per_channel(f)) { /* GLA, KDA: K <= 128; K != V the other way; T = 64 exactly */
                bw.push_back({f, bf, 1, 130, 2, 128, 64, false});
                bw.push_back({f, bf, 2, 64, 3, 64, 128, true});
                continue;
            }
            bw.push_back({f, bf, 1, 130, 2, 256, 128, false});
            if (f == GDN_GDN) { /* K = V = 256, T = 64 exactly with B and H > 1 */
                bw.push_back({f, bf, 1, 200, 1, 256, 256, true});
                bw.push_back({f, bf, 2, 64, 3, 64, 64, false});
            }
        }
    for (const Cfg &c : bw) fails += run_bwd_cfg(c);
    /* KDA's bf16 backward again with pass 6 on tensor cores (tc_kda_bwy_bf16, selected by
     * GDN_KDA_BWY=tc while the fp32 kernel is the default): the same configurations */
    size_t ntc = 0;
    setenv("GDN_KDA_BWY", "tc", 1);
    printf("KDA bf16, GDN_KDA_BWY=tc (pass 6 on tensor cores):\n");
    for (const Cfg &c : bw)
        if (c.f == GDN_KDA && c.bf16) fails += run_bwd_cfg(c), ntc++;
    unsetenv("GDN_KDA_BWY");
    int ref = refusal_check();
    printf("API refusals (GLA and KDA K = 256, K = 96, small workspace, SSD without g, GDN without beta): %s\n",
           ref ? "FAIL" : "ok");
    printf("\n%s: %d of %zu configurations failed, %d refusal failures\n", fails + ref ? "FAIL" : "PASS", fails,
           cfgs.size() + bw.size() + ntc, ref);
    return fails + ref ? 1 : 0;
}
