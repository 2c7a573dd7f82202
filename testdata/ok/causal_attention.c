/*@kgate
name:    causal_attention
op:      causal_attention
entry:   attention
args:    q: in f32[B,H,T,D]; k: in f32[B,H,T,D]; v: in f32[B,H,T,D]; o: out f32[B,H,T,D];
         B: int; H: int; T: int; D: int
shape:   B=1 H=2 T=128 D=32
sweep:   T=1,65
*/
// expect: pass
/* Online softmax (flash-attention style): a different but legitimate evaluation order. Its
 * accumulator holds 256 values, so it refuses larger head dims instead of overflowing. */
#include <math.h>
int attention(const float *q, const float *k, const float *v, float *o, int B, int H, int T, int D)
{
    if (D > 256) return 1;
    float scale = 1.0f / sqrtf((float)D);
    for (int bh = 0; bh < B * H; bh++)
        for (int i = 0; i < T; i++) {
            const float *qi = q + ((long)bh * T + i) * D;
            float m = -INFINITY, l = 0, acc[256] = {0};
            for (int j = 0; j <= i; j++) {
                const float *kj = k + ((long)bh * T + j) * D, *vj = v + ((long)bh * T + j) * D;
                float s = 0;
                for (int d = 0; d < D; d++) s += qi[d] * kj[d];
                s *= scale;
                float mn = s > m || s != s ? s : m;
                float c = expf(m - mn), p = expf(s - mn);
                if (m == -INFINITY) c = 0;
                l = l * c + p;
                for (int d = 0; d < D; d++) acc[d] = acc[d] * c + p * vj[d];
                m = mn;
            }
            for (int d = 0; d < D; d++) o[((long)bh * T + i) * D + d] = acc[d] / l;
        }
    return 0;
}
