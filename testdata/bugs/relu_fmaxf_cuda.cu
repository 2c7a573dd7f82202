/*@kgate
name:    relu_fmaxf_cuda
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
launch:  grid=cdiv(N,256) block=256
shape:   N=100000
*/
// expect: fail nonfinite nan-swallowed
/* Planted bug: fmaxf swallows NaN on the GPU as on the CPU. */
extern "C" __global__ void relu(const float *x, float *y, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) y[i] = fmaxf(x[i], 0.0f);
}
