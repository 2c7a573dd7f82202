/*@kgate
name:    matmul_bad_index
op:      matmul
entry:   matmul
args:    A: in f32[M,K]; B: in f32[K,N]; C: out f32[M,N]; M: int; N: int; K: int
shape:   M=64 N=64 K=64
*/
// expect: fail accuracy accuracy
/* Planted bug: B indexed as if it were stored transposed; identical shapes make it run. */
void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++) acc += A[i * K + k] * B[j * K + k];
            C[i * N + j] = acc;
        }
}
