/*@kgate
name:    matmul_tiled
op:      matmul
entry:   matmul
args:    A: in f32[M,K]; B: in f32[K,N]; C: out f32[M,N]; M: int; N: int; K: int
launch:  grid=(cdiv(N,16),cdiv(M,16)) block=(16,16)
shape:   M=256 N=192 K=320
sweep:   K=1,17,1000
*/
// expect: pass
/* 16x16 shared-memory tiles with bounds checks on every load and the store; fp32 FMA. */
#define TILE 16
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = row < M && ka < K ? A[(long)row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = kb < K && col < N ? B[(long)kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(long)row * N + col] = acc;
}
