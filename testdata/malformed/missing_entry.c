/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=100
*/
// expect: error 4 entry 'relu' not found after compile
#define KERNEL(name) void name(const float *x, float *y, int N) { for (int i = 0; i < N; i++) y[i] = x[i] < 0 ? 0 : x[i]; }
KERNEL(relu_f32)
