/* libgdn.cu: the C ABI of gdn/libgdn.h -- argument checks, the workspace size, dispatch to the
 * per-member launchers (gdn/libgdn_<member>.cu), and error reporting. Built by nvcc into
 * libgdn.so with the CUDA runtime linked statically (gdn/local.mk). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "libgdn.h"
#include "libgdn_impl.cuh"

static_assert(GLR_LINEAR == GDN_LINEAR && GLR_GLA == GDN_GLA && GLR_SSD == GDN_SSD && GLR_GDN == GDN_GDN &&
                  GLR_KDA == GDN_KDA,
              "glr_common.cuh's member numbers must be enum gdn_family's");
static_assert(GDN_ECUDA == -100, "GDN_CUDA_TRY returns -100");

// ---- errors -----------------------------------------------------------------------------------

static thread_local char gdn_last_error[512];

void gdn_lib_set_error(const char *file, int line, const char *call, cudaError_t e)
{
    snprintf(gdn_last_error, sizeof gdn_last_error, "%s:%d: %s: %s (%s)", file, line, call, cudaGetErrorString(e),
             cudaGetErrorName(e));
}

extern "C" const char *gdn_cuda_last_error(void)
{
    return gdn_last_error;
}

extern "C" const char *gdn_cuda_strerror(int rc)
{
    switch (rc) {
    case GDN_OK: return "ok";
    case GDN_EINVAL: return "invalid argument";
    case GDN_ENOMEM: return "out of memory";
    case GDN_ECUDA: return "CUDA error (see gdn_cuda_last_error)";
    case GDN_EUNSUPPORTED: return "unsupported by the CUDA kernels (need 1 <= K, V <= 128, B, H <= 65535)";
    case GDN_EWORKSPACE: return "workspace missing or too small (see gdn_cuda_bwd_workspace)";
    default: return "unknown error";
    }
}

// ---- checks -----------------------------------------------------------------------------------

/* libgdn needs only oracle.h's types, not oracle.c: these mirror gdn_family_has_gate/_delta. */
static bool has_gate(enum gdn_family f)
{
    return glr_gate_kind(f) != GLR_GATE_NONE;
}

static bool has_delta(enum gdn_family f)
{
    return glr_has_delta(f);
}

extern "C" int gdn_cuda_supported(enum gdn_family f, const struct gdn_dims *d)
{
    if ((unsigned)f >= GDN_NFAMILIES || !d || d->B < 1 || d->T < 0 || d->H < 1 || d->K < 1 || d->V < 1)
        return GDN_EINVAL;
    /* K, V: the shared-memory tiles; B, H: grid dims; T: int step indices inside the kernels. */
    if (d->K > GLR_KMAX || d->V > GLR_KMAX || d->B > 65535 || d->H > 65535 || d->T > INT32_MAX / 2)
        return GDN_EUNSUPPORTED;
    if ((double)d->B * (double)d->H * ((double)d->T + 64) * 128.0 * 129.0 > 0x1p62) /* int64 offsets, workspace */
        return GDN_EUNSUPPORTED;
    return GDN_OK;
}

extern "C" size_t gdn_cuda_bwd_workspace(enum gdn_family f, const struct gdn_dims *d)
{
    if (gdn_cuda_supported(f, d) != GDN_OK) return 0;
    return (size_t)d->B * (size_t)d->H * (size_t)glr_bwd_ws_floats(d->T, (int)d->K, (int)d->V) * sizeof(float);
}

static bool aligned(const void *p, size_t a)
{
    return ((uintptr_t)p % a) == 0;
}

/* Fills c from the common arguments; checks what both directions need. */
static int prepare(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d, double scale,
                   const struct gdn_dev_in *in, void *stream, gdn_lib_call *c)
{
    int rc = gdn_cuda_supported(f, d);
    if (rc) return rc;
    if ((dt != GDN_DTYPE_F32 && dt != GDN_DTYPE_BF16) || !in || !in->q || !in->k || !in->v) return GDN_EINVAL;
    if ((has_gate(f) && !in->g) || (has_delta(f) && !in->b)) return GDN_EINVAL;
    const size_t es = dt == GDN_DTYPE_BF16 ? 2 : 4;
    if (!aligned(in->q, es) || !aligned(in->k, es) || !aligned(in->v, es) || !aligned(in->b, es) ||
        !aligned(in->g, 4) || !aligned(in->S0, 4))
        return GDN_EINVAL;
    *c = gdn_lib_call{};
    c->bf16 = dt == GDN_DTYPE_BF16;
    c->B = (int)d->B, c->T = (int)d->T, c->H = (int)d->H, c->K = (int)d->K, c->V = (int)d->V;
    c->scale = (float)(isnan(scale) ? 1.0 / sqrt((double)d->K) : scale);
    c->q = in->q, c->k = in->k, c->v = in->v;
    c->g = has_gate(f) ? in->g : nullptr;
    c->b = has_delta(f) ? in->b : nullptr;
    c->S0 = in->S0;
    c->stream = (cudaStream_t)stream;
    return GDN_OK;
}

// ---- dispatch ---------------------------------------------------------------------------------

extern "C" int gdn_cuda_fwd(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d, double scale,
                            const struct gdn_dev_in *in, void *o, float *ST, void *stream)
{
    gdn_lib_call c;
    int rc = prepare(f, dt, d, scale, in, stream, &c);
    if (rc) return rc;
    if ((d->T > 0 && !o) || !aligned(o, dt == GDN_DTYPE_BF16 ? 2 : 4) || !aligned(ST, 4)) return GDN_EINVAL;
    c.o = o, c.ST = ST;
    switch (f) {
    case GDN_LINEAR: return gdn_lib_fwd_linear(c);
    case GDN_GLA: return gdn_lib_fwd_gla(c);
    case GDN_SSD: return gdn_lib_fwd_ssd(c);
    case GDN_GDN: return gdn_lib_fwd_gdn(c);
    case GDN_KDA: return gdn_lib_fwd_kda(c);
    }
    return GDN_EINVAL;
}

extern "C" int gdn_cuda_bwd(enum gdn_family f, enum gdn_dtype dt, const struct gdn_dims *d, double scale,
                            const struct gdn_dev_in *in, const void *dO, const float *dST,
                            const struct gdn_dev_grad *out, void *ws, size_t ws_bytes, void *stream)
{
    gdn_lib_call c;
    int rc = prepare(f, dt, d, scale, in, stream, &c);
    if (rc) return rc;
    const size_t es = dt == GDN_DTYPE_BF16 ? 2 : 4;
    if (!out || (d->T > 0 && (!dO || !out->dq || !out->dk || !out->dv))) return GDN_EINVAL;
    if (!aligned(dO, es) || !aligned(out->dq, es) || !aligned(out->dk, es) || !aligned(out->dv, es) ||
        !aligned(dST, 4) || !aligned(out->dg, 4) || !aligned(out->db, 4) || !aligned(out->dS0, 4))
        return GDN_EINVAL;
    if (!ws || ws_bytes < gdn_cuda_bwd_workspace(f, d) || !aligned(ws, 4)) return GDN_EWORKSPACE;
    c.dO = dO, c.dST = dST;
    c.dq = out->dq, c.dk = out->dk, c.dv = out->dv;
    c.dg = has_gate(f) ? out->dg : nullptr;
    c.db = has_delta(f) ? out->db : nullptr;
    c.dS0 = out->dS0;
    c.ws = (float *)ws;
    switch (f) {
    case GDN_LINEAR: return gdn_lib_bwd_linear(c);
    case GDN_GLA: return gdn_lib_bwd_gla(c);
    case GDN_SSD: return gdn_lib_bwd_ssd(c);
    case GDN_GDN: return gdn_lib_bwd_gdn(c);
    case GDN_KDA: return gdn_lib_bwd_kda(c);
    }
    return GDN_EINVAL;
}
