/*@kgate
name:    relu_one_past
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=10000
*/
// expect: fail bounds out-of-bounds-write
/* Planted bug: `<=` in the loop bound writes y[N], one element past the end. */
void relu(const float *x, float *y, int N)
{
    for (int i = 0; i <= N; i++) y[i] = x[i] < 0 ? 0.0f : x[i];
}
