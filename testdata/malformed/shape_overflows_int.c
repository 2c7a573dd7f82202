/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=100
sweep:   N=1,3000000000
*/
// expect: error 7 sweep: N=3000000000 does not fit 'N: int' (at most 2147483647; declare N: long)
/* N is passed as a C int: a sweep value past INT_MAX is the contract's error (exit 2) at load,
 * not a gate error when the shapes gate builds that case. */
void relu(const float *x, float *y, int N) { for (int i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0; }
