/*@kgate
name:    sum_threads_atomic
op:      sum(dim=0)
entry:   colsum
args:    x: in f32[M,N]; y: out f32[N]; M: int; N: int
shape:   M=4096 N=64
*/
// expect: fail determinism nondeterministic
/* Planted bug: four threads add their partial sums into the output in whatever order they
 * finish (an atomicAdd reduction on a CPU): the float result depends on the schedule. The
 * schedule is shuffled per call so that the bug shows even on an idle machine. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct part { const float *x; float *y; int r0, r1, N; unsigned delay; pthread_mutex_t *mu; };

static void *work(void *p)
{
    struct part *t = p;
    float acc[64] = {0};
    for (int i = t->r0; i < t->r1; i++)
        for (int j = 0; j < t->N && j < 64; j++) acc[j] += t->x[(long)i * t->N + j];
    usleep(t->delay);
    pthread_mutex_lock(t->mu);
    for (int j = 0; j < t->N && j < 64; j++) t->y[j] += acc[j];
    pthread_mutex_unlock(t->mu);
    return NULL;
}

int colsum(const float *x, float *y, int M, int N)
{
    if (N > 64) return 1;
    static unsigned seed;
    if (!seed) seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_t th[4];
    struct part p[4];
    for (int j = 0; j < N; j++) y[j] = 0;
    for (int t = 0; t < 4; t++) {
        p[t] = (struct part){x, y, M * t / 4, M * (t + 1) / 4, N, (unsigned)(rand_r(&seed) % 2000), &mu};
        pthread_create(&th[t], NULL, work, &p[t]);
    }
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    return 0;
}
