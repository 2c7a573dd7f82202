/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: long
shape:   N=100
inputs:  x=normal(nan,inf)
*/
// expect: error 7 inputs: x: normal(MEAN,STD) needs a finite MEAN, got nan
/* Every input would be NaN: the gates would compare NaN with NaN and learn nothing. */
void relu(const float *x, float *y, long N) { for (long i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0; }
