/*@kgate
name:    softmax_cached
op:      softmax(dim=1)
entry:   softmax_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
shape:   M=64 N=256
*/
// expect: fail freshness stale-result
/* Planted bug: "if we were called with the same pointers, the answer is already there":
 * a cache keyed on the input and output pointers, which breaks when the caller rewrites the
 * input in place. */
#include <math.h>
static const float *last_x;
static float *last_y;
void softmax_rows(const float *x, float *y, int M, int N)
{
    if (x == last_x && y == last_y) return;
    last_x = x;
    last_y = y;
    for (int i = 0; i < M; i++) {
        const float *r = x + (long)i * N;
        float m = -INFINITY, s = 0;
        for (int j = 0; j < N; j++) if (!(r[j] <= m)) m = r[j];
        for (int j = 0; j < N; j++) s += expf(r[j] - m);
        for (int j = 0; j < N; j++) y[(long)i * N + j] = expf(r[j] - m) / s;
    }
}
