/*@kgate
name:    softmax_global_scratch
op:      softmax(dim=1)
entry:   softmax_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
launch:  grid=M block=128
shape:   M=2048 N=1000
*/
// expect: fail placement
/* Planted bug: row maxima and sums kept in __device__ globals shared by every launch. One
 * launch at a time it is right; two launches at once on two streams overwrite each other's
 * statistics. */
__device__ float g_max[65536], g_sum[65536];

extern "C" __global__ void softmax_rows(const float *x, float *y, int M, int N)
{
    const float *r = x + (long)blockIdx.x * N;
    if (threadIdx.x == 0) {
        float m = -INFINITY, s = 0.0f;
        for (int j = 0; j < N; j++) m = (r[j] != r[j] || r[j] > m) ? r[j] : m;
        g_max[blockIdx.x] = m;
        for (int j = 0; j < N; j++) s += expf(r[j] - m);
        g_sum[blockIdx.x] = s;
    }
    __syncthreads();
    /* give the other launch time to overwrite the statistics */
    for (volatile int spin = 0; spin < 2000; spin++) {}
    float m = g_max[blockIdx.x], s = g_sum[blockIdx.x];
    for (int j = threadIdx.x; j < N; j += blockDim.x) y[(long)blockIdx.x * N + j] = expf(r[j] - m) / s;
}
