/*@kgate
name:    sum_drops_rows
op:      sum(dim=1)
entry:   sum_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
shape:   M=64 N=1002
*/
// expect: fail structure unwritten-output
/* Planted bug: the last two rows are taken for padding and never written. Whatever the output
 * memory held stays there: zeros from a fresh allocation would even look plausible. */
void sum_rows(const float *x, float *y, int M, int N)
{
    int rows = M - 2; /* "the last two rows are padding" -- a wrong assumption */
    for (int i = 0; i < rows; i++) {
        float s = 0;
        for (int j = 0; j < N; j++) s += x[(long)i * N + j];
        y[i] = s;
    }
}
