/*@kgate
name:    colsum_atomic
op:      sum(dim=0)
entry:   colsum
args:    x: in f32[M,N]; y: out f32[N]; M: int; N: int
launch:  grid=cdiv(N,32) block=(32,32)
shape:   M=131072 N=64
*/
// expect: fail determinism nondeterministic
/* Planted bug: 32 warps combine their partial column sums with atomicAdd on shared memory.
 * The order of the adds follows the warp schedule, so the float result changes bits from run
 * to run while staying accurate: the standard test cannot see it. */
extern "C" __global__ void colsum(const float *x, float *y, int M, int N)
{
    __shared__ float acc[32];
    int c = blockIdx.x * 32 + threadIdx.x;
    if (threadIdx.y == 0) acc[threadIdx.x] = 0.0f;
    __syncthreads();
    float s = 0.0f;
    if (c < N)
        for (int r = threadIdx.y; r < M; r += 32) s += x[(long)r * N + c];
    atomicAdd(&acc[threadIdx.x], s);
    __syncthreads();
    if (threadIdx.y == 0 && c < N) y[c] = acc[threadIdx.x];
}
