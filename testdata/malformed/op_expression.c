/*@kgate
name:    affine
op:      y = x*2+1
entry:   affine
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=100
*/
// expect: error 3 an op that is not built in is 'oracle: FUNC' instead
void affine(const float *x, float *y, int N) { for (int i = 0; i < N; i++) y[i] = 2 * x[i] + 1; }
