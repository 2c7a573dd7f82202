/*@kgate
name:    gelu_multi
op:      gelu
entry:   gelu
args:    x: in T[N]; y: out T[N]; N: int
dtypes:  f32,bf16,f16
launch:  grid=cdiv(N,256) block=256
shape:   N=100000
*/
// expect: pass
/* One source for three dtypes: KG_T is float, __nv_bfloat16 or __half; computed in float. */
__device__ float ld(float v) { return v; }
__device__ float ld(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ float ld(__half v) { return __half2float(v); }
__device__ void st(float *p, float v) { *p = v; }
__device__ void st(__nv_bfloat16 *p, float v) { *p = __float2bfloat16(v); }
__device__ void st(__half *p, float v) { *p = __float2half(v); }

extern "C" __global__ void gelu(const KG_T *x, KG_T *y, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float v = ld(x[i]);
        st(&y[i], 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
    }
}
