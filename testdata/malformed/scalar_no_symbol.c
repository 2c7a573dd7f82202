/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int; alpha: float
shape:   N=100
*/
// expect: error 5 scalar 'alpha' has no shape symbol
void relu(const float *x, float *y, int N, float alpha) { for (int i = 0; i < N; i++) y[i] = x[i] < 0 ? alpha : x[i]; }
