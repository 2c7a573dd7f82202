/*@kgate
name:    tanh_via_exp
op:      tanh
entry:   tanh_exp
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=65536
inputs:  x=uniform(-0.01,0.01)
*/
// expect: fail accuracy approximation
/* Planted bug (found in our own l2_81 control on the H200): tanh computed as 1 - 2/(exp(2x) + 1).
 * Right for large |x|, but near 0 the two terms are both about 1 and their difference keeps only
 * the digits of 1: an absolute error of fp32's unit in the last place of 1 (6e-8) on results of
 * 1e-3 or less. On inputs of small magnitude (a pre-activation of few terms) every output is off
 * by 1e-5 relative; tanhf is exact to the dtype. kgate names it approximation (a formula not
 * accurate to the dtype): the error is systematic and no reduction is involved.
 */
#include <math.h>
void tanh_exp(const float *x, float *y, int N)
{
    for (int i = 0; i < N; i++) y[i] = 1.0f - 2.0f / (expf(2.0f * x[i]) + 1.0f);
}
