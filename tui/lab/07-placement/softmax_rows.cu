/*@kgate
name:    softmax_rows
op:      softmax(dim=1)
entry:   softmax_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
launch:  grid=M block=128
shape:   M=64 N=1000
*/
__device__ float g_max[65536], g_sum[65536];

extern "C" __global__ void softmax_rows(const float *x, float *y, int M, int N)
{
    const float *r = x + (long)blockIdx.x * N;
    if (threadIdx.x == 0) {
        float m = -INFINITY, s = 0.0f;
        for (int j = 0; j < N; j++) m = (r[j] != r[j] || r[j] > m) ? r[j] : m;
        for (int j = 0; j < N; j++) s += expf(r[j] - m);
        g_max[blockIdx.x] = m;
        g_sum[blockIdx.x] = s;
    }
    long long t0 = clock64();
    while (clock64() - t0 < 400000) {
    }
    __syncthreads();
    float m = ((volatile float *)g_max)[blockIdx.x], s = ((volatile float *)g_sum)[blockIdx.x];
    for (int j = threadIdx.x; j < N; j += blockDim.x) y[(long)blockIdx.x * N + j] = expf(r[j] - m) / s;
}
