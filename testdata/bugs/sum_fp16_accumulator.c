/*@kgate
name:    sum_fp16_acc
op:      sum(dim=1)
entry:   sum_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
shape:   M=64 N=256
*/
// expect: fail accuracy fp16-accumulation
/* Planted bug: the accumulator is half precision (as with an fp16 tensor-core reduction):
 * fine for short rows of small values, wrong for long rows or a large mean. */
#include <kgate.h>
void sum_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        kg_f16 acc = kg_f32_to_f16(0);
        for (int j = 0; j < N; j++) acc = kg_f32_to_f16(kg_f16_to_f32(acc) + x[(long)i * N + j]);
        y[i] = kg_f16_to_f32(acc);
    }
}
