/* oracle.c: the GLR family's step-by-step recurrence (forward) and its analytic reverse
 * recurrence (backward), written once over a rounding helper so that the same code yields the
 * fp64 oracle and the fp32 working-precision reference. Sections: family table, arithmetic,
 * one time step (load / decay / delta / output / backward), the drivers, the SSD mapping. */
#include "oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---- the family table ---------------------------------------------------------------------------

struct family_info {
    const char *name;
    enum gdn_gate gate;
    bool delta;
};

static const struct family_info families[GDN_NFAMILIES] = {
    [GDN_LINEAR] = {"linear", GDN_GATE_NONE, false}, [GDN_GLA] = {"gla", GDN_GATE_CHANNEL, false},
    [GDN_SSD] = {"ssd", GDN_GATE_HEAD, false},       [GDN_GDN] = {"gdn", GDN_GATE_HEAD, true},
    [GDN_KDA] = {"kda", GDN_GATE_CHANNEL, true},
};

static const struct {
    const char *alias;
    enum gdn_family f;
} aliases[] = {
    {"linear_attn", GDN_LINEAR},
    {"simple_gla", GDN_SSD},
    {"mamba2", GDN_SSD},
    {"gated_delta", GDN_GDN},
};

static bool valid_family(enum gdn_family f)
{
    return (unsigned)f < GDN_NFAMILIES;
}

static bool name_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        if (x != *b) return false;
    }
    return *a == *b;
}

int gdn_family_parse(const char *name, enum gdn_family *out)
{
    if (!name || !out) return -1;
    for (int i = 0; i < GDN_NFAMILIES; i++) {
        if (name_eq(name, families[i].name)) {
            *out = (enum gdn_family)i;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (name_eq(name, aliases[i].alias)) {
            *out = aliases[i].f;
            return 0;
        }
    }
    return -1;
}

const char *gdn_family_name(enum gdn_family f)
{
    return valid_family(f) ? families[f].name : "?";
}

enum gdn_gate gdn_family_gate(enum gdn_family f)
{
    return valid_family(f) ? families[f].gate : GDN_GATE_NONE;
}

bool gdn_family_per_channel(enum gdn_family f)
{
    return gdn_family_gate(f) == GDN_GATE_CHANNEL;
}

bool gdn_family_has_gate(enum gdn_family f)
{
    return gdn_family_gate(f) != GDN_GATE_NONE;
}

bool gdn_family_has_delta(enum gdn_family f)
{
    return valid_family(f) && families[f].delta;
}

int gdn_g_shape(enum gdn_family f, const struct gdn_dims *d, int64_t shape[4])
{
    enum gdn_gate gt = gdn_family_gate(f);
    if (gt == GDN_GATE_NONE) return 0;
    shape[0] = d->B;
    shape[1] = d->T;
    shape[2] = d->H;
    if (gt == GDN_GATE_HEAD) return 3;
    shape[3] = d->K;
    return 4;
}

int gdn_dims_check(const struct gdn_dims *d)
{
    if (!d || d->B < 1 || d->T < 0 || d->H < 1 || d->K < 1 || d->V < 1) return GDN_EINVAL;
    /* The largest tensors are [B,T,H,max(K,V)] and [B,H,K,V]; bound their byte counts so that
     * every index and every malloc size below is exact. */
    int64_t kv = d->K > d->V ? d->K : d->V, n;
    const int64_t lim = INT64_MAX / 16;
    if (__builtin_mul_overflow(d->B, d->T > 0 ? d->T : 1, &n) || __builtin_mul_overflow(n, d->H, &n) ||
        __builtin_mul_overflow(n, kv, &n) || n > lim)
        return GDN_EINVAL;
    if (__builtin_mul_overflow(d->B, d->H, &n) || __builtin_mul_overflow(n, d->K, &n) ||
        __builtin_mul_overflow(n, d->V, &n) || n > lim)
        return GDN_EINVAL;
    return GDN_OK; /* narrow hosts: alloc_doubles checks against SIZE_MAX too */
}

double gdn_default_scale(const struct gdn_dims *d)
{
    return 1.0 / sqrt((double)d->K);
}

const char *gdn_strerror(int rc)
{
    switch (rc) {
    case GDN_OK: return "ok";
    case GDN_EINVAL: return "invalid argument (family, dims, or a required tensor missing)";
    case GDN_ENOMEM: return "out of memory";
    default: return "unknown gdn error";
    }
}

// ---- arithmetic: one rounding helper and one accumulator for all three modes --------------------

struct ctx {
    enum gdn_arith a;
    enum gdn_gate gate;
    bool delta;
    int64_t T, H, K, V;
    double scale; /* already rounded */
    const struct gdn_in *in;
};

/* x as the mode's intermediates are: rounded to fp32 in GDN_W32, untouched otherwise. */
static inline double r(const struct ctx *c, double x)
{
    return c->a == GDN_W32 ? (double)(float)x : x;
}

/* A running sum: Neumaier-compensated in GDN_EXACT, sequential in the working modes (the least
 * accurate legitimate order, which is what calibrates tolerances). */
struct acc {
    double s, c;
};

static inline void acc_add(const struct ctx *c, struct acc *acc, double x)
{
    if (c->a == GDN_EXACT) {
        double t = acc->s + x;
        if (fabs(acc->s) >= fabs(x))
            acc->c += (acc->s - t) + x;
        else
            acc->c += (x - t) + acc->s;
        acc->s = t;
    } else {
        acc->s = r(c, acc->s + r(c, x));
    }
}

/* The sum; a non-finite running sum is returned as is (its compensation would be NaN). */
static inline double acc_get(const struct acc *acc)
{
    return isfinite(acc->s) ? acc->s + acc->c : acc->s;
}

// ---- one time step ------------------------------------------------------------------------------

/* Scratch for one step: the rounded inputs at (b,t,h) and the delta rule's intermediates. */
struct step {
    double *q, *k, *v; /* q, k [K], v [V] */
    double *a;         /* [K] the decay per channel (all equal for a scalar gate, 1 if none) */
    double *u, *w;     /* u = S'^T k, w = b (v - u)   [V] */
    double beta;
};

static int64_t row(const struct ctx *c, int64_t b, int64_t t, int64_t h)
{
    return (b * c->T + t) * c->H + h;
}

static void load_step(const struct ctx *c, int64_t b, int64_t t, int64_t h, struct step *st)
{
    const struct gdn_in *in = c->in;
    int64_t rw = row(c, b, t, h), K = c->K, V = c->V;
    for (int64_t i = 0; i < K; i++) {
        st->q[i] = r(c, in->q[rw * K + i]);
        st->k[i] = r(c, in->k[rw * K + i]);
    }
    for (int64_t j = 0; j < V; j++) st->v[j] = r(c, in->v[rw * V + j]);
    if (c->gate == GDN_GATE_HEAD) {
        double a = r(c, exp(r(c, in->g[rw])));
        for (int64_t i = 0; i < K; i++) st->a[i] = a;
    } else if (c->gate == GDN_GATE_CHANNEL) {
        for (int64_t i = 0; i < K; i++) st->a[i] = r(c, exp(r(c, in->g[rw * K + i])));
    } else {
        for (int64_t i = 0; i < K; i++) st->a[i] = 1.0;
    }
    st->beta = c->delta ? r(c, in->b[rw]) : 1.0;
}

/* S' = Diag(a) S. */
static void decay(const struct ctx *c, const struct step *st, const double *S, double *Sp)
{
    int64_t K = c->K, V = c->V;
    for (int64_t i = 0; i < K; i++)
        for (int64_t j = 0; j < V; j++)
            Sp[i * V + j] = c->gate == GDN_GATE_NONE ? S[i * V + j] : r(c, st->a[i] * S[i * V + j]);
}

/* u = S'^T k and w = b (v - u): the delta rule's prediction and its scaled error. */
static void delta_uw(const struct ctx *c, struct step *st, const double *Sp)
{
    int64_t K = c->K, V = c->V;
    for (int64_t j = 0; j < V; j++) {
        struct acc u = {0, 0};
        for (int64_t i = 0; i < K; i++) acc_add(c, &u, r(c, st->k[i] * Sp[i * V + j]));
        st->u[j] = r(c, acc_get(&u));
        st->w[j] = r(c, st->beta * r(c, st->v[j] - st->u[j]));
    }
}

/* S_out = S' + k w^T (delta) or S' + k v^T, with S' = Diag(a) S_in. */
static void fwd_step(const struct ctx *c, struct step *st, const double *Sin, double *Sout)
{
    int64_t K = c->K, V = c->V;
    decay(c, st, Sin, Sout);
    const double *w = st->v;
    if (c->delta) {
        delta_uw(c, st, Sout);
        w = st->w;
    }
    for (int64_t i = 0; i < K; i++)
        for (int64_t j = 0; j < V; j++) Sout[i * V + j] = r(c, Sout[i * V + j] + r(c, st->k[i] * w[j]));
}

/* o = scale S^T q. */
static void out_step(const struct ctx *c, const struct step *st, const double *S, double *o)
{
    int64_t K = c->K, V = c->V;
    for (int64_t j = 0; j < V; j++) {
        struct acc s = {0, 0};
        for (int64_t i = 0; i < K; i++) acc_add(c, &s, r(c, st->q[i] * S[i * V + j]));
        o[j] = r(c, c->scale * r(c, acc_get(&s)));
    }
}

/* Gradient outputs of one step, already offset to (b,t,h); dg/db may be NULL. */
struct step_grad {
    double *dq, *dk, *dv, *dg, *db;
};

/* One reverse step. On entry D = dL/dS_t from the future (steps > t); Sprev = S_{t-1},
 * Snext = S_t. On exit D = dL/dS_{t-1}. Sp, Dtk are K*V and V scratch.
 *   o_t = scale S_t^T q:   dq = scale S_t dO,  D += scale q dO^T
 *   non-delta, S_t = S' + k v^T:   dk = D v,  dv = D^T k,  dS' = D
 *   delta, S_t = S' + k w^T, w = b (v - S'^T k):
 *       dv = b D^T k,  db = (D^T k) . (v - u),  dk = D w - S' dv,  dS' = D - k dv^T
 *   S' = Diag(a) S_{t-1}:  da = rowsum(dS' * S_{t-1}),  dg = a da,  D = Diag(a) dS' */
static void bwd_step(const struct ctx *c, struct step *st, const double *Sprev, const double *Snext, const double *dO,
                     double *D, double *Sp, double *Dtk, const struct step_grad *gr)
{
    int64_t K = c->K, V = c->V;
    for (int64_t i = 0; i < K; i++) {
        struct acc s = {0, 0};
        for (int64_t j = 0; j < V; j++) acc_add(c, &s, r(c, Snext[i * V + j] * r(c, dO[j])));
        gr->dq[i] = r(c, c->scale * r(c, acc_get(&s)));
        double sq = r(c, c->scale * st->q[i]);
        for (int64_t j = 0; j < V; j++) D[i * V + j] = r(c, D[i * V + j] + r(c, sq * r(c, dO[j])));
    }

    decay(c, st, Sprev, Sp);
    for (int64_t j = 0; j < V; j++) {
        struct acc s = {0, 0};
        for (int64_t i = 0; i < K; i++) acc_add(c, &s, r(c, D[i * V + j] * st->k[i]));
        Dtk[j] = r(c, acc_get(&s));
    }
    if (c->delta) {
        delta_uw(c, st, Sp);
        struct acc db = {0, 0};
        for (int64_t j = 0; j < V; j++) {
            acc_add(c, &db, r(c, Dtk[j] * r(c, st->v[j] - st->u[j])));
            gr->dv[j] = r(c, st->beta * Dtk[j]);
        }
        if (gr->db) *gr->db = r(c, acc_get(&db));
        for (int64_t i = 0; i < K; i++) {
            struct acc s = {0, 0};
            for (int64_t j = 0; j < V; j++) {
                acc_add(c, &s, r(c, D[i * V + j] * st->w[j]));
                acc_add(c, &s, -r(c, Sp[i * V + j] * gr->dv[j]));
            }
            gr->dk[i] = r(c, acc_get(&s));
            for (int64_t j = 0; j < V; j++) D[i * V + j] = r(c, D[i * V + j] - r(c, st->k[i] * gr->dv[j]));
        }
    } else {
        for (int64_t j = 0; j < V; j++) gr->dv[j] = Dtk[j];
        for (int64_t i = 0; i < K; i++) {
            struct acc s = {0, 0};
            for (int64_t j = 0; j < V; j++) acc_add(c, &s, r(c, D[i * V + j] * st->v[j]));
            gr->dk[i] = r(c, acc_get(&s));
        }
    }

    if (c->gate == GDN_GATE_NONE) return;
    struct acc dgh = {0, 0};
    for (int64_t i = 0; i < K; i++) {
        struct acc s = {0, 0};
        for (int64_t j = 0; j < V; j++) acc_add(c, &s, r(c, D[i * V + j] * Sprev[i * V + j]));
        double dgi = r(c, st->a[i] * r(c, acc_get(&s)));
        if (c->gate == GDN_GATE_CHANNEL) {
            if (gr->dg) gr->dg[i] = dgi;
        } else {
            acc_add(c, &dgh, dgi);
        }
        for (int64_t j = 0; j < V; j++) D[i * V + j] = r(c, st->a[i] * D[i * V + j]);
    }
    if (c->gate == GDN_GATE_HEAD && gr->dg) *gr->dg = r(c, acc_get(&dgh));
}

// ---- drivers ------------------------------------------------------------------------------------

static int setup(struct ctx *c, enum gdn_family f, enum gdn_arith a, const struct gdn_dims *d, double scale,
                 const struct gdn_in *in)
{
    /* T = 0: no time step reads q, k, v, g or beta, which may then be NULL (as o may) */
    if (!valid_family(f) || (unsigned)a > GDN_W64 || gdn_dims_check(d) != GDN_OK || !in ||
        ((!in->q || !in->k || !in->v) && d->T > 0))
        return GDN_EINVAL;
    c->a = a;
    c->gate = families[f].gate;
    c->delta = families[f].delta;
    if (d->T > 0 && ((c->gate != GDN_GATE_NONE && !in->g) || (c->delta && !in->b))) return GDN_EINVAL;
    c->T = d->T;
    c->H = d->H;
    c->K = d->K;
    c->V = d->V;
    c->scale = r(c, isnan(scale) ? gdn_default_scale(d) : scale);
    c->in = in;
    return GDN_OK;
}

/* Allocates n doubles (n counts elements, already bounded by gdn_dims_check). */
static double *alloc_doubles(int64_t n)
{
    if (n < 1) n = 1;
    if ((uint64_t)n > SIZE_MAX / sizeof(double)) return NULL;
    return malloc((size_t)n * sizeof(double));
}

/* Step scratch: q, k, a [K]; v, u, w [V]. */
static double *step_alloc(const struct ctx *c, struct step *st)
{
    double *m = alloc_doubles(3 * c->K + 3 * c->V);
    if (!m) return NULL;
    st->q = m;
    st->k = m + c->K;
    st->a = m + 2 * c->K;
    st->v = m + 3 * c->K;
    st->u = st->v + c->V;
    st->w = st->u + c->V;
    return m;
}

static void load_state(const struct ctx *c, const double *src, double *S)
{
    int64_t n = c->K * c->V;
    for (int64_t i = 0; i < n; i++) S[i] = src ? r(c, src[i]) : 0.0;
}

int gdn_oracle_fwd(enum gdn_family f, enum gdn_arith a, const struct gdn_dims *d, double scale, const struct gdn_in *in,
                   double *o, double *ST)
{
    struct ctx c;
    int rc = setup(&c, f, a, d, scale, in);
    if (rc) return rc;
    if (!o && d->T > 0) return GDN_EINVAL;
    int64_t KV = c.K * c.V;
    struct step st;
    double *scratch = step_alloc(&c, &st);
    double *states = alloc_doubles(2 * KV);
    if (!scratch || !states) {
        free(scratch);
        free(states);
        return GDN_ENOMEM;
    }
    double *S = states, *S2 = states + KV;
    for (int64_t b = 0; b < d->B; b++) {
        for (int64_t h = 0; h < c.H; h++) {
            load_state(&c, in->S0 ? in->S0 + (b * c.H + h) * KV : NULL, S);
            for (int64_t t = 0; t < c.T; t++) {
                load_step(&c, b, t, h, &st);
                fwd_step(&c, &st, S, S2);
                double *tmp = S;
                S = S2;
                S2 = tmp;
                out_step(&c, &st, S, o + row(&c, b, t, h) * c.V);
            }
            if (ST) memcpy(ST + (b * c.H + h) * KV, S, (size_t)KV * sizeof(double));
        }
    }
    free(scratch);
    free(states);
    return GDN_OK;
}

int gdn_oracle_bwd(enum gdn_family f, enum gdn_arith a, const struct gdn_dims *d, double scale, const struct gdn_in *in,
                   const double *dO, const double *dST, const struct gdn_grad *out)
{
    struct ctx c;
    int rc = setup(&c, f, a, d, scale, in);
    if (rc) return rc;
    if (!out || (d->T > 0 && (!dO || !out->dq || !out->dk || !out->dv))) return GDN_EINVAL;

    /* Checkpoints every `seg` steps; one segment of states is re-computed at a time with the
     * very code of the forward, so the states are bit-identical to the forward's. */
    int64_t T = c.T, KV = c.K * c.V;
    int64_t seg = (int64_t)ceil(sqrt((double)T));
    if (seg < 1) seg = 1;
    int64_t nseg = (T + seg - 1) / seg;
    struct step st;
    double *scratch = step_alloc(&c, &st);
    double *ck = alloc_doubles((nseg + seg + 3) * KV + c.V);
    if (!scratch || !ck) {
        free(scratch);
        free(ck);
        return GDN_ENOMEM;
    }
    double *buf = ck + nseg * KV; /* seg + 1 states */
    double *D = buf + (seg + 1) * KV;
    double *Sp = D + KV;
    double *Dtk = Sp + KV;

    for (int64_t b = 0; b < d->B; b++) {
        for (int64_t h = 0; h < c.H; h++) {
            int64_t sidx = (b * c.H + h) * KV;
            load_state(&c, in->S0 ? in->S0 + sidx : NULL, buf);
            for (int64_t t = 0; t < T; t++) {
                if (t % seg == 0) memcpy(ck + (t / seg) * KV, buf, (size_t)KV * sizeof(double));
                load_step(&c, b, t, h, &st);
                fwd_step(&c, &st, buf, buf + KV);
                memcpy(buf, buf + KV, (size_t)KV * sizeof(double));
            }
            load_state(&c, dST ? dST + sidx : NULL, D);
            for (int64_t s = nseg - 1; s >= 0; s--) {
                int64_t t0 = s * seg, t1 = t0 + seg < T ? t0 + seg : T;
                memcpy(buf, ck + s * KV, (size_t)KV * sizeof(double));
                for (int64_t t = t0; t < t1; t++) {
                    load_step(&c, b, t, h, &st);
                    fwd_step(&c, &st, buf + (t - t0) * KV, buf + (t - t0 + 1) * KV);
                }
                for (int64_t t = t1 - 1; t >= t0; t--) {
                    int64_t rw = row(&c, b, t, h);
                    struct step_grad gr = {
                        out->dq + rw * c.K,
                        out->dk + rw * c.K,
                        out->dv + rw * c.V,
                        NULL,
                        c.delta && out->db ? out->db + rw : NULL,
                    };
                    if (out->dg && c.gate != GDN_GATE_NONE)
                        gr.dg = out->dg + (c.gate == GDN_GATE_CHANNEL ? rw * c.K : rw);
                    load_step(&c, b, t, h, &st);
                    bwd_step(&c, &st, buf + (t - t0) * KV, buf + (t - t0 + 1) * KV, dO + rw * c.V, D, Sp, Dtk, &gr);
                }
            }
            if (out->dS0) memcpy(out->dS0 + sidx, D, (size_t)KV * sizeof(double));
        }
    }
    free(scratch);
    free(ck);
    return GDN_OK;
}

// ---- SSD from Mamba-2 ---------------------------------------------------------------------------

int gdn_ssd_from_mamba2(const struct gdn_dims *d, const double *x, const double *dt, const double *A, const double *Bm,
                        const double *C, double *q, double *k, double *v, double *g)
{
    if (gdn_dims_check(d) != GDN_OK || !x || !dt || !A || !Bm || !C || !q || !k || !v || !g) return GDN_EINVAL;
    int64_t N = d->K, P = d->V;
    for (int64_t b = 0; b < d->B; b++) {
        for (int64_t t = 0; t < d->T; t++) {
            for (int64_t h = 0; h < d->H; h++) {
                int64_t rw = (b * d->T + t) * d->H + h;
                for (int64_t n = 0; n < N; n++) {
                    q[rw * N + n] = C[rw * N + n];
                    k[rw * N + n] = Bm[rw * N + n];
                }
                for (int64_t p = 0; p < P; p++) v[rw * P + p] = dt[rw] * x[rw * P + p];
                g[rw] = dt[rw] * A[h];
            }
        }
    }
    return GDN_OK;
}

int gdn_ssd_skip(const struct gdn_dims *d, const double *x, const double *D, double *y)
{
    if (gdn_dims_check(d) != GDN_OK || !x || !D || !y) return GDN_EINVAL;
    int64_t P = d->V;
    for (int64_t rw = 0; rw < d->B * d->T * d->H; rw++)
        for (int64_t p = 0; p < P; p++) y[rw * P + p] += D[rw % d->H] * x[rw * P + p];
    return GDN_OK;
}
