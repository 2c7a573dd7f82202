/*@kgate
name:    kda_fwd
op:      kda_fwd(scale=0.35355339059327373)
entry:   kda_fwd
args:    q: in f32[B,T,H,K]; k: in f32[B,T,H,K]; v: in f32[B,T,H,V]; g: in f32[B,T,H,K];
         b: in f32[B,T,H]; S0: in f32[B,H,K,V];
         o: out f32[B,T,H,V]; ST: out f32[B,H,K,V];
         B: int; T: int; H: int; K: int; V: int; scale: float = 0.35355339059327373
shape:   B=1 T=130 H=2 K=8 V=8
sweep:   T=1,63,64,65,129
inputs:  g=uniform(-0.7,-0.01) b=uniform(0.05,0.95) k=unitrows
*/
// expect: pass
// builtin: KDA, Kimi delta attention, forward: o and the final state (host C, gdn/chunk_host.c in fp32)
/* builtin:kda_fwd, the host variant. KDA, Kimi delta attention (a gate per key channel, the delta
 * rule), the forward: o and the final state ST from the inputs and S0, by gdn/chunk_host.c's
 * chunked algorithm in fp32 (glr_host.h). Small nominal shapes (chunk boundaries at 64 and 128)
 * keep a full check quick on a CPU. */
#include "glr_host.h"

int kda_fwd(const float *q, const float *k, const float *v, const float *g, const float *b, const float *S0, float *o,
            float *ST, int B, int T, int H, int K, int V, float scale)
{
    struct gdn_dims d = {B, T, H, K, V};
    struct gdn_in_f32 in = {q, k, v, g, b, S0};
    return gdn_chunk_fwd_f32(GDN_KDA, &d, GDN_CHUNK_DEFAULT, scale, &in, o, ST);
}
