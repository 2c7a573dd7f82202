/*@kgate
name:    prod_rows
op:      prod(dim=1)
entry:   prod_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
shape:   M=64 N=128
*/
// expect: pass
/* A correct product reduction in fp32. On the reduction-order gate's mixed magnitudes
 * (10^U(-4,4)) many rows overflow to inf in fp32 while the fp64 product is finite: the
 * working-precision reference overflows the same way, so that inf is legitimate. */
void prod_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        float p = 1;
        for (int j = 0; j < N; j++) p *= x[(long)i * N + j];
        y[i] = p;
    }
}
