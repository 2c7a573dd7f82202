/* glr_emu_check.cc: runs the GLR CUDA kernel bodies (glr_fwd.cuh, glr_bwd.cuh) on the host through
 * gdn/glr_emu.h and compares them with the fp64 oracle -- the kernels' indexing, barriers and
 * algorithm, checked on a machine without a GPU (it says nothing about the GPU's own arithmetic,
 * registers or timing). Shared memory, the workspace and the outputs start as NaN, so a read of
 * anything never written, or an output element never written, shows as a failure.
 *   gcc -std=gnu11 -O2 -c gdn/oracle.c -o oracle.o &&
 *   g++ -std=c++17 -O2 -pthread -DGLR_HOST_EMU -Igdn gdn/glr_emu_check.cc oracle.o -o glr_emu_check
 *   (add -fsanitize=thread to look for missing barriers; ./glr_emu_check quick runs a subset) */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "glr_bwd.cuh"
#include "glr_fwd.cuh"

extern "C" {
#include "oracle.h"
#include "testutil.h"
}

// ---- inputs -----------------------------------------------------------------------------------

template <class Tin> static Tin to_t(double x);
template <> float to_t<float>(double x)
{
    return (float)x;
}
template <> __nv_bfloat16 to_t<__nv_bfloat16>(double x)
{
    return __float2bfloat16_rn((float)x);
}
static double from_t(float x)
{
    return x;
}
static double from_t(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

/* A tensor in the kernel's type and the same values (after rounding) in fp64 for the oracle. */
template <class Tin> struct Tens {
    std::vector<Tin> t;
    std::vector<double> d;
    void fill(size_t n, uint64_t *s, int kind, double a, double b)
    {
        t.resize(n), d.resize(n);
        for (size_t i = 0; i < n; i++) {
            double x = kind == 0 ? a + b * rng_normal(s) : a + (b - a) * rng_unif(s);
            t[i] = to_t<Tin>(x);
            d[i] = from_t(t[i]);
        }
    }
};

static double relrms(const double *ref, const std::vector<double> &got)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < got.size(); i++) {
        double e = got[i] - ref[i];
        num += e * e, den += ref[i] * ref[i];
    }
    if (!(num == num)) return INFINITY;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

// ---- one case ---------------------------------------------------------------------------------

struct Case {
    int fam, B, T, H, K, V;
    bool state;
};

static int g_fail;

template <int F, class Tin> static void run_case(const Case &c, const char *tname, double thr)
{
    const int B = c.B, T = c.T, H = c.H, K = c.K, V = c.V;
    const size_t nqk = (size_t)B * T * H * K, nv = (size_t)B * T * H * V, ns = (size_t)B * T * H;
    const size_t nS = (size_t)B * H * K * V;
    const bool chan = glr_gate_kind(F) == GLR_GATE_CHANNEL, gated = glr_gate_kind(F) != GLR_GATE_NONE;
    const bool delta = glr_has_delta(F);
    const size_t ng = chan ? nqk : ns;
    uint64_t s = 1234 + F * 77 + T;
    Tens<Tin> q, k, v, b, dO;
    q.fill(nqk, &s, 0, 0, 1);
    k.fill(nqk, &s, 0, 0, 1);
    for (size_t r = 0; r < nqk / K; r++) { /* unit rows, then rounded */
        double n2 = 0;
        for (int i = 0; i < K; i++) n2 += k.d[r * K + i] * k.d[r * K + i];
        for (int i = 0; i < K; i++) {
            k.t[r * K + i] = to_t<Tin>(k.d[r * K + i] / sqrt(n2));
            k.d[r * K + i] = from_t(k.t[r * K + i]);
        }
    }
    v.fill(nv, &s, 0, 0, 1);
    b.fill(ns, &s, 1, 0.05, 0.95);
    dO.fill(nv, &s, 0, 0, 1);
    std::vector<float> g(ng), S0(nS), dST(nS);
    std::vector<double> gd(ng), S0d(nS), dSTd(nS);
    for (size_t i = 0; i < ng; i++) g[i] = (float)(-0.7 + 0.69 * rng_unif(&s)), gd[i] = g[i];
    for (size_t i = 0; i < nS; i++) {
        S0[i] = (float)(0.3 * rng_normal(&s)), S0d[i] = S0[i];
        dST[i] = (float)rng_normal(&s), dSTd[i] = dST[i];
    }
    const float scale = (float)(1.0 / sqrt((double)K));

    /* the oracle */
    gdn_dims d = {B, T, H, K, V};
    std::vector<double> o64(nv), ST64(nS), dq64(nqk), dk64(nqk), dv64(nv), dg64(ng), db64(ns), dS064(nS);
    gdn_in in = {q.d.data(),
                 k.d.data(),
                 v.d.data(),
                 gated ? gd.data() : nullptr,
                 delta ? b.d.data() : nullptr,
                 c.state ? S0d.data() : nullptr};
    if (gdn_oracle_fwd((gdn_family)F, GDN_EXACT, &d, scale, &in, o64.data(), ST64.data()) ||
        gdn_oracle_bwd((gdn_family)F, GDN_EXACT, &d, scale, &in, dO.d.data(), c.state ? dSTd.data() : nullptr,
                       &(const gdn_grad &)gdn_grad{dq64.data(), dk64.data(), dv64.data(), dg64.data(), db64.data(),
                                                   dS064.data()})) {
        printf("oracle failed\n");
        exit(2);
    }

    /* the kernels, twice (determinism), outputs and workspace poisoned with NaN */
    const Tin tnan = to_t<Tin>(NAN);
    std::vector<double> got[8];
    std::vector<uint8_t> bits[2];
    for (int rep = 0; rep < 2; rep++) {
        std::vector<Tin> o(nv, tnan), dq(nqk, tnan), dk(nqk, tnan), dv(nv, tnan);
        std::vector<float> ST(nS, NAN), dg(ng, NAN), db(ns, NAN), dS0(nS, NAN);
        std::vector<float> ws((size_t)B * H * glr_bwd_ws_floats(T, K, V), NAN);
        const float *S0p = c.state ? S0.data() : nullptr, *dSTp = c.state ? dST.data() : nullptr;
        glr_emu_launch({(unsigned)((V + GLR_BV - 1) / GLR_BV), (unsigned)H, (unsigned)B}, GLR_THREADS,
                       glr_smem_bytes(F, K, false), [&] {
                           glr_fwd_body<F, Tin>(q.t.data(), k.t.data(), v.t.data(), g.data(), b.t.data(), S0p, o.data(),
                                                ST.data(), B, T, H, K, V, scale);
                       });
        glr_emu_launch({(unsigned)H, (unsigned)B, 1}, GLR_THREADS, glr_smem_bytes(F, K, true), [&] {
            glr_bwd_body<F, Tin>(q.t.data(), k.t.data(), v.t.data(), g.data(), b.t.data(), S0p, dO.t.data(), dSTp,
                                 dq.data(), dk.data(), dv.data(), gated ? dg.data() : nullptr,
                                 delta ? db.data() : nullptr, dS0.data(), ws.data(), B, T, H, K, V, scale);
        });
        for (auto &x : got) x.clear();
        for (auto x : o) got[0].push_back(from_t(x));
        for (auto x : ST) got[1].push_back(x);
        for (auto x : dq) got[2].push_back(from_t(x));
        for (auto x : dk) got[3].push_back(from_t(x));
        for (auto x : dv) got[4].push_back(from_t(x));
        for (auto x : dg) got[5].push_back(x);
        for (auto x : db) got[6].push_back(x);
        for (auto x : dS0) got[7].push_back(x);
        for (auto &x : got) bits[rep].insert(bits[rep].end(), (uint8_t *)x.data(), (uint8_t *)(x.data() + x.size()));
    }
    const double *ref[8] = {o64.data(),  ST64.data(), dq64.data(), dk64.data(),
                            dv64.data(), dg64.data(), db64.data(), dS064.data()};
    const char *nm[8] = {"o", "ST", "dq", "dk", "dv", "dg", "db", "dS0"};
    bool ok = bits[0] == bits[1];
    char line[512];
    int len = snprintf(line, sizeof line, "%-6s %-5s B%d T%-4d H%d K%-3d V%-3d S0/dST=%d |",
                       gdn_family_name((gdn_family)F), tname, B, T, H, K, V, (int)c.state);
    for (int i = 0; i < 8; i++) {
        if ((i == 5 && !gated) || (i == 6 && !delta)) continue;
        /* fp32 outputs (ST, dg, db, dS0) are judged at the fp32 bar even with bf16 inputs */
        double t = (i == 1 || i >= 5) ? 1e-5 : thr;
        double e = relrms(ref[i], got[i]);
        if (!(e <= t)) ok = false;
        len += snprintf(line + len, sizeof line - len, " %s %.1e%s", nm[i], e, e <= t ? "" : "!");
    }
    printf("%s %s%s\n", line, bits[0] == bits[1] ? "" : "NONDETERMINISTIC ", ok ? "ok" : "FAIL");
    fflush(stdout);
    if (!ok) g_fail++;
}

/* A NaN injected into one input at step t* of batch 0 / head 0: the NaN positions of o and ST
 * must be the oracle's -- in particular nothing before t* may turn NaN. Forward only. */
template <int F> static void run_nan(int which)
{
    const int B = 1, T = 150, H = 2, K = 20, V = 40, ts = 70; /* t* inside the second chunk */
    const bool chan = glr_gate_kind(F) == GLR_GATE_CHANNEL, gated = glr_gate_kind(F) != GLR_GATE_NONE;
    const bool delta = glr_has_delta(F);
    const char *names[5] = {"q", "k", "v", "g", "b"};
    if ((which == 3 && !gated) || (which == 4 && !delta)) return;
    const size_t nqk = (size_t)B * T * H * K, nv = (size_t)B * T * H * V, ns = (size_t)B * T * H;
    const size_t nS = (size_t)B * H * K * V, ng = chan ? nqk : ns;
    uint64_t s = 99;
    std::vector<float> q(nqk), k(nqk), v(nv), g(ng), b(ns);
    for (auto &x : q) x = (float)rng_normal(&s);
    for (auto &x : k) x = (float)(rng_normal(&s) / sqrt((double)K));
    for (auto &x : v) x = (float)rng_normal(&s);
    for (auto &x : g) x = (float)(-0.7 + 0.69 * rng_unif(&s));
    for (auto &x : b) x = (float)(0.05 + 0.9 * rng_unif(&s));
    const size_t rqk = ((size_t)ts * H) * K + 3, rv = ((size_t)ts * H) * V + 5, rs = (size_t)ts * H;
    float *tgt[5] = {&q[rqk], &k[rqk], &v[rv], chan ? &g[rqk] : &g[rs], &b[rs]};
    *tgt[which] = NAN;
    std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()), vd(v.begin(), v.end()), gd(g.begin(), g.end()),
        bd(b.begin(), b.end()), o64(nv), ST64(nS);
    gdn_dims d = {B, T, H, K, V};
    gdn_in in = {qd.data(), kd.data(), vd.data(), gated ? gd.data() : nullptr, delta ? bd.data() : nullptr, nullptr};
    const float scale = 0.25f;
    gdn_oracle_fwd((gdn_family)F, GDN_EXACT, &d, scale, &in, o64.data(), ST64.data());
    std::vector<float> o(nv), ST(nS);
    glr_emu_launch({(unsigned)((V + GLR_BV - 1) / GLR_BV), (unsigned)H, (unsigned)B}, GLR_THREADS,
                   glr_smem_bytes(F, K, false), [&] {
                       glr_fwd_body<F, float>(q.data(), k.data(), v.data(), g.data(), b.data(), nullptr, o.data(),
                                              ST.data(), B, T, H, K, V, scale);
                   });
    size_t diff = 0, early = 0, nan64 = 0;
    for (size_t i = 0; i < nv; i++) {
        bool a = std::isnan(o[i]), e = std::isnan(o64[i]);
        diff += a != e, nan64 += e;
        if (a && i / ((size_t)H * V) < (size_t)ts) early++;
    }
    for (size_t i = 0; i < nS; i++) diff += std::isnan(ST[i]) != std::isnan(ST64[i]);
    printf("nan    %-6s NaN in %s at t=%d: oracle has %zu NaN in o; mismatched positions %zu, NaN before t* %zu %s\n",
           gdn_family_name((gdn_family)F), names[which], ts, nan64, diff, early, diff || early ? "FAIL" : "ok");
    if (diff || early) g_fail++;
}

template <int F> static void run_both(const Case &c)
{
    run_case<F, float>(c, "f32", 1e-5);
    run_case<F, __nv_bfloat16>(c, "bf16", 0.0033);
}

static void run(const Case &c)
{
    switch (c.fam) {
    case GLR_LINEAR: run_both<GLR_LINEAR>(c); break;
    case GLR_GLA: run_both<GLR_GLA>(c); break;
    case GLR_SSD: run_both<GLR_SSD>(c); break;
    case GLR_GDN: run_both<GLR_GDN>(c); break;
    case GLR_KDA: run_both<GLR_KDA>(c); break;
    }
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && !strcmp(argv[1], "quick");
    for (int f = 0; f < GDN_NFAMILIES; f++) {
        run({f, 1, 77, 2, 20, 24, true});
        if (quick) continue;
        run({f, 1, 77, 2, 64, 64, false});
        run({f, 2, 150, 1, 37, 45, true});
        run({f, 1, 1, 1, 16, 16, true});
        run({f, 1, 64, 1, 5, 3, true});
        run({f, 1, 130, 1, 128, 128, true});
    }
    for (int w = 0; w < 5; w++) {
        run_nan<GLR_LINEAR>(w), run_nan<GLR_GLA>(w), run_nan<GLR_SSD>(w);
        run_nan<GLR_GDN>(w), run_nan<GLR_KDA>(w);
    }
    printf("%s\n", g_fail ? "FAILED" : "all ok");
    return g_fail ? 1 : 0;
}
