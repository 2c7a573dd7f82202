/*@kgate
name:    sum_rows
op:      sum(dim=1)
entry:   sum_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
shape:   M=256 N=1000
*/
// expect: pass
/* Pairwise (tree) summation per row: more accurate than the sequential reference, and a
 * legitimate order: kgate must accept any order that is at least as accurate. */
static float pairwise(const float *x, int n)
{
    if (n <= 8) {
        float s = 0;
        for (int i = 0; i < n; i++) s += x[i];
        return s;
    }
    int h = n / 2;
    return pairwise(x, h) + pairwise(x + h, n - h);
}

void sum_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) y[i] = pairwise(x + (long)i * N, N);
}
