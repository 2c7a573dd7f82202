/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=100
*/
// expect: error 5 parameter 3 of relu (line 9) is named 'n'
void relu(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = x[i] < 0 ? 0 : x[i]; }
