/*@kgate
name:    relu_vec4_tail
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=4096
*/
// expect: fail shapes unwritten-output
/* Planted bug: the vectorised loop covers N / 4 * 4 elements and the tail is never written. The
 * nominal N is a multiple of 4, so the structure gate sees every element written; the shapes
 * gate's boundary values (N = 1, N + 1) leave elements holding kgate's prefill. Was reported as
 * shape-specific: the shape is where it shows, the unwritten tail is what it is. */
void relu(const float *x, float *y, int N)
{
    for (int i = 0; i + 4 <= N; i += 4)
        for (int l = 0; l < 4; l++) y[i + l] = x[i + l] < 0 ? 0.0f : x[i + l];
}
