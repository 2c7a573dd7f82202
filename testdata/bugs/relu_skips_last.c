/*@kgate
name:    relu_skips_last
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=10000
*/
// expect: fail structure unwritten-output
/* Planted bug: an off-by-one loop bound leaves the last element unwritten. */
void relu(const float *x, float *y, int N)
{
    for (int i = 0; i < N - 1; i++) y[i] = x[i] < 0 ? 0.0f : x[i];
}
