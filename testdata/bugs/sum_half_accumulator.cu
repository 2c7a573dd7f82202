/*@kgate
name:    sum_half_acc
op:      sum(dim=1)
entry:   sum_rows
args:    x: in f32[M,N]; y: out f32[M]; M: int; N: int
launch:  grid=M block=1
shape:   M=256 N=512
*/
// expect: fail accuracy fp16-accumulation
/* Planted bug: the accumulator is __half. */
extern "C" __global__ void sum_rows(const float *x, float *y, int M, int N)
{
    __half acc = __float2half(0.0f);
    for (int j = 0; j < N; j++) acc = __hadd(acc, __float2half(x[(long)blockIdx.x * N + j]));
    y[blockIdx.x] = __half2float(acc);
}
