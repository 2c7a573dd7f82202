/*@kgate
name:    relu_no_tail
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
launch:  grid=cdiv(N,256) block=256
shape:   N=100000
*/
// expect: fail bounds out-of-bounds-write
/* Planted bug: no `if (i < N)`: the last block writes up to 255 elements past the end. */
extern "C" __global__ void relu(const float *x, float *y, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i] < 0.0f ? 0.0f : x[i];
}
