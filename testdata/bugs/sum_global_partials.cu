/*@kgate
name:    sum_global_partials
op:      sum(dim=1)
entry:   sum_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
launch:  grid=(M,4) block=256
shape:   M=64 N=4096
*/
// expect: fail placement wrong-stream
/* Planted bug: a two-phase reduction through a __device__ partials array and a __device__
 * arrival counter (the "last block finishes" pattern) with no per-launch workspace: correct
 * alone, corrupted when two launches overlap (the spin stands for a longer first phase). */
__device__ float g_part[1 << 16][4];
__device__ unsigned int g_arrived[1 << 16];

extern "C" __global__ void sum_rows(const float *x, float *y, int M, int N)
{
    __shared__ float red[256];
    __shared__ bool last;
    int row = blockIdx.x, part = blockIdx.y, per = (N + 3) / 4;
    const float *r = x + (long)row * N;
    float s = 0.0f;
    for (int j = part * per + threadIdx.x; j < N && j < (part + 1) * per; j += blockDim.x) s += r[j];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        g_part[row][part] = red[0];
        long long t0 = clock64();
        while (clock64() - t0 < 400000) {}
        __threadfence();
        last = atomicAdd(&g_arrived[row], 1u) % 4 == 3;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        __threadfence();
        y[row] = ((g_part[row][0] + g_part[row][1]) + g_part[row][2]) + g_part[row][3];
    }
}
