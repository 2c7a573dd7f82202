/*@kgate
name:    relu_accumulates
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=4096
*/
// expect: fail aliasing output-depends-on-prior-contents
/* Planted bug, the only one: adds its result to the output instead of storing it (right when
 * the caller zeroed y, as after cudaMemset or torch.zeros; wrong after torch.empty). One
 * defect, one cause: the gates that see a wrong y because of it report the same cause. */
void relu(const float *x, float *y, int N)
{
    for (int i = 0; i < N; i++) y[i] += x[i] > 0 ? x[i] : 0.0f;
}
