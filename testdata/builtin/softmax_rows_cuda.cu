/*@kgate
name:    softmax_rows
op:      softmax(dim=1)
entry:   softmax_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
launch:  grid=M block=256 smem=0
shape:   M=512 N=1000
sweep:   M=1,3,64 N=1,7,255,256,257,4097
*/
// expect: pass
// builtin: row softmax, CUDA: one block per row, a fixed-order shared-memory reduction
/* The demo kernel on the GPU: one block per row, a NaN-propagating max and a sum reduced
 * through shared memory in a fixed order (deterministic), the max subtracted before expf. */

__device__ float nanmax(float a, float b)
{
    return (a != a || a > b) ? a : b; /* keeps a NaN from either side */
}

extern "C" __global__ void softmax_rows(const float *x, float *y, int M, int N)
{
    __shared__ float red[256];
    const float *r = x + (long)blockIdx.x * N;
    float *o = y + (long)blockIdx.x * N;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < N; j += blockDim.x) m = nanmax(r[j], m);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = nanmax(red[threadIdx.x + s], red[threadIdx.x]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0;
    for (int j = threadIdx.x; j < N; j += blockDim.x) sum += expf(r[j] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (int j = threadIdx.x; j < N; j += blockDim.x) o[j] = expf(r[j] - m) / sum;
}
