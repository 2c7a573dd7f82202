/* gdn_ops.c: the gated-linear-recurrence family as built-in ops (linear_attn_fwd, gla_fwd,
 * ssd_fwd, gdn_fwd, kda_fwd and their _bwd), on top of gdn/oracle.c. Inputs and outputs follow
 * the contract convention: forward (q, k, v, [g], [b], S0) -> (o, ST); backward (q, k, v, [g],
 * [b], S0, dO, dST) -> (dq, dk, dv, [dg], [db], dS0).
 *
 * The working-precision reference is the worse, element by element, of two legitimate fp32
 * evaluations: the sequential recurrence (gdn/oracle.c, GDN_W32) and the chunked algorithm in
 * fp32 (gdn/chunk_host.c, chunk 64). The chunked form, which every fast kernel uses, is 3-25x
 * less accurate once gates are present (the fp32 cumsum of log gates), so calibrating on the
 * sequential one alone would fail correct chunked kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gdn/chunk_host.h"
#include "oracle/oracle.h"
#include "gdn/oracle.h"

struct fam {
    enum gdn_family f;
    bool gate, channel, delta;
};

static struct fam fam_of(const char *name)
{
    static const struct {
        const char *prefix;
        enum gdn_family f;
    } t[] = {{"linear_attn", GDN_LINEAR}, {"gla", GDN_GLA}, {"ssd", GDN_SSD}, {"gdn", GDN_GDN}, {"kda", GDN_KDA}};
    struct fam r = {GDN_LINEAR, false, false, false};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strncmp(name, t[i].prefix, strlen(t[i].prefix)) && name[strlen(t[i].prefix)] == '_') r.f = t[i].f;
    r.gate = gdn_family_has_gate(r.f);
    r.channel = gdn_family_per_channel(r.f);
    r.delta = gdn_family_has_delta(r.f);
    return r;
}

static bool is_bwd(const struct kg_opdef *d)
{
    size_t n = strlen(d->name);
    return n > 4 && !strcmp(d->name + n - 4, "_bwd");
}

static bool dims_eq(const struct kg_shape *s, int rank, const int64_t *want)
{
    if (s->rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (s->dims[i] != want[i]) return false;
    return true;
}

static int check(const struct kg_opcall *c, const struct kg_shape *in, const struct kg_shape *out, struct kg_err *e)
{
    struct fam F = fam_of(c->def->name);
    const struct kg_shape *q = &in[0];
    if (q->rank != 4) return kg_errf(e, "%s expects q[B,T,H,K]", c->def->name);
    int64_t B = q->dims[0], T = q->dims[1], H = q->dims[2], K = q->dims[3];
    int64_t V = in[2].rank == 4 ? in[2].dims[3] : -1;
    int64_t qk[4] = {B, T, H, K}, tv[4] = {B, T, H, V}, gh[3] = {B, T, H}, st[4] = {B, H, K, V};
    int i = 1;
    if (!dims_eq(&in[i++], 4, qk)) return kg_errf(e, "%s expects k with q's shape [B,T,H,K]", c->def->name);
    if (!dims_eq(&in[i++], 4, tv)) return kg_errf(e, "%s expects v[B,T,H,V] (B, T, H as q)", c->def->name);
    if (F.gate && !(F.channel ? dims_eq(&in[i], 4, qk) : dims_eq(&in[i], 3, gh)))
        return kg_errf(e, "%s expects g%s", c->def->name, F.channel ? "[B,T,H,K]" : "[B,T,H]");
    i += F.gate;
    if (F.delta && !dims_eq(&in[i], 3, gh)) return kg_errf(e, "%s expects b[B,T,H]", c->def->name);
    i += F.delta;
    if (!dims_eq(&in[i++], 4, st)) return kg_errf(e, "%s expects S0[B,H,K,V]", c->def->name);
    if (!is_bwd(c->def)) {
        if (!dims_eq(&out[0], 4, tv) || !dims_eq(&out[1], 4, st))
            return kg_errf(e, "%s produces o[B,T,H,V] and ST[B,H,K,V]", c->def->name);
        return 0;
    }
    if (!dims_eq(&in[i++], 4, tv) || !dims_eq(&in[i++], 4, st))
        return kg_errf(e, "%s expects dO[B,T,H,V] and dST[B,H,K,V] after S0", c->def->name);
    int o = 0;
    if (!dims_eq(&out[o++], 4, qk) || !dims_eq(&out[o++], 4, qk) || !dims_eq(&out[o++], 4, tv))
        return kg_errf(e, "%s produces dq, dk [B,T,H,K] and dv [B,T,H,V] first", c->def->name);
    if (F.gate && !(F.channel ? dims_eq(&out[o], 4, qk) : dims_eq(&out[o], 3, gh)))
        return kg_errf(e, "%s produces dg with g's shape", c->def->name);
    o += F.gate;
    if (F.delta && !dims_eq(&out[o], 3, gh)) return kg_errf(e, "%s produces db[B,T,H]", c->def->name);
    o += F.delta;
    if (!dims_eq(&out[o], 4, st)) return kg_errf(e, "%s produces dS0[B,H,K,V] last", c->def->name);
    return 0;
}

static int reduce_axis(const struct kg_opcall *c, const struct kg_shape *in0)
{
    return 1; /* T: the recurrence runs along it */
}

static float *to_f32(const struct kg_tensor *t)
{
    float *p = malloc((size_t)(t->numel ? t->numel : 1) * sizeof *p);
    if (p)
        for (int64_t i = 0; i < t->numel; i++) p[i] = (float)((const double *)t->data)[i];
    return p;
}

/* out = the element of (a, b) farther from exact: the worse of two legitimate evaluations. */
static void worse_of(double *out, const double *a, const float *b, const double *exact, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double ea = fabs(a[i] - exact[i]), eb = fabs((double)b[i] - exact[i]);
        out[i] = (eb > ea || isnan(eb)) ? (double)b[i] : a[i];
    }
}

static int eval(const struct kg_opcall *c, enum kg_arith a, const struct kg_tensor *const *in,
                struct kg_tensor *const *out, struct kg_err *e)
{
    struct fam F = fam_of(c->def->name);
    bool bwd = is_bwd(c->def);
    struct gdn_dims d = {in[0]->dims[0], in[0]->dims[1], in[0]->dims[2], in[0]->dims[3], in[2]->dims[3]};
    double scale = c->param[0] > 0 ? c->param[0] : 1.0 / sqrt((double)d.K);
    int i = 3;
    struct gdn_in gi = {in[0]->data, in[1]->data, in[2]->data, NULL, NULL, NULL};
    if (F.gate) gi.g = in[i++]->data;
    if (F.delta) gi.b = in[i++]->data;
    gi.S0 = in[i++]->data;
    const double *dO = bwd ? in[i]->data : NULL, *dST = bwd ? in[i + 1]->data : NULL;
    int nout = bwd ? 4 + F.gate + F.delta : 2;
    struct gdn_grad gg = {0};
    if (bwd) {
        int o = 0;
        gg.dq = out[o++]->data;
        gg.dk = out[o++]->data;
        gg.dv = out[o++]->data;
        if (F.gate) gg.dg = out[o++]->data;
        if (F.delta) gg.db = out[o++]->data;
        gg.dS0 = out[o++]->data;
    }
    int rc;
    if (a == KG_EXACT_ALT) {
        /* the chunked algorithm in fp64: equal to the recurrence for finite inputs, and the
         * non-finite pattern every chunked kernel (flash-linear-attention's too) produces */
        rc = bwd ? gdn_chunk_bwd_f64(F.f, &d, 64, scale, &gi, dO, dST, &gg)
                 : gdn_chunk_fwd_f64(F.f, &d, 64, scale, &gi, out[0]->data, out[1]->data);
        return rc ? kg_errf(e, "%s: %s", c->def->name, gdn_strerror(rc)) : 0;
    }
    enum gdn_arith ga = a == KG_EXACT ? GDN_EXACT : a == KG_W32 ? GDN_W32 : GDN_W64;
    rc = bwd ? gdn_oracle_bwd(F.f, ga, &d, scale, &gi, dO, dST, &gg)
             : gdn_oracle_fwd(F.f, ga, &d, scale, &gi, out[0]->data, out[1]->data);
    if (rc) return kg_errf(e, "%s: %s", c->def->name, gdn_strerror(rc));
    if (a != KG_W32) return 0;

    /* W32: also the chunked fp32 algorithm, and keep the worse of the two per element */
    int nin = bwd ? i + 2 : i;
    float *fin[KG_OP_MAX_IO] = {0}, *fout[KG_OP_MAX_IO] = {0};
    double *exact[KG_OP_MAX_IO] = {0};
    rc = -1;
    for (int j = 0; j < nin; j++)
        if (!(fin[j] = to_f32(in[j]))) goto out;
    for (int j = 0; j < nout; j++) {
        size_t n = (size_t)(out[j]->numel ? out[j]->numel : 1);
        fout[j] = malloc(n * sizeof(float));
        exact[j] = malloc(n * sizeof(double));
        if (!fout[j] || !exact[j]) goto out;
    }
    struct gdn_in_f32 fi = {fin[0], fin[1], fin[2], NULL, NULL, NULL};
    i = 3;
    if (F.gate) fi.g = fin[i++];
    if (F.delta) fi.b = fin[i++];
    fi.S0 = fin[i++];
    if (bwd) {
        struct gdn_grad_f32 fg = {0};
        struct gdn_grad eg = {0};
        int o = 0;
        fg.dq = fout[o], eg.dq = exact[o++];
        fg.dk = fout[o], eg.dk = exact[o++];
        fg.dv = fout[o], eg.dv = exact[o++];
        if (F.gate) fg.dg = fout[o], eg.dg = exact[o++];
        if (F.delta) fg.db = fout[o], eg.db = exact[o++];
        fg.dS0 = fout[o], eg.dS0 = exact[o++];
        if (gdn_chunk_bwd_f32(F.f, &d, 64, (float)scale, &fi, fin[i], fin[i + 1], &fg) ||
            gdn_oracle_bwd(F.f, GDN_EXACT, &d, scale, &gi, dO, dST, &eg))
            goto out;
    } else {
        if (gdn_chunk_fwd_f32(F.f, &d, 64, (float)scale, &fi, fout[0], fout[1]) ||
            gdn_oracle_fwd(F.f, GDN_EXACT, &d, scale, &gi, exact[0], exact[1]))
            goto out;
    }
    for (int j = 0; j < nout; j++) worse_of(out[j]->data, out[j]->data, fout[j], exact[j], out[j]->numel);
    rc = 0;
out:
    for (int j = 0; j < KG_OP_MAX_IO; j++) {
        free(fin[j]);
        free(fout[j]);
        free(exact[j]);
    }
    if (rc) return kg_errf(e, "%s: out of memory or bad dims in the fp32 chunked reference", c->def->name);
    return 0;
}

#define FWD(NAME, NIN, DOC)                                                                                            \
    const struct kg_opdef kg_opdef_##NAME = {                                                                          \
        #NAME, NIN, 2, {"scale", NULL}, {0}, KG_OP_HAS_ALT, DOC, check, reduce_axis, eval,                             \
    }
#define BWD(NAME, NIN, NOUT, DOC)                                                                                      \
    const struct kg_opdef kg_opdef_##NAME = {                                                                          \
        #NAME, NIN, NOUT, {"scale", NULL}, {0}, KG_OP_HAS_ALT, DOC, check, reduce_axis, eval,                          \
    }

FWD(linear_attn_fwd, 4, "linear_attn_fwd(scale=1/sqrt(K)): q,k[B,T,H,K], v[B,T,H,V], S0[B,H,K,V] -> o, ST");
FWD(gla_fwd, 5, "gla_fwd(scale): q, k, v, g[B,T,H,K], S0 -> o, ST");
FWD(ssd_fwd, 5, "ssd_fwd(scale): q, k, v, g[B,T,H], S0 -> o, ST (Mamba-2 mapping in gdn/README.md)");
FWD(gdn_fwd, 6, "gdn_fwd(scale): q, k, v, g[B,T,H], b[B,T,H], S0 -> o, ST");
FWD(kda_fwd, 6, "kda_fwd(scale): q, k, v, g[B,T,H,K], b[B,T,H], S0 -> o, ST");
BWD(linear_attn_bwd, 6, 4, "linear_attn_bwd(scale): q, k, v, S0, dO, dST -> dq, dk, dv, dS0");
BWD(gla_bwd, 7, 5, "gla_bwd(scale): q, k, v, g, S0, dO, dST -> dq, dk, dv, dg, dS0");
BWD(ssd_bwd, 7, 5, "ssd_bwd(scale): q, k, v, g, S0, dO, dST -> dq, dk, dv, dg, dS0");
BWD(gdn_bwd, 8, 6, "gdn_bwd(scale): q, k, v, g, b, S0, dO, dST -> dq, dk, dv, dg, db, dS0");
BWD(kda_bwd, 8, 6, "kda_bwd(scale): q, k, v, g, b, S0, dO, dST -> dq, dk, dv, dg, db, dS0");
