/*@kgate
name:    relu_1m
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: long
shape:   N=1048576
*/
/* Benchmark subject: a 1M-element elementwise kernel (host runner). */
void relu(const float *x, float *y, long N)
{
    for (long i = 0; i < N; i++) y[i] = x[i] < 0 ? 0.0f : x[i];
}
