/*@kgate
name:    argmax_rows
op:      argmax(dim=1)
entry:   argmax_rows
args:    x: in f32[M,N]; idx: out i64[M]; M: int; N: int
shape:   M=300 N=500
*/
// expect: pass
/* PyTorch semantics: the first NaN wins, else the first occurrence of the maximum. */
#include <stdint.h>
void argmax_rows(const float *x, int64_t *idx, int M, int N)
{
    for (int i = 0; i < M; i++) {
        const float *r = x + (long)i * N;
        int best = 0;
        for (int j = 1; j < N; j++) {
            if (r[best] != r[best]) break;           /* already at a NaN */
            if (r[j] != r[j] || r[j] > r[best]) best = j;
        }
        idx[i] = best;
    }
}
