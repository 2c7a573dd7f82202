/*@kgate
name:    sqdist_rows
oracle:  sqdist_ref
entry:   sqdist_rows
args:    x: in f32[M,N]; t: in f32[M,N]; y: out f32[M]; M: int; N: int
shape:   M=64 N=500
*/
/* sqdist_rows: for each row i of two M x N matrices, the sum of squared differences
 *   y[i] = sum_j (x[i,j] - t[i,j])^2
 * sqdist_ref is its fp64 oracle; kg_oracle_acc rounds the sum as the working precision would,
 * so that kgate can calibrate the threshold. */
#include <kgate.h>

int sqdist_ref(struct kg_oracle_io *io)
{
    int64_t M = kg_oracle_sym(io, "M"), N = kg_oracle_sym(io, "N");
    const double *x = io->in[0], *t = io->in[1];
    double *y = io->out[0];
    for (int64_t i = 0; i < M; i++) {
        double s = 0;
        for (int64_t j = 0; j < N; j++) {
            double d = x[i * N + j] - t[i * N + j];
            s = kg_oracle_acc(io, s + kg_oracle_acc(io, d * d));
        }
        y[i] = s;
    }
    return 0;
}

void sqdist_rows(const float *x, const float *t, float *y, int M, int N)
{
    for (int i = 0; i < M; i++) {
        float s = 0;
        for (int j = 0; j < N; j++) {
            float d = x[(long)i * N + j] - t[(long)i * N + j];
            s += d * d;
        }
        y[i] = s;
    }
}
