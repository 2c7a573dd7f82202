/*@kgate
name:    softmax_no_max
op:      softmax(dim=1)
entry:   softmax_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
shape:   M=64 N=256
*/
// expect: fail precision reduction-order
/* Planted bug: softmax without subtracting the row maximum: exact enough for N(0,1) inputs,
 * Inf/Inf = NaN once a logit exceeds ~88. */
#include <math.h>
void softmax_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        float s = 0;
        for (int j = 0; j < N; j++) s += expf(x[(long)i * N + j]);
        for (int j = 0; j < N; j++) y[(long)i * N + j] = expf(x[(long)i * N + j]) / s;
    }
}
