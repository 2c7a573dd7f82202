/*@kgate
name:    layernorm_cuda
op:      layernorm(eps=1e-5)
entry:   layernorm
args:    x: in f32[M,N]; w: in f32[N]; b: in f32[N]; y: out f32[M,N]; M: int; N: int
launch:  grid=M block=128
shape:   M=256 N=768
*/
// expect: pass
/* One block per row, two-pass variance, fixed-order shared-memory reductions. */
__device__ float block_sum(float v, float *red)
{
    red[threadIdx.x] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    float s = red[0];
    __syncthreads();
    return s;
}

extern "C" __global__ void layernorm(const float *x, const float *w, const float *b, float *y, int M, int N)
{
    __shared__ float red[128];
    const float *r = x + (long)blockIdx.x * N;
    float s = 0.0f;
    for (int j = threadIdx.x; j < N; j += blockDim.x) s += r[j];
    float mean = block_sum(s, red) / N;
    float v = 0.0f;
    for (int j = threadIdx.x; j < N; j += blockDim.x) v += (r[j] - mean) * (r[j] - mean);
    float inv = rsqrtf(block_sum(v, red) / N + 1e-5f);
    for (int j = threadIdx.x; j < N; j += blockDim.x) y[(long)blockIdx.x * N + j] = (r[j] - mean) * inv * w[j] + b[j];
}
