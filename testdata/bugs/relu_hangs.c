/*@kgate
name:    relu_hang
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=1000
*/
// expect: error structure hang
// kgate-args: --gates structure,accuracy --timeout 1
/* Planted hang: never returns for a negative first element. The run is killed after the time
 * limit and reported as an error; kgate carries on with a fresh worker. */
void relu(const float *x, float *y, int N)
{
    volatile int spin = x[0] < 0 || x[0] >= 0;
    while (spin) {}
    for (int i = 0; i < N; i++) y[i] = x[i] < 0 ? 0.0f : x[i];
}
