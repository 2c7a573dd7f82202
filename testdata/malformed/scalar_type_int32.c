/*@kgate
name:    relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int32
shape:   N=100
*/
// expect: error 5 'int32' is not a scalar type (the scalar types are int, long, float, double): write 'N: int'
#include <stdint.h>
void relu(const float *x, float *y, int32_t N) { for (int i = 0; i < N; i++) y[i] = x[i] < 0 ? 0 : x[i]; }
