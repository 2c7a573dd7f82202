/*@kgate
name:    softmax_reads_past
op:      softmax(dim=1)
entry:   softmax_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
shape:   M=32 N=100
*/
// expect: fail bounds out-of-bounds-read
/* Planted bug: the max loop reads one element past each row; inside the tensor that is the
 * next row's first value (harmless), past the last row it is whatever lies beyond the buffer. */
#include <math.h>
void softmax_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        const float *r = x + (long)i * N;
        float m = -INFINITY, s = 0;
        for (int j = 0; j <= N; j++) if (!(r[j] <= m)) m = r[j];
        for (int j = 0; j < N; j++) s += expf(r[j] - m);
        for (int j = 0; j < N; j++) y[(long)i * N + j] = expf(r[j] - m) / s;
    }
}
