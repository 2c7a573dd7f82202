/*@kgate
name:    gdn_fwd_recurrent
op:      gdn_fwd(scale=0.25)
entry:   gdn_fwd
args:    q: in f32[B,T,H,K]; k: in f32[B,T,H,K]; v: in f32[B,T,H,V]; g: in f32[B,T,H];
         b: in f32[B,T,H]; S0: in f32[B,H,K,V]; o: out f32[B,T,H,V]; ST: out f32[B,H,K,V];
         B: int; T: int; H: int; K: int; V: int; scale: float = 0.25
shape:   B=1 T=100 H=2 K=16 V=8
sweep:   T=1,65
inputs:  g=uniform(-0.7,-0.01) b=uniform(0.05,0.95) k=unitrows
*/
// expect: pass
/* The gated delta rule step by step in fp32 (the recurrence of gdn/README.md):
 *   S' = exp(g_t) S;  S = S' + b_t k_t (v_t - S'^T k_t)^T;  o_t = scale S^T q_t
 * A readable reference kernel; the CUDA ones in gdn/ are chunked. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

int gdn_fwd(const float *q, const float *k, const float *v, const float *g, const float *b, const float *S0,
            float *o, float *ST, int B, int T, int H, int K, int V, float scale)
{
    if (K > 256 || V > 256) return 1;
    float S[256 * 256], u[256];
    for (int bb = 0; bb < B; bb++)
        for (int h = 0; h < H; h++) {
            memcpy(S, S0 + ((long)bb * H + h) * K * V, sizeof(float) * K * V);
            for (int t = 0; t < T; t++) {
                long r = ((long)bb * T + t) * H + h;
                const float *qt = q + r * K, *kt = k + r * K, *vt = v + r * V;
                float a = expf(g[r]), beta = b[r];
                for (int i = 0; i < K * V; i++) S[i] *= a;
                for (int j = 0; j < V; j++) {
                    float p = 0;
                    for (int i = 0; i < K; i++) p += S[i * V + j] * kt[i];
                    u[j] = beta * (vt[j] - p);
                }
                for (int i = 0; i < K; i++)
                    for (int j = 0; j < V; j++) S[i * V + j] += kt[i] * u[j];
                for (int j = 0; j < V; j++) {
                    float acc = 0;
                    for (int i = 0; i < K; i++) acc += S[i * V + j] * qt[i];
                    o[r * V + j] = scale * acc;
                }
            }
            memcpy(ST + ((long)bb * H + h) * K * V, S, sizeof(float) * K * V);
        }
    return 0;
}
