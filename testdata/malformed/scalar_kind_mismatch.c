/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=100
*/
// expect: error 5 'y' is declared a tensor, but relu (line 9) takes it as a scalar
void relu(const float *x, float y, int N) { (void)x; (void)y; (void)N; }
