/*@kgate
name:    gdn_bwd_chunked
op:      gdn_bwd(scale=0.25)
entry:   gdn_bwd
args:    q: in f32[B,T,H,K]; k: in f32[B,T,H,K]; v: in f32[B,T,H,V]; g: in f32[B,T,H];
         b: in f32[B,T,H]; S0: in f32[B,H,K,V]; dO: in f32[B,T,H,V]; dST: in f32[B,H,K,V];
         dq: out f32[B,T,H,K]; dk: out f32[B,T,H,K]; dv: out f32[B,T,H,V]; dg: out f32[B,T,H];
         db: out f32[B,T,H]; dS0: out f32[B,H,K,V];
         B: int; T: int; H: int; K: int; V: int; scale: float = 0.25
shape:   B=1 T=100 H=1 K=16 V=8
inputs:  g=uniform(-0.7,-0.01) b=uniform(0.05,0.95) k=unitrows
*/
/* The backward of the gated delta rule, by the chunked algorithm (chunks of 64 steps) that fast
 * GPU kernels use, in fp32 on the host: chunk_host_impl.h holds its stages, one function each,
 * with their math; chunk_host.c the chunk geometry; oracle.c the argument checks. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* Hidden: the worker that runs this kernel has kgate's own copy of these functions loaded, and a
 * default-visibility definition here would be bound to that one instead of to this file's. */
#pragma GCC visibility push(hidden)
#include "oracle.c"
#include "chunk_host.c"
#pragma GCC visibility pop

int gdn_bwd(const float *q, const float *k, const float *v, const float *g, const float *b, const float *S0,
            const float *dO, const float *dST, float *dq, float *dk, float *dv, float *dg, float *db, float *dS0, int B,
            int T, int H, int K, int V, float scale)
{
    struct gdn_dims d = {B, T, H, K, V};
    struct gdn_in_f32 in = {q, k, v, g, b, S0};
    struct gdn_grad_f32 out = {dq, dk, dv, dg, db, dS0};
    return gdn_chunk_bwd_f32(GDN_GDN, &d, GDN_CHUNK_DEFAULT, scale, &in, dO, dST, &out);
}
