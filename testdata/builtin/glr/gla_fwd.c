/*@kgate
name:    gla_fwd
op:      gla_fwd(scale=0.35355339059327373)
entry:   gla_fwd
args:    q: in f32[B,T,H,K]; k: in f32[B,T,H,K]; v: in f32[B,T,H,V]; g: in f32[B,T,H,K]; S0: in f32[B,H,K,V];
         o: out f32[B,T,H,V]; ST: out f32[B,H,K,V];
         B: int; T: int; H: int; K: int; V: int; scale: float = 0.35355339059327373
shape:   B=1 T=130 H=2 K=8 V=8
sweep:   T=1,63,64,65,129
inputs:  g=uniform(-0.7,-0.01) k=unitrows
*/
// expect: pass
// builtin: GLA (gate per key channel), forward: o and the final state (host C, gdn/chunk_host.c in fp32)
/* builtin:gla_fwd, the host variant. GLA (a gate per key channel, no delta rule), the forward: o
 * and the final state ST from the inputs and S0, by gdn/chunk_host.c's chunked algorithm in fp32
 * (glr_host.h). Small nominal shapes (chunk boundaries at 64 and 128) keep a full check quick on a
 * CPU. */
#include "glr_host.h"

int gla_fwd(const float *q, const float *k, const float *v, const float *g, const float *S0, float *o, float *ST, int B,
            int T, int H, int K, int V, float scale)
{
    struct gdn_dims d = {B, T, H, K, V};
    struct gdn_in_f32 in = {q, k, v, g, NULL, S0};
    return gdn_chunk_fwd_f32(GDN_GLA, &d, GDN_CHUNK_DEFAULT, scale, &in, o, ST);
}
