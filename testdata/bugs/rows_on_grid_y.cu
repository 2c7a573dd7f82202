/*@kgate
name:    rowscale_grid_y
op:      scale(alpha=2)
entry:   rowscale
args:    x: in f32[M,N]; y: out f32[M,N]; M: int; N: int
launch:  grid=(cdiv(N,128),M) block=128
shape:   M=4096 N=256
sweep:   M=100000
*/
// expect: fail shapes launch-limit
/* Planted bug: rows on grid.y, which stops at 65535: the claimed M=100000 cannot launch. */
extern "C" __global__ void rowscale(const float *x, float *y, int M, int N)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    long i = (long)blockIdx.y * N + col;
    if (col < N) y[i] = 2.0f * x[i];
}
