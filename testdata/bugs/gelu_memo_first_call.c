/*@kgate
name:    gelu_memo
op:      gelu
entry:   gelu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=4096
*/
// expect: fail freshness stale-result
/* Planted bug: the result of the first call is kept and replayed for any call of the same
 * size (a benchmark-driven "optimisation"). */
#include <math.h>
#include <string.h>
static float memo[1 << 16];
static int memo_n = -1;
void gelu(const float *x, float *y, int N)
{
    if (N == memo_n) {
        memcpy(y, memo, (size_t)N * sizeof *y);
        return;
    }
    for (int i = 0; i < N; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f));
    if (N <= (int)(sizeof memo / sizeof *memo)) {
        memcpy(memo, y, (size_t)N * sizeof *y);
        memo_n = N;
    }
}
