/*@kgate
name:    relu_inplace
op:      relu
entry:   relu_inplace
args:    x: in f32[N]; y: out f32[N]; N: int
alias:   y=x
shape:   N=10000
*/
// expect: pass
/* Declared in place: y and x are the same buffer. */
void relu_inplace(const float *x, float *y, int N)
{
    for (int i = 0; i < N; i++) y[i] = x[i] < 0 ? 0.0f : x[i];
}
