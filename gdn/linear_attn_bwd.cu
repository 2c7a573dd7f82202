/*@kgate
name:    linear_attn_bwd
op:      linear_attn_bwd(scale=0.08838834764831845)
entry:   linear_attn_bwd_entry
args:    q: in T[B,T,H,K]; k: in T[B,T,H,K]; v: in T[B,T,H,V];
         S0: in f32[B,H,K,V]; dO: in T[B,T,H,V]; dST: in f32[B,H,K,V];
         dq: out T[B,T,H,K]; dk: out T[B,T,H,K]; dv: out T[B,T,H,V];
         dS0: out f32[B,H,K,V]; ws: scratch f32[B,H,(cdiv(T,64)+1)*K*V+128*V+320*K];
         B: int; T: int; H: int; K: int; V: int; scale: float = 0.08838834764831845
dtypes:  f32,bf16
launch:  grid=(H,B) block=256 smem=4*(128*(2*(K/2)+1)+max(64*(2*(K/2)+1),1040)+K+4224)
shape:   B=2 T=1000 H=4 K=128 V=128
sweep:   T=1,63,64,65,130,200
inputs:  k=unitrows
*/
// builtin: linear attention, backward: the reverse state scan (CUDA, sm_90, fp32 and bf16)
/* linear_attn_bwd.cu: linear attention, the backward: dq, dk, dv and dS0 from dO and dST (the
 * gradients of sum(dO*o) + sum(dST*ST)). One CTA per (head, batch) recomputes the per-chunk
 * states into ws, then runs the reverse-state scan, finishing each chunk's gradients as it
 * goes; the body is glr_bwd_body in gdn/glr_bwd.cuh (its fp64 twin: gdn_oracle_bwd in
 * gdn/oracle.c). Deterministic: no atomics, a fixed summation order.
 *   nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -DKG_T=__nv_bfloat16 -Igdn -c gdn/linear_attn_bwd.cu */
#ifndef KG_T
#define KG_T float
#endif
#include "glr_bwd.cuh"

extern "C" __global__ void __launch_bounds__(GLR_THREADS, 1)
    linear_attn_bwd_entry(const KG_T *q, const KG_T *k, const KG_T *v, const float *S0, const KG_T *dO,
                          const float *dST, KG_T *dq, KG_T *dk, KG_T *dv, float *dS0, float *ws, int B, int T, int H,
                          int K, int V, float scale)
{
    glr_bwd_body<GLR_LINEAR, KG_T>(q, k, v, nullptr, nullptr, S0, dO, dST, dq, dk, dv, nullptr, nullptr, dS0, ws, B, T,
                                   H, K, V, scale);
}
