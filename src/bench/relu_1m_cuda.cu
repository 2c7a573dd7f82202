/*@kgate
name:    relu_1m
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: long
launch:  grid=cdiv(N,256) block=256
shape:   N=1048576
*/
/* Benchmark subject: a 1M-element elementwise kernel (CUDA runner). */
extern "C" __global__ void relu(const float *x, float *y, long N)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}
