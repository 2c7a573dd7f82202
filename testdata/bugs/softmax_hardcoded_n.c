/*@kgate
name:    softmax_hardcoded
op:      softmax(dim=1)
entry:   softmax_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
shape:   M=128 N=1000
*/
// expect: fail shapes shape-specific
/* Planted bug: the row length is baked in for the benchmark's shape. */
#include <math.h>
#define COLS 1000
void softmax_rows(const float *x, float *y, int M, int N)
{
    (void)N;
    for (int i = 0; i < M; i++) {
        const float *r = x + (long)i * N;
        float m = -INFINITY, s = 0;
        for (int j = 0; j < COLS && j < N; j++) if (!(r[j] <= m)) m = r[j];
        for (int j = 0; j < COLS && j < N; j++) s += expf(r[j] - m);
        for (int j = 0; j < N; j++) y[(long)i * N + j] = j < COLS ? expf(r[j] - m) / s : 0.0f;
    }
}
