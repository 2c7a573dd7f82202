/*@kgate
name:    cumsum_rows
op:      cumsum(dim=1)
entry:   cumsum_rows
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
shape:   M=64 N=2000
*/
// expect: pass
void cumsum_rows(const float *x, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        float s = 0;
        for (int j = 0; j < N; j++) {
            s += x[(long)i * N + j];
            y[(long)i * N + j] = s;
        }
    }
}
