/*@kgate
name:    gelu
op:      gelu
entry:   gelu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=65536
*/
// expect: pass
#include <math.h>
void gelu(const float *x, float *y, int N)
{
    for (int i = 0; i < N; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}
