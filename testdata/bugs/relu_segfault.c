/*@kgate
name:    relu_crash
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: int
shape:   N=1000
*/
// expect: error structure crash
// kgate-args: --gates structure,accuracy
/* Planted crash: writes through a wild pointer. kgate reports the signal as an error verdict,
 * starts a fresh worker for the next run, and does not crash itself. */
void relu(const float *x, float *y, int N)
{
    float *wild = y + (1L << 40);
    for (int i = 0; i < N; i++) wild[i] = x[i];
}
