/*@kgate
name:    softmax_scratches_input
op:      softmax(dim=1)
entry:   softmax_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
shape:   M=64 N=300
*/
// expect: fail aliasing input-mutated
/* Planted bug: the input row is used as scratch for exp(x - max), casting away const. */
#include <math.h>
void softmax_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        float *r = (float *)x + (long)i * N;
        float m = -INFINITY, s = 0;
        for (int j = 0; j < N; j++) if (!(r[j] <= m)) m = r[j];
        for (int j = 0; j < N; j++) {
            r[j] = expf(r[j] - m);
            s += r[j];
        }
        for (int j = 0; j < N; j++) y[(long)i * N + j] = r[j] / s;
    }
}
