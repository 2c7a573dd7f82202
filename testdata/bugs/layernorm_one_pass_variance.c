/*@kgate
name:    layernorm_one_pass
op:      layernorm(eps=1e-5)
entry:   layernorm
args:    x: in f32[M,N]; w: in f32[N]; b: in f32[N]; y: out f32[M,N]; M: int; N: int
shape:   M=64 N=512
*/
// expect: fail precision reduction-order
/* Planted bug: variance as E[x^2] - E[x]^2 in float: catastrophic cancellation once the mean
 * is large compared with the spread. */
#include <math.h>
void layernorm(const float *x, const float *w, const float *b, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        const float *r = x + (long)i * N;
        float s = 0, ss = 0;
        for (int j = 0; j < N; j++) {
            s += r[j];
            ss += r[j] * r[j];
        }
        float mean = s / N, var = ss / N - mean * mean;
        float inv = 1.0f / sqrtf(var + 1e-5f);
        for (int j = 0; j < N; j++) y[(long)i * N + j] = (r[j] - mean) * inv * w[j] + b[j];
    }
}
