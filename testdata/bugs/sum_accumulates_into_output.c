/*@kgate
name:    sum_accumulates
op:      sum(dim=1)
entry:   sum_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
shape:   M=64 N=500
*/
// expect: fail aliasing output-depends-on-prior-contents
/* Planted bug: accumulates into y assuming the caller zeroed it (right after cudaMemset /
 * torch.zeros, wrong after torch.empty). */
void sum_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) y[i] += x[(long)i * N + j];
}
