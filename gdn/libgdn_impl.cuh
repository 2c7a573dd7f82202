/* libgdn_impl.cuh: libgdn's __global__ wrappers around glr_fwd_body / glr_bwd_body and their
 * launchers, templated on the member; each gdn/libgdn_<member>.cu instantiates one member (so the
 * five compile in parallel) and gdn/libgdn.cu checks arguments and dispatches. Host + device
 * code, nvcc only (not part of what kgate compiles). */
#ifndef GDN_LIBGDN_IMPL_CUH
#define GDN_LIBGDN_IMPL_CUH

#include <cuda_runtime.h>

#include "glr_bwd.cuh"
#include "glr_fwd.cuh"

/* Everything a launch needs, already checked by libgdn.cu. */
struct gdn_lib_call {
    int bf16; /* 0: fp32 inputs, 1: bf16 */
    int B, T, H, K, V;
    float scale;
    const void *q, *k, *v, *b, *dO;
    const float *g, *S0, *dST;
    void *o, *dq, *dk, *dv;
    float *ST, *dg, *db, *dS0, *ws;
    cudaStream_t stream;
};

/* Records "file:line: call: message" for gdn_cuda_last_error (libgdn.cu). */
void gdn_lib_set_error(const char *file, int line, const char *call, cudaError_t e);

#define GDN_CUDA_TRY(call)                                                                                             \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            gdn_lib_set_error(__FILE__, __LINE__, #call, e_);                                                          \
            return -100; /* GDN_ECUDA */                                                                               \
        }                                                                                                              \
    } while (0)

// ---- kernels ----------------------------------------------------------------------------------

template <int F, class Tin>
__global__ void __launch_bounds__(GLR_THREADS, 1)
    gdn_lib_fwd_kernel(const Tin *q, const Tin *k, const Tin *v, const float *g, const Tin *b, const float *S0, Tin *o,
                       float *ST, int B, int T, int H, int K, int V, float scale)
{
    glr_fwd_body<F, Tin>(q, k, v, g, b, S0, o, ST, B, T, H, K, V, scale);
}

template <int F, class Tin>
__global__ void __launch_bounds__(GLR_THREADS, 1)
    gdn_lib_bwd_kernel(const Tin *q, const Tin *k, const Tin *v, const float *g, const Tin *b, const float *S0,
                       const Tin *dO, const float *dST, Tin *dq, Tin *dk, Tin *dv, float *dg, float *db, float *dS0,
                       float *ws, int B, int T, int H, int K, int V, float scale)
{
    glr_bwd_body<F, Tin>(q, k, v, g, b, S0, dO, dST, dq, dk, dv, dg, db, dS0, ws, B, T, H, K, V, scale);
}

// ---- launchers --------------------------------------------------------------------------------

template <int F, class Tin> static int gdn_lib_fwd_t(const gdn_lib_call &c)
{
    const unsigned smem = glr_smem_bytes(F, c.K, false);
    GDN_CUDA_TRY(
        cudaFuncSetAttribute(gdn_lib_fwd_kernel<F, Tin>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const dim3 grid((unsigned)((c.V + GLR_BV - 1) / GLR_BV), (unsigned)c.H, (unsigned)c.B);
    gdn_lib_fwd_kernel<F, Tin><<<grid, GLR_THREADS, smem, c.stream>>>(
        (const Tin *)c.q, (const Tin *)c.k, (const Tin *)c.v, c.g, (const Tin *)c.b, c.S0, (Tin *)c.o, c.ST, c.B, c.T,
        c.H, c.K, c.V, c.scale);
    GDN_CUDA_TRY(cudaGetLastError());
    return 0;
}

template <int F, class Tin> static int gdn_lib_bwd_t(const gdn_lib_call &c)
{
    const unsigned smem = glr_smem_bytes(F, c.K, true);
    GDN_CUDA_TRY(
        cudaFuncSetAttribute(gdn_lib_bwd_kernel<F, Tin>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const dim3 grid((unsigned)c.H, (unsigned)c.B);
    gdn_lib_bwd_kernel<F, Tin><<<grid, GLR_THREADS, smem, c.stream>>>(
        (const Tin *)c.q, (const Tin *)c.k, (const Tin *)c.v, c.g, (const Tin *)c.b, c.S0, (const Tin *)c.dO, c.dST,
        (Tin *)c.dq, (Tin *)c.dk, (Tin *)c.dv, c.dg, c.db, c.dS0, c.ws, c.B, c.T, c.H, c.K, c.V, c.scale);
    GDN_CUDA_TRY(cudaGetLastError());
    return 0;
}

/* Defines gdn_lib_fwd_NAME / gdn_lib_bwd_NAME for member F, both dtypes. */
#define GDN_LIB_MEMBER(F, NAME)                                                                                        \
    int gdn_lib_fwd_##NAME(const gdn_lib_call &c)                                                                      \
    {                                                                                                                  \
        return c.bf16 ? gdn_lib_fwd_t<F, __nv_bfloat16>(c) : gdn_lib_fwd_t<F, float>(c);                               \
    }                                                                                                                  \
    int gdn_lib_bwd_##NAME(const gdn_lib_call &c)                                                                      \
    {                                                                                                                  \
        return c.bf16 ? gdn_lib_bwd_t<F, __nv_bfloat16>(c) : gdn_lib_bwd_t<F, float>(c);                               \
    }

#define GDN_LIB_DECLARE(NAME)                                                                                          \
    int gdn_lib_fwd_##NAME(const gdn_lib_call &c);                                                                     \
    int gdn_lib_bwd_##NAME(const gdn_lib_call &c);

GDN_LIB_DECLARE(linear)
GDN_LIB_DECLARE(gla)
GDN_LIB_DECLARE(ssd)
GDN_LIB_DECLARE(gdn)
GDN_LIB_DECLARE(kda)

#endif
