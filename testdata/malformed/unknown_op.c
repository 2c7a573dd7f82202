/*@kgate
name:    relu
op:      rleu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=100
*/
// expect: error 3 unknown op 'rleu'
void relu(const float *x, float *y, int N) { for (int i = 0; i < N; i++) y[i] = x[i] < 0 ? 0 : x[i]; }
