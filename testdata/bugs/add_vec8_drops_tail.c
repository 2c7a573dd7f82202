/*@kgate
name:    add_vec8
op:      add
entry:   add
args:    a: in f32[N]; b: in f32[N]; c: out f32[N]; N: int
shape:   N=65536
*/
// expect: fail shapes shape-specific
/* Planted bug: an 8-wide loop with a "tail" that zero-fills instead of adding: right whenever N
 * is a multiple of 8, as it is at the nominal shape. */
void add(const float *a, const float *b, float *c, int N)
{
    int i = 0;
    for (; i + 8 <= N; i += 8)
        for (int k = 0; k < 8; k++) c[i + k] = a[i + k] + b[i + k];
    for (; i < N; i++) c[i] = 0;
}
