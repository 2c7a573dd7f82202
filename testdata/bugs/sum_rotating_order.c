/*@kgate
name:    sum_rotating_order
op:      sum(dim=1)
entry:   sum_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
shape:   M=128 N=1000
*/
// expect: fail determinism nondeterministic
/* Planted bug: each call starts the row sum at a different offset (as a work-stealing or
 * atomic reduction would): accurate every time, bit-identical never. */
static int calls;
void sum_rows(const float *x, float *y, int M, int N)
{
    int start = (calls++ * 37) % N;
    for (int i = 0; i < M; i++) {
        float s = 0;
        for (int j = 0; j < N; j++) s += x[(long)i * N + (start + j) % N];
        y[i] = s;
    }
}
