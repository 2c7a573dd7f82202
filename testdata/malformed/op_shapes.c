/*@kgate
name:    mm
op:      matmul
entry:   mm
args:    A: in f32[M,K]; B: in f32[M,K]; C: out f32[M,N]; M: int; N: int; K: int
shape:   M=8 N=4 K=16
*/
// expect: error 3 matmul expects
void mm(const float *A, const float *B, float *C, int M, int N, int K) {}
