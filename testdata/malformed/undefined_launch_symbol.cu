/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
launch:  grid=cdiv(N,BLOCK) block=256
shape:   N=100
*/
// expect: error 6 undefined symbol 'BLOCK'
extern "C" __global__ void relu(const float *x, float *y, int N) {}
