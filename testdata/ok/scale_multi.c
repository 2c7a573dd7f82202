/*@kgate
name:    scale
op:      scale(alpha=0.5)
entry:   scale_half
args:    x: in T[N]; y: out T[N]; N: int
dtypes:  f32,bf16,f16
shape:   N=4096
*/
// expect: pass
/* One source instantiated per dtype: KG_T is float, kg_bf16 or kg_f16. */
#include <kgate.h>
static float ld(const KG_T *p, int i)
{
#if defined(KG_DTYPE_F32)
    return p[i];
#elif defined(KG_DTYPE_BF16)
    return kg_bf16_to_f32(p[i]);
#else
    return kg_f16_to_f32(p[i]);
#endif
}
static void st(KG_T *p, int i, float v)
{
#if defined(KG_DTYPE_F32)
    p[i] = v;
#elif defined(KG_DTYPE_BF16)
    p[i] = kg_f32_to_bf16(v);
#else
    p[i] = kg_f32_to_f16(v);
#endif
}
void scale_half(const KG_T *x, KG_T *y, int N)
{
    for (int i = 0; i < N; i++) st(y, i, ld(x, i) * 0.5f);
}
