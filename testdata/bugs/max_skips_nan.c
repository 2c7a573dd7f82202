/*@kgate
name:    max_rows_skips_nan
op:      max(dim=1)
entry:   max_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
shape:   M=128 N=300
*/
// expect: fail nonfinite nan-swallowed
/* Planted bug: `if (v > m) m = v` never takes a NaN, so a row with a NaN reports a number. */
#include <math.h>
void max_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        float m = -INFINITY;
        for (int j = 0; j < N; j++) {
            float v = x[(long)i * N + j];
            if (v > m) m = v;
        }
        y[i] = m;
    }
}
