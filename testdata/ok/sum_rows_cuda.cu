/*@kgate
name:    sum_rows_cuda
op:      sum(dim=1)
entry:   sum_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
launch:  grid=M block=256
shape:   M=512 N=1000
*/
// expect: pass
/* One block per row; a fixed-order shared-memory tree: deterministic, no atomics. */
__global__ void sum_rows(const float *x, float *y, int M, int N)
{
    __shared__ float red[256];
    const float *r = x + (long)blockIdx.x * N;
    float s = 0.0f;
    for (int j = threadIdx.x; j < N; j += blockDim.x) s += r[j];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = red[0];
}
