/*@kgate
name:    gelu_fast
op:      gelu
entry:   gelu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=65536
*/
// expect: fail accuracy approximation
/* Planted bug: the tanh approximation of GELU where the exact (erf) GELU is specified: off by
 * up to ~1e-3, invisible to allclose(atol=rtol=1e-2). */
#include <math.h>
void gelu(const float *x, float *y, int N)
{
    for (int i = 0; i < N; i++) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}
