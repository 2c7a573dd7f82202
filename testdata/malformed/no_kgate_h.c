/*@kgate
name:    add_f16
op:      add
entry:   add_h
args:    a: in f16[N]; b: in f16[N]; c: out f16[N]; N: int
shape:   N=50000
*/
// expect: error 11 does not include <kgate.h>
/* Half-precision storage through kgate.h: add in float, round once to f16. */

void add_h(const kg_f16 *a, const kg_f16 *b, kg_f16 *c, int N)
{
    for (int i = 0; i < N; i++) c[i] = kg_f32_to_f16(kg_f16_to_f32(a[i]) + kg_f16_to_f32(b[i]));
}
