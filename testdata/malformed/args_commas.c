/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N], y: out f32[N]; N: int
shape:   N=100
*/
// expect: error 5 args are separated by ';', not ',': write 'x: in f32[N]; y: out f32[N]'
void relu(const float *x, float *y, int N) { for (int i = 0; i < N; i++) y[i] = x[i] < 0 ? 0 : x[i]; }
