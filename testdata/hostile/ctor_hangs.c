/*@kgate
name:    ctor_hangs
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=1000
*/
/* Hostile: a constructor that never returns. It runs inside dlopen, when the worker loads the
 * compiled kernel, before any gate: loading must be under the run's time limit. */
#include <unistd.h>

__attribute__((constructor)) static void never_returns(void)
{
    for (;;) sleep(1000);
}

void relu(const float *x, float *y, int N)
{
    for (int i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0;
}
