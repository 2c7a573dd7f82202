/*@kgate
name:    relu_block_n
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
launch:  grid=1 block=N
shape:   N=512
sweep:   N=1,100,2048
*/
// expect: fail shapes launch-limit
/* Planted bug: one thread per element in a single block: fine at 512, impossible at 2048,
 * a size the contract claims. */
extern "C" __global__ void relu(const float *x, float *y, int N)
{
    int i = threadIdx.x;
    if (i < N) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}
