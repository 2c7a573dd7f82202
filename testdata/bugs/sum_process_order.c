/*@kgate
name:    sum_process_order
op:      sum(dim=1)
entry:   sum_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
shape:   M=128 N=1000
*/
// expect: fail determinism nondeterministic
/* Planted bug: state of the process, not of the call. The first call in a process picks the
 * order of every row sum from the clock (where it starts, which way it goes): accurate every
 * time, bit-identical however often one process calls it, different in the next process (as a
 * kernel that keys its tuning or its workspace on something the process picked at start). Only
 * the determinism gate's last run, in a fresh process, can see it; two processes pick the same
 * order about once in 2,000. */
#include <time.h>

static int order = -1;

void sum_rows(const float *x, float *y, int M, int N)
{
    if (order < 0) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        order = (int)((t.tv_nsec / 64) % (2 * N));
    }
    int start = order % N, step = order < N ? 1 : N - 1;
    for (int i = 0; i < M; i++) {
        float s = 0;
        for (int j = 0, c = start; j < N; j++, c = (c + step) % N) s += x[(long)i * N + c];
        y[i] = s;
    }
}
