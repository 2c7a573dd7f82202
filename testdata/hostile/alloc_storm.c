/*@kgate
name:    alloc_storm
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=1000
*/
/* Hostile: the kernel allocates and touches memory without bound (and, as such kernels do,
 * never checks what malloc returned). Without a limit it takes the machine down; with one the
 * worker dies and the verdict says out of memory. */
#include <stdlib.h>
#include <string.h>

void relu(const float *x, float *y, int N)
{
    for (;;) {
        char *p = malloc(64 << 20);
        memset(p, 1, 64 << 20);
    }
    for (int i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0;
}
