// expect: error 1 no contract
void relu(const float *x, float *y, int N) { for (int i = 0; i < N; i++) y[i] = x[i] < 0 ? 0 : x[i]; }
