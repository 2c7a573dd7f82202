/*@kgate
name:    transpose_even
op:      transpose2d
entry:   transpose_even
args:    x: in f32[M,N]; y: out f32[N,M]; M: int; N: int
shape:   M=64 N=48
*/
// expect: pass
/* Supports only even shapes and says so: returning non-zero refuses a case. The shapes gate
 * counts those as refused, not failed. */
int transpose_even(const float *x, float *y, int M, int N)
{
    if (M % 2 || N % 2) return 1;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) y[(long)j * M + i] = x[(long)i * N + j];
    return 0;
}
