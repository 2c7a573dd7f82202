/*@kgate
name:    relu_fmaxf
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=100000
*/
// expect: fail nonfinite nan-swallowed
/* Planted bug: fmaxf(x, 0) returns 0 for NaN: the NaN is swallowed. */
#include <math.h>
void relu(const float *x, float *y, int N)
{
    for (int i = 0; i < N; i++) y[i] = fmaxf(x[i], 0.0f);
}
