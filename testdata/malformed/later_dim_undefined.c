/*@kgate
name:    scale_rows
op:      relu
entry:   scale_rows
args:    x: in f32[M,N,Q]; y: out f32[M,N]; M: int; N: int
shape:   M=4 N=8
*/
// expect: error 5 args: 'x' dim 2 'Q': undefined symbol 'Q' (declare it in shape:)
/* The dims M and N parse before Q fails: the sanitizer build (LeakSanitizer) checks that they
 * are freed, so this exits 2 there too and not 1 for a leak. */
void scale_rows(const float *x, float *y, int M, int N) { for (int i = 0; i < M * N; i++) y[i] = x[i] > 0 ? x[i] : 0; }
