/*@kgate
name:    softmax_rows
op:      softmax(dim=1)
entry:   softmax_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
shape:   M=512 N=1000
sweep:   M=1,3,64 N=1,7,255,256,257,4097
*/
// expect: pass
// builtin: row softmax, host C: the demo (`kgate demo`); max subtracted, NaN propagated
/* The demo kernel: a row softmax written the way a correct kernel must be: subtract the row
 * maximum (no overflow), propagate NaN (a NaN in a row makes the row NaN, as in PyTorch), and
 * accumulate in float. kgate check builtin:softmax_rows passes every gate that applies. */
#include <math.h>

void softmax_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        const float *r = x + (long)i * N;
        float *o = y + (long)i * N;
        float m = -INFINITY;
        for (int j = 0; j < N; j++)
            if (!(r[j] <= m)) m = r[j]; /* NaN wins: the comparison is false for NaN */
        float s = 0;
        for (int j = 0; j < N; j++) {
            o[j] = expf(r[j] - m);
            s += o[j];
        }
        for (int j = 0; j < N; j++) o[j] /= s;
    }
}
