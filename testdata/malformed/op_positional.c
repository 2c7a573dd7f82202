/*@kgate
name:    scale
op:      scale(2)
entry:   scale
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=100
*/
// expect: error 3 the parameters are keywords, not positions: write scale(alpha=2)
void scale(const float *x, float *y, int N) { for (int i = 0; i < N; i++) y[i] = 2 * x[i]; }
