/*@kgate
name:    matmul_tf32
op:      matmul
entry:   matmul
args:    A: in f32[M,K]; B: in f32[K,N]; C: out f32[M,N]; M: int; N: int; K: int
shape:   M=32 N=32 K=64
*/
// expect: fail accuracy tf32
/* Planted bug: operands truncated to 10 mantissa bits before multiplying, as TF32 tensor
 * cores do when an fp32 matmul silently allows them. */
#include <string.h>
#include <stdint.h>
static float tf32(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u &= 0xffffe000u;
    memcpy(&v, &u, 4);
    return v;
}
void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++) acc += tf32(A[i * K + k]) * tf32(B[k * N + j]);
            C[i * N + j] = acc;
        }
}
