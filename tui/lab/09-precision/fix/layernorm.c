/*@kgate
name:    layernorm
op:      layernorm(eps=1e-5)
entry:   layernorm
args:    x: in f32[M,N]; w: in f32[N]; b: in f32[N]; y: out f32[M,N]; M: int; N: int
shape:   M=64 N=512
*/
#include <math.h>
void layernorm(const float *x, const float *w, const float *b, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        const float *r = x + (long)i * N;
        float s = 0, ss = 0;
        for (int j = 0; j < N; j++) s += r[j];
        float mean = s / N;
        for (int j = 0; j < N; j++) ss += (r[j] - mean) * (r[j] - mean);
        float var = ss / N;
        float inv = 1.0f / sqrtf(var + 1e-5f);
        for (int j = 0; j < N; j++) y[(long)i * N + j] = (r[j] - mean) * inv * w[j] + b[j];
    }
}
