/*@kgate
name:    matmul
op:      matmul
entry:   matmul
args:    A: in f32[M,K]; B: in f32[K,N]; C: out f32[M,N]; M: int; N: int; K: int
shape:   M=128 N=96 K=200
sweep:   K=1,7,513
*/
// expect: pass
/* Blocked over K (a different order than the sequential reference): still fp32 accumulation. */
void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k0 = 0; k0 < K; k0 += 32) {
                float part = 0;
                for (int k = k0; k < K && k < k0 + 32; k++) part += A[(long)i * K + k] * B[(long)k * N + j];
                acc += part;
            }
            C[(long)i * N + j] = acc;
        }
}
