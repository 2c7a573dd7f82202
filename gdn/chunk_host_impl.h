/* chunk_host_impl.h: the chunked GLR algorithm, forward and backward, written once over `real`
 * and included twice by chunk_host.c (real = double / float, SFX adds _f64 / _f32, EXP is exp /
 * expf). One static function per GPU kernel stage, each with its math; no include guard on
 * purpose. Per (b,h), chunk n covers t in [nC, nC + L); inside it i, j index rows, c a key
 * channel, v a value channel, H = h[n] is the state entering the chunk and Gamma = exp(G).
 *
 * Numerics: every exponent is a difference G_i - G_j with j <= i inside one chunk, G_last - G_j,
 * or G_i itself, all <= 0 for gates g <= 0, so nothing overflows; the matmul form a GPU kernel
 * uses (q * exp(G) times k * exp(-G)) would need a sub-chunk reference point for the same
 * guarantee (flash-linear-attention's secondary chunking), which is why the exponent of the
 * difference is written out here. Scalar (per-head) gates are broadcast over the K channels
 * in stage 1, so one code path serves all five members; their dg is the sum over channels. */

// ---- workspace ----------------------------------------------------------------------------------

struct SFX(work) {
    enum gdn_gate gate;
    bool delta;
    int64_t T, K, V, C, N;
    real scale;
    /* Inputs of one (b,h) at t = 0: row t of q, k (and per-channel g) at t*sqk, of v and dO at
     * t*sv, of a scalar g and of b at t*ss. */
    const real *q, *k, *v, *g, *b, *dO;
    int64_t sqk, sv, ss;
    real *G;  /* T x K   chunk-local inclusive cumsum of g */
    real *A;  /* N x C x C   (I + StrictLower(diag(b) M))^{-1} per chunk (delta members) */
    real *W;  /* T x K   A diag(b) (K * Gamma) */
    real *U;  /* T x V   A diag(b) V */
    real *h;  /* (N+1) x K x V   h[n]: state entering chunk n; h[N] = the final state */
    real *vn; /* T x V   v_new: the value each step writes into the state (U - W H, or v) */
    /* backward only */
    real *dh;                     /* (N+1) x K x V   dL/dh[n] */
    real *dvn;                    /* T x V   dL/dv_new */
    real *dq, *dk, *dv, *dG, *db; /* accumulators of one (b,h); dG w.r.t. the cumsum G */
    real *scr;                    /* per-chunk scratch: 4 C^2 + C (2K + V) */
};

static inline const real *SFX(qrow)(const struct SFX(work) * w, int64_t t)
{
    return w->q + t * w->sqk;
}

static inline const real *SFX(krow)(const struct SFX(work) * w, int64_t t)
{
    return w->k + t * w->sqk;
}

static inline const real *SFX(vrow)(const struct SFX(work) * w, int64_t t)
{
    return w->v + t * w->sv;
}

static inline const real *SFX(dorow)(const struct SFX(work) * w, int64_t t)
{
    return w->dO + t * w->sv;
}

/* The raw log gate of step t, channel c. */
static inline real SFX(gate)(const struct SFX(work) * w, int64_t t, int64_t c)
{
    if (w->gate == GDN_GATE_HEAD) return w->g[t * w->ss];
    if (w->gate == GDN_GATE_CHANNEL) return w->g[t * w->sqk + c];
    return 0;
}

static void SFX(work_free)(struct SFX(work) * w)
{
    free(w->G), free(w->A), free(w->W), free(w->U), free(w->h), free(w->vn);
    free(w->dh), free(w->dvn), free(w->dq), free(w->dk), free(w->dv), free(w->dG), free(w->db);
    free(w->scr);
}

static int SFX(work_init)(struct SFX(work) * w, enum gdn_family f, const struct gdn_dims *d, int64_t C, real scale,
                          bool bwd)
{
    memset(w, 0, sizeof *w);
    w->gate = gdn_family_gate(f);
    w->delta = gdn_family_has_delta(f);
    w->T = d->T, w->K = d->K, w->V = d->V, w->C = C;
    w->N = (d->T + C - 1) / C;
    w->scale = isnan(scale) ? (real)(1.0 / sqrt((double)d->K)) : scale;
    w->sqk = d->H * d->K, w->sv = d->H * d->V, w->ss = d->H;
    int64_t T = d->T, K = d->K, V = d->V, KV = K * V, N = w->N;
    const size_t z = sizeof(real);
    w->G = alloc_elems(T * K, z);
    w->h = alloc_elems((N + 1) * KV, z);
    w->vn = alloc_elems(T * V, z);
    w->scr = alloc_elems(4 * C * C + C * (2 * K + V), z);
    bool ok = w->G && w->h && w->vn && w->scr;
    if (w->delta) {
        w->A = alloc_elems(N * C * C, z);
        w->W = alloc_elems(T * K, z);
        w->U = alloc_elems(T * V, z);
        ok = ok && w->A && w->W && w->U;
    }
    if (bwd) {
        w->dh = alloc_elems((N + 1) * KV, z);
        w->dvn = alloc_elems(T * V, z);
        w->dq = alloc_elems(T * K, z);
        w->dk = alloc_elems(T * K, z);
        w->dv = alloc_elems(T * V, z);
        w->dG = alloc_elems(T * K, z);
        w->db = alloc_elems(T, z);
        ok = ok && w->dh && w->dvn && w->dq && w->dk && w->dv && w->dG && w->db;
    }
    if (!ok) {
        SFX(work_free)(w);
        return GDN_ENOMEM;
    }
    return GDN_OK;
}

/* Points the workspace at the inputs of (b,h). */
static void SFX(work_bind)(struct SFX(work) * w, const struct gdn_dims *d, const IN_T *in, const real *dO, int64_t b,
                           int64_t h)
{
    int64_t r0 = b * d->T * d->H + h; /* row (b, t=0, h) */
    w->q = in->q + r0 * d->K;
    w->k = in->k + r0 * d->K;
    w->v = in->v + r0 * d->V;
    w->dO = dO ? dO + r0 * d->V : NULL;
    w->g = NULL;
    if (w->gate == GDN_GATE_HEAD)
        w->g = in->g + r0;
    else if (w->gate == GDN_GATE_CHANNEL)
        w->g = in->g + r0 * d->K;
    w->b = w->delta ? in->b + r0 : NULL;
}

// ---- forward stages -----------------------------------------------------------------------------

/* Stage 1 (fla: chunk_local_cumsum): G_i = sum_{j <= i} g_j inside the chunk, in log space,
 * so that decays between any two steps of a chunk are exp(G_i - G_j). Scalar gates are
 * broadcast over the channels. */
static void SFX(stage_cumsum)(struct SFX(work) * w, int64_t n)
{
    int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n), K = w->K;
    for (int64_t i = 0; i < L; i++)
        for (int64_t c = 0; c < K; c++)
            w->G[(t0 + i) * K + c] = (i ? w->G[(t0 + i - 1) * K + c] : 0) + SFX(gate)(w, t0 + i, c);
}

/* Stage 2a (fla: chunk_scaled_dot_kkt_fwd): Tm_ij = b_i M_ij for j < i (zero on and above the
 * diagonal), M_ij = sum_c K_ic K_jc exp(G_ic - G_jc), into A[n]. M_ij is how much of step j's
 * write step i's prediction S'^T k_i sees after the decay from j to i. */
static void SFX(stage_kkt)(struct SFX(work) * w, int64_t n)
{
    int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n), K = w->K, C = w->C;
    real *A = w->A + n * C * C;
    for (int64_t i = 0; i < L; i++) {
        const real *ki = SFX(krow)(w, t0 + i), *Gi = w->G + (t0 + i) * K;
        for (int64_t j = 0; j < L; j++) {
            real s = 0;
            if (j < i) {
                const real *kj = SFX(krow)(w, t0 + j), *Gj = w->G + (t0 + j) * K;
                for (int64_t c = 0; c < K; c++) s += ki[c] * kj[c] * EXP(Gi[c] - Gj[c]);
                s *= w->b[(t0 + i) * w->ss];
            }
            A[i * C + j] = s;
        }
    }
}

/* Stage 2b (fla: solve_tril): A = (I + Tm)^{-1}, unit lower triangular, by forward substitution
 *   A_ii = 1,  A_ij = -sum_{m=j}^{i-1} Tm_im A_mj  (i > j),
 * in place: j ascending reads Tm_im (m >= j) before row i overwrites it. */
static void SFX(stage_solve_tril)(struct SFX(work) * w, int64_t n)
{
    int64_t L = chunk_len(w->T, w->C, n), C = w->C;
    real *A = w->A + n * C * C;
    for (int64_t i = 0; i < L; i++) {
        for (int64_t j = 0; j < i; j++) {
            real s = A[i * C + j]; /* m = j: Tm_ij A_jj */
            for (int64_t m = j + 1; m < i; m++) s += A[i * C + m] * A[m * C + j];
            A[i * C + j] = -s;
        }
        A[i * C + i] = 1;
    }
}

/* Stage 3 (fla: recompute_w_u_fwd): W = A diag(b) (K * Gamma), U = A diag(b) V. The values the
 * chunk writes are then v_new = U - W H: the delta rule's corrections, solved for the whole
 * chunk at once (the UT transform / WY representation). */
static void SFX(stage_wu)(struct SFX(work) * w, int64_t n)
{
    int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n), K = w->K, V = w->V, C = w->C;
    const real *A = w->A + n * C * C;
    for (int64_t i = 0; i < L; i++) {
        real *Wi = w->W + (t0 + i) * K, *Ui = w->U + (t0 + i) * V;
        for (int64_t c = 0; c < K; c++) Wi[c] = 0;
        for (int64_t v = 0; v < V; v++) Ui[v] = 0;
        for (int64_t j = 0; j <= i; j++) {
            real ab = A[i * C + j] * w->b[(t0 + j) * w->ss];
            const real *kj = SFX(krow)(w, t0 + j), *vj = SFX(vrow)(w, t0 + j);
            const real *Gj = w->G + (t0 + j) * K;
            for (int64_t c = 0; c < K; c++) Wi[c] += ab * kj[c] * EXP(Gj[c]);
            for (int64_t v = 0; v < V; v++) Ui[v] += ab * vj[v];
        }
    }
}

/* Stage 4 (fla: chunk_gated_delta_rule_fwd_h), sequential over chunks: h[0] = S0 (or 0), and
 * for each chunk
 *   v_new_j = U_j - W_j^T H (delta)   or   v_j (no delta)
 *   h[n+1] = Diag(Gamma_last) H + sum_j (K_j * exp(G_last - G_j)) v_new_j^T. */
static void SFX(stage_fwd_h)(struct SFX(work) * w, const real *S0)
{
    int64_t K = w->K, V = w->V, KV = K * V;
    for (int64_t e = 0; e < KV; e++) w->h[e] = S0 ? S0[e] : 0;
    for (int64_t n = 0; n < w->N; n++) {
        int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n);
        const real *H = w->h + n * KV, *Gl = w->G + (t0 + L - 1) * K;
        real *Hn = w->h + (n + 1) * KV;
        for (int64_t j = 0; j < L; j++) {
            real *vn = w->vn + (t0 + j) * V;
            const real *vj = SFX(vrow)(w, t0 + j);
            for (int64_t v = 0; v < V; v++) {
                real s = w->delta ? w->U[(t0 + j) * V + v] : vj[v];
                if (w->delta)
                    for (int64_t c = 0; c < K; c++) s -= w->W[(t0 + j) * K + c] * H[c * V + v];
                vn[v] = s;
            }
        }
        for (int64_t c = 0; c < K; c++) {
            real decay = EXP(Gl[c]);
            for (int64_t v = 0; v < V; v++) Hn[c * V + v] = decay * H[c * V + v];
            for (int64_t j = 0; j < L; j++) {
                real kd = SFX(krow)(w, t0 + j)[c] * EXP(Gl[c] - w->G[(t0 + j) * K + c]);
                for (int64_t v = 0; v < V; v++) Hn[c * V + v] += kd * w->vn[(t0 + j) * V + v];
            }
        }
    }
}

/* The intra-chunk causal attention P_ij = sum_c Q_ic K_jc exp(G_ic - G_jc) for j <= i, else 0
 * (L x L, row stride C): the weight of step j's write in step i's output. */
static void SFX(chunk_P)(const struct SFX(work) * w, int64_t n, real *P)
{
    int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n), K = w->K, C = w->C;
    for (int64_t i = 0; i < L; i++) {
        const real *qi = SFX(qrow)(w, t0 + i), *Gi = w->G + (t0 + i) * K;
        for (int64_t j = 0; j < L; j++) {
            real s = 0;
            if (j <= i) {
                const real *kj = SFX(krow)(w, t0 + j), *Gj = w->G + (t0 + j) * K;
                for (int64_t c = 0; c < K; c++) s += qi[c] * kj[c] * EXP(Gi[c] - Gj[c]);
            }
            P[i * C + j] = s;
        }
    }
}

/* Stage 5 (fla: chunk_fwd_o): o_i = scale [ (Q_i * Gamma_i)^T H + sum_{j <= i} P_ij v_new_j ]:
 * the inter-chunk part through the state, the intra-chunk part through P. */
static void SFX(stage_fwd_o)(struct SFX(work) * w, int64_t n, real *o, int64_t so)
{
    int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n), K = w->K, V = w->V, C = w->C;
    const real *H = w->h + n * K * V;
    real *P = w->scr, *qg = w->scr + C * C;
    SFX(chunk_P)(w, n, P);
    for (int64_t i = 0; i < L; i++) {
        const real *qi = SFX(qrow)(w, t0 + i), *Gi = w->G + (t0 + i) * K;
        for (int64_t c = 0; c < K; c++) qg[c] = qi[c] * EXP(Gi[c]);
        real *oi = o + (t0 + i) * so;
        for (int64_t v = 0; v < V; v++) {
            real s = 0;
            for (int64_t c = 0; c < K; c++) s += qg[c] * H[c * V + v];
            for (int64_t j = 0; j <= i; j++) s += P[i * C + j] * w->vn[(t0 + j) * V + v];
            oi[v] = w->scale * s;
        }
    }
}

// ---- backward stages ----------------------------------------------------------------------------

/* Stage 6 (fla: chunk_bwd_dv_local): dv_new_j = scale sum_{i >= j} P_ij dO_i, the part of dL/dv_new
 * that comes from this chunk's own outputs. */
static void SFX(stage_bwd_dv_local)(struct SFX(work) * w, int64_t n)
{
    int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n), V = w->V, C = w->C;
    real *P = w->scr;
    SFX(chunk_P)(w, n, P);
    for (int64_t j = 0; j < L; j++)
        for (int64_t v = 0; v < V; v++) {
            real s = 0;
            for (int64_t i = j; i < L; i++) s += P[i * C + j] * SFX(dorow)(w, t0 + i)[v];
            w->dvn[(t0 + j) * V + v] = w->scale * s;
        }
}

/* Stage 7 (fla: chunk_gated_delta_rule_bwd_dhu), the reverse state scan: dh[N] = dST (or 0),
 * and for n = N-1 .. 0
 *   dv_new_j += (K_j * exp(G_last - G_j))^T dh[n+1]                   (v_new feeds h[n+1])
 *   dh[n] = Diag(Gamma_last) dh[n+1] + scale (Q * Gamma)^T dO - W^T dv_new
 * (the last term for delta members only, since there v_new = U - W H depends on H). */
static void SFX(stage_bwd_dh)(struct SFX(work) * w, const real *dST)
{
    int64_t K = w->K, V = w->V, KV = K * V, N = w->N;
    for (int64_t e = 0; e < KV; e++) w->dh[N * KV + e] = dST ? dST[e] : 0;
    for (int64_t n = N - 1; n >= 0; n--) {
        int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n);
        const real *dHn = w->dh + (n + 1) * KV, *Gl = w->G + (t0 + L - 1) * K;
        real *dH = w->dh + n * KV;
        for (int64_t j = 0; j < L; j++) {
            const real *kj = SFX(krow)(w, t0 + j), *Gj = w->G + (t0 + j) * K;
            real *dvn = w->dvn + (t0 + j) * V;
            for (int64_t c = 0; c < K; c++) {
                real kd = kj[c] * EXP(Gl[c] - Gj[c]);
                for (int64_t v = 0; v < V; v++) dvn[v] += kd * dHn[c * V + v];
            }
        }
        for (int64_t c = 0; c < K; c++) {
            real decay = EXP(Gl[c]);
            for (int64_t v = 0; v < V; v++) {
                real s = 0, s2 = 0;
                for (int64_t i = 0; i < L; i++) {
                    s += SFX(qrow)(w, t0 + i)[c] * EXP(w->G[(t0 + i) * K + c]) * SFX(dorow)(w, t0 + i)[v];
                    if (w->delta) s2 += w->W[(t0 + i) * K + c] * w->dvn[(t0 + i) * V + v];
                }
                dH[c * V + v] = decay * dHn[c * V + v] + w->scale * s - s2;
            }
        }
    }
}

/* Stage 8 (fla: chunk_bwd_dqkwg, whose dw part is stage 9 here): with v_new held fixed, the
 * gradients through the output and the state passing (dO_s = scale dO, E_ijc =
 * exp(G_ic - G_jc), last = the chunk's last row):
 *   o, inter:  dQ_ic += Gamma_ic (dO_s H^T)_ic,     dG_ic += Q_ic Gamma_ic (dO_s H^T)_ic
 *   o, intra:  dP_ij = dO_s_i . v_new_j (j <= i),   dQ_ic += sum_j dP_ij K_jc E_ijc,
 *              dK_jc += sum_i dP_ij Q_ic E_ijc,
 *              dG_ic += y, dG_jc -= y  with  y = dP_ij Q_ic K_jc E_ijc
 *   h[n+1]:    dKd_jc = v_new_j . dh[n+1]_c,        dK_jc += dKd_jc exp(G_last,c - G_jc),
 *              dG_jc -= z, dG_last,c += z, z = dKd_jc K_jc exp(G_last,c - G_jc),
 *              dG_last,c += Gamma_last,c (H_c . dh[n+1]_c). */
static void SFX(stage_bwd_dqkg)(struct SFX(work) * w, int64_t n)
{
    int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n), K = w->K, V = w->V, KV = K * V;
    const real *H = w->h + n * KV, *dHn = w->dh + (n + 1) * KV;
    const real *Gl = w->G + (t0 + L - 1) * K;
    real *dGl = w->dG + (t0 + L - 1) * K;
    for (int64_t i = 0; i < L; i++) {
        const real *qi = SFX(qrow)(w, t0 + i), *doi = SFX(dorow)(w, t0 + i);
        const real *Gi = w->G + (t0 + i) * K;
        real *dqi = w->dq + (t0 + i) * K, *dGi = w->dG + (t0 + i) * K;
        for (int64_t c = 0; c < K; c++) {
            real s = 0;
            for (int64_t v = 0; v < V; v++) s += doi[v] * H[c * V + v];
            real e = EXP(Gi[c]) * w->scale * s;
            dqi[c] += e;
            dGi[c] += qi[c] * e;
        }
        for (int64_t j = 0; j <= i; j++) {
            const real *kj = SFX(krow)(w, t0 + j), *Gj = w->G + (t0 + j) * K;
            real *dkj = w->dk + (t0 + j) * K, *dGj = w->dG + (t0 + j) * K;
            real dP = 0;
            for (int64_t v = 0; v < V; v++) dP += doi[v] * w->vn[(t0 + j) * V + v];
            dP *= w->scale;
            for (int64_t c = 0; c < K; c++) {
                real x = dP * EXP(Gi[c] - Gj[c]);
                real y = x * qi[c] * kj[c];
                dqi[c] += x * kj[c];
                dkj[c] += x * qi[c];
                dGi[c] += y;
                dGj[c] -= y;
            }
        }
    }
    for (int64_t j = 0; j < L; j++) {
        const real *kj = SFX(krow)(w, t0 + j), *Gj = w->G + (t0 + j) * K;
        const real *vnj = w->vn + (t0 + j) * V;
        for (int64_t c = 0; c < K; c++) {
            real dkd = 0;
            for (int64_t v = 0; v < V; v++) dkd += vnj[v] * dHn[c * V + v];
            real e = EXP(Gl[c] - Gj[c]);
            real z = dkd * kj[c] * e;
            w->dk[(t0 + j) * K + c] += dkd * e;
            w->dG[(t0 + j) * K + c] -= z;
            dGl[c] += z;
        }
    }
    for (int64_t c = 0; c < K; c++) {
        real s = 0;
        for (int64_t v = 0; v < V; v++) s += H[c * V + v] * dHn[c * V + v];
        dGl[c] += EXP(Gl[c]) * s;
    }
}

/* Stage 9 (fla: prepare_wy_repr_bwd): back through v_new = U - W H, U = A Bv,
 * W = A Bk with Bv = diag(b) V, Bk = diag(b) (K * Gamma), A = (I + Tm)^{-1}:
 *   dU = dv_new,  dW = -dv_new H^T,  dA = dU Bv^T + dW Bk^T,  dBv = A^T dU,  dBk = A^T dW
 *   dV_j += b_j dBv_j,   db_j += dBv_j . V_j + dBk_j . (K_j * Gamma_j)
 *   dK_jc += b_j Gamma_jc dBk_jc,   dG_jc += b_j K_jc Gamma_jc dBk_jc
 *   dTm = -A^T dA A^T (strictly lower part),   db_i += sum_{j<i} dTm_ij M_ij,   dM_ij = b_i dTm_ij
 *   dK_ic += dM_ij K_jc E_ijc,  dK_jc += dM_ij K_ic E_ijc,
 *   dG_ic += y, dG_jc -= y  with  y = dM_ij K_ic K_jc E_ijc.
 * For members without the delta term v_new = V, so dV = dv_new. */
static void SFX(stage_bwd_wy)(struct SFX(work) * w, int64_t n)
{
    int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n), K = w->K, V = w->V, C = w->C;
    if (!w->delta) {
        for (int64_t e = 0; e < L * V; e++) w->dv[t0 * V + e] += w->dvn[t0 * V + e];
        return;
    }
    const real *A = w->A + n * C * C, *H = w->h + n * K * V;
    real *dA = w->scr, *Y = dA + C * C, *dTm = Y + C * C;
    real *dW = dTm + C * C, *dBk = dW + C * K, *dBv = dBk + C * K;
    for (int64_t i = 0; i < L; i++)
        for (int64_t c = 0; c < K; c++) {
            real s = 0;
            for (int64_t v = 0; v < V; v++) s += w->dvn[(t0 + i) * V + v] * H[c * V + v];
            dW[i * K + c] = -s;
        }
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < L; j++) {
            real s = 0;
            if (j <= i) {
                const real *vj = SFX(vrow)(w, t0 + j), *kj = SFX(krow)(w, t0 + j);
                const real *Gj = w->G + (t0 + j) * K;
                real bj = w->b[(t0 + j) * w->ss], su = 0, sw = 0;
                for (int64_t v = 0; v < V; v++) su += w->dvn[(t0 + i) * V + v] * vj[v];
                for (int64_t c = 0; c < K; c++) sw += dW[i * K + c] * kj[c] * EXP(Gj[c]);
                s = bj * (su + sw);
            }
            dA[i * C + j] = s;
        }
    for (int64_t j = 0; j < L; j++) {
        const real *vj = SFX(vrow)(w, t0 + j), *kj = SFX(krow)(w, t0 + j);
        const real *Gj = w->G + (t0 + j) * K;
        real bj = w->b[(t0 + j) * w->ss], dbj = 0;
        for (int64_t v = 0; v < V; v++) {
            real s = 0;
            for (int64_t i = j; i < L; i++) s += A[i * C + j] * w->dvn[(t0 + i) * V + v];
            dBv[j * V + v] = s;
            w->dv[(t0 + j) * V + v] += bj * s;
            dbj += s * vj[v];
        }
        for (int64_t c = 0; c < K; c++) {
            real s = 0;
            for (int64_t i = j; i < L; i++) s += A[i * C + j] * dW[i * K + c];
            dBk[j * K + c] = s;
            real kg = kj[c] * EXP(Gj[c]);
            w->dk[(t0 + j) * K + c] += bj * EXP(Gj[c]) * s;
            w->dG[(t0 + j) * K + c] += bj * kg * s;
            dbj += s * kg;
        }
        w->db[t0 + j] += dbj;
    }
    /* Y = dA A^T, then dTm = -A^T Y; A is lower triangular, so the sums are over triangles. */
    for (int64_t m = 0; m < L; m++)
        for (int64_t l = 0; l < L; l++) {
            real s = 0;
            for (int64_t j = 0; j <= (m < l ? m : l); j++) s += dA[m * C + j] * A[l * C + j];
            Y[m * C + l] = s;
        }
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < i; j++) {
            real s = 0;
            for (int64_t m = i; m < L; m++) s += A[m * C + i] * Y[m * C + j];
            dTm[i * C + j] = -s;
        }
    for (int64_t i = 0; i < L; i++) {
        const real *ki = SFX(krow)(w, t0 + i), *Gi = w->G + (t0 + i) * K;
        real bi = w->b[(t0 + i) * w->ss], dbi = 0;
        for (int64_t j = 0; j < i; j++) {
            const real *kj = SFX(krow)(w, t0 + j), *Gj = w->G + (t0 + j) * K;
            real dM = bi * dTm[i * C + j], M = 0;
            for (int64_t c = 0; c < K; c++) {
                real E = EXP(Gi[c] - Gj[c]);
                real kk = ki[c] * kj[c] * E;
                M += kk;
                w->dk[(t0 + i) * K + c] += dM * kj[c] * E;
                w->dk[(t0 + j) * K + c] += dM * ki[c] * E;
                w->dG[(t0 + i) * K + c] += dM * kk;
                w->dG[(t0 + j) * K + c] -= dM * kk;
            }
            dbi += dTm[i * C + j] * M;
        }
        w->db[t0 + i] += dbi;
    }
}

/* Stage 10 (fla: chunk_local_cumsum with reverse=True): G is an inclusive cumsum of g, so
 * dg_i = sum_{i' >= i in the chunk} dG_i'; a scalar gate's dg is the sum over channels. */
static void SFX(stage_bwd_dg)(struct SFX(work) * w, int64_t n, real *dg)
{
    int64_t t0 = n * w->C, L = chunk_len(w->T, w->C, n), K = w->K;
    real *run = w->scr;
    for (int64_t c = 0; c < K; c++) run[c] = 0;
    for (int64_t i = L - 1; i >= 0; i--) {
        int64_t t = t0 + i;
        real s = 0;
        for (int64_t c = 0; c < K; c++) {
            run[c] += w->dG[t * K + c];
            if (w->gate == GDN_GATE_CHANNEL) dg[t * w->sqk + c] = run[c];
            s += run[c];
        }
        if (w->gate == GDN_GATE_HEAD) dg[t * w->ss] = s;
    }
}

// ---- drivers ------------------------------------------------------------------------------------

/* Stages 1-4 for one (b,h): everything the output and the backward read. */
static void SFX(forward_states)(struct SFX(work) * w, const real *S0)
{
    for (int64_t n = 0; n < w->N; n++) {
        SFX(stage_cumsum)(w, n);
        if (w->delta) {
            SFX(stage_kkt)(w, n);
            SFX(stage_solve_tril)(w, n);
            SFX(stage_wu)(w, n);
        }
    }
    SFX(stage_fwd_h)(w, S0);
}

int SFX(gdn_chunk_fwd)(enum gdn_family f, const struct gdn_dims *d, int64_t chunk, real scale, const IN_T *in, real *o,
                       real *ST)
{
    int64_t C;
    int rc = check_args(f, d, chunk, in && in->q && in->k && in->v && (o || d->T == 0), in && in->g, in && in->b, &C);
    if (rc) return rc;
    struct SFX(work) w;
    if ((rc = SFX(work_init)(&w, f, d, C, scale, false))) return rc;
    int64_t KV = d->K * d->V;
    for (int64_t b = 0; b < d->B; b++)
        for (int64_t h = 0; h < d->H; h++) {
            SFX(work_bind)(&w, d, in, NULL, b, h);
            SFX(forward_states)(&w, in->S0 ? in->S0 + (b * d->H + h) * KV : NULL);
            real *ob = o ? o + (b * d->T * d->H + h) * d->V : NULL;
            for (int64_t n = 0; n < w.N; n++) SFX(stage_fwd_o)(&w, n, ob, w.sv);
            if (ST) memcpy(ST + (b * d->H + h) * KV, w.h + w.N * KV, (size_t)KV * sizeof(real));
        }
    SFX(work_free)(&w);
    return GDN_OK;
}

int SFX(gdn_chunk_bwd)(enum gdn_family f, const struct gdn_dims *d, int64_t chunk, real scale, const IN_T *in,
                       const real *dO, const real *dST, const GRAD_T *out)
{
    int64_t C;
    bool have = in && in->q && in->k && in->v && out && (d->T == 0 || (dO && out->dq && out->dk && out->dv));
    int rc = check_args(f, d, chunk, have, in && in->g, in && in->b, &C);
    if (rc) return rc;
    struct SFX(work) w;
    if ((rc = SFX(work_init)(&w, f, d, C, scale, true))) return rc;
    int64_t T = d->T, K = d->K, V = d->V, KV = K * V;
    for (int64_t b = 0; b < d->B; b++)
        for (int64_t h = 0; h < d->H; h++) {
            int64_t r0 = b * T * d->H + h, s0 = (b * d->H + h) * KV;
            SFX(work_bind)(&w, d, in, dO, b, h);
            memset(w.dq, 0, (size_t)(T * K) * sizeof(real));
            memset(w.dk, 0, (size_t)(T * K) * sizeof(real));
            memset(w.dv, 0, (size_t)(T * V) * sizeof(real));
            memset(w.dG, 0, (size_t)(T * K) * sizeof(real));
            memset(w.db, 0, (size_t)T * sizeof(real));
            SFX(forward_states)(&w, in->S0 ? in->S0 + s0 : NULL);
            for (int64_t n = 0; n < w.N; n++) SFX(stage_bwd_dv_local)(&w, n);
            SFX(stage_bwd_dh)(&w, dST ? dST + s0 : NULL);
            for (int64_t n = 0; n < w.N; n++) {
                SFX(stage_bwd_dqkg)(&w, n);
                SFX(stage_bwd_wy)(&w, n);
                if (w.gate != GDN_GATE_NONE && out->dg)
                    SFX(stage_bwd_dg)(&w, n, out->dg + (w.gate == GDN_GATE_HEAD ? r0 : r0 * K));
            }
            for (int64_t t = 0; t < T; t++) {
                memcpy(out->dq + (r0 + t * d->H) * K, w.dq + t * K, (size_t)K * sizeof(real));
                memcpy(out->dk + (r0 + t * d->H) * K, w.dk + t * K, (size_t)K * sizeof(real));
                memcpy(out->dv + (r0 + t * d->H) * V, w.dv + t * V, (size_t)V * sizeof(real));
                if (w.delta && out->db) out->db[r0 + t * d->H] = w.db[t];
            }
            if (out->dS0) memcpy(out->dS0 + s0, w.dh, (size_t)KV * sizeof(real));
        }
    SFX(work_free)(&w);
    return GDN_OK;
}
