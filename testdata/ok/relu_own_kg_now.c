/*@kgate
name:    relu_own_kg_now
op:      relu
entry:   relu_own_kg_now
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=4099
sweep:   N=1,7,64
*/
// expect: pass
// A correct ReLU whose helper happens to share its name with a function of kgate's own library
// (kg_now). The worker that loads the kernel is kgate: unless the kernel's references bind to
// its own definitions (-Bsymbolic), the call lands in kgate's kg_now and returns a clock reading.
#include <kgate.h>

float kg_now(float v)
{
    return v < 0 ? 0.0f : v;
}

void relu_own_kg_now(const float *x, float *y, int N)
{
    for (int i = 0; i < N; i++) y[i] = kg_now(x[i]);
}
