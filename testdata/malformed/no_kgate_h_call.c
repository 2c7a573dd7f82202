/*@kgate
name:    add_f16
op:      add
entry:   add_h
args:    a: in f16[N]; b: in f16[N]; c: out f16[N]; N: int
shape:   N=1000
*/
// expect: error 13 does not include <kgate.h>, which declares kg_f16_to_f32
/* kgate.h's conversions called without the header: a C compiler takes them as implicitly declared. */
#include <stdint.h>
void add_h(const uint16_t *a, const uint16_t *b, uint16_t *c, int N)
{
    for (int i = 0; i < N; i++) c[i] = (uint16_t)kg_f32_to_f16(kg_f16_to_f32(a[i]) + kg_f16_to_f32(b[i]));
}
