/*@kgate
name:    rmsnorm_fast_rsqrt
op:      rmsnorm(eps=1e-6)
entry:   rmsnorm
args:    x: in f32[R,D]; w: in f32[D]; y: out f32[R,D]; R: int; D: int
shape:   R=16 D=1024
*/
// expect: fail accuracy approximation
/* Planted bug: the "fast inverse square root" (bit trick + one Newton step, ~1.7e-3 relative)
 * for 1/rms. The shapes gate's one-row case used to be diagnosed fp16-accumulation: one rsqrt's
 * error, measured at two lengths, "grew" by chance; a gate after accuracy now defers to the
 * precision accuracy named when the nominal case fails too. */
#include <stdint.h>
#include <string.h>
static float fast_rsqrt(float v)
{
    uint32_t i;
    memcpy(&i, &v, 4);
    i = 0x5f3759df - (i >> 1);
    float r;
    memcpy(&r, &i, 4);
    return r * (1.5f - 0.5f * v * r * r);
}
void rmsnorm(const float *x, const float *w, float *y, int R, int D)
{
    for (int r = 0; r < R; r++) {
        float ss = 0;
        for (int d = 0; d < D; d++) ss += x[r * D + d] * x[r * D + d];
        float inv = fast_rsqrt(ss / D + 1e-6f);
        for (int d = 0; d < D; d++) y[r * D + d] = x[r * D + d] * inv * w[d];
    }
}
