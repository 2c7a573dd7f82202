/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: long
shape:   N=100000
sweep:   N=1,4097
*/
// expect: pass
/* Correct: NaN propagates because the comparison is written so that NaN takes the x branch. */
void relu(const float *x, float *y, long N)
{
    for (long i = 0; i < N; i++) y[i] = x[i] < 0 ? 0.0f : x[i];
}
