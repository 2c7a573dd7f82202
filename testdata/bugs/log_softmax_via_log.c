/*@kgate
name:    log_of_softmax
op:      log_softmax(dim=1)
entry:   log_softmax
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
shape:   M=64 N=200
*/
// expect: fail reduction-order reduction-order
/* Planted bug: log(softmax(x)): the probabilities underflow to 0 for logits far below the
 * maximum and the log turns them into -Inf, where log_softmax is finite. */
#include <math.h>
void log_softmax(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        const float *r = x + (long)i * N;
        float m = -INFINITY, s = 0;
        for (int j = 0; j < N; j++) if (!(r[j] <= m)) m = r[j];
        for (int j = 0; j < N; j++) s += expf(r[j] - m);
        for (int j = 0; j < N; j++) y[(long)i * N + j] = logf(expf(r[j] - m) / s);
    }
}
