/*@kgate
name:    rmsnorm
op:      rmsnorm(eps=1e-6)
entry:   rmsnorm
args:    x: in f32[M,N]; w: in f32[N]; y: out f32[M,N]; M: int; N: int
shape:   M=64 N=1024
*/
// expect: pass
#include <math.h>
void rmsnorm(const float *x, const float *w, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        const float *r = x + (long)i * N;
        float ss = 0;
        for (int j = 0; j < N; j++) ss += r[j] * r[j];
        float inv = 1.0f / sqrtf(ss / N + 1e-6f);
        for (int j = 0; j < N; j++) y[(long)i * N + j] = r[j] * inv * w[j];
    }
}
