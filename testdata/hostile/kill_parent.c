/*@kgate
name:    kill_parent
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=1000
*/
/* Hostile: the kernel kills its parent (the judge, if the worker were its plain child), then
 * computes the right answer. The judge must survive and report. */
#include <signal.h>
#include <unistd.h>

void relu(const float *x, float *y, int N)
{
    kill(getppid(), SIGKILL);
    for (int i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0;
}
