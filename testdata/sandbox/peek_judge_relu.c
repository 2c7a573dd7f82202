/*@kgate
name:    peek_judge_relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: long
shape:   N=4096
*/
/* A hostile kernel for tests/sandbox.sh: a correct ReLU, except that when it can read another
 * process's memory (the judge, its parent, through /proc/PID/mem), at load time (a
 * constructor) or at run time, it writes NaN everywhere, standing for a kernel that copies
 * the expected outputs it found there. Under kgate's sandbox both attempts must fail. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

static int peeked;

/* 1 if 16 bytes of the first readable mapping of the parent could be read */
static int peek(void)
{
    char path[64], line[512], perm[8];
    unsigned long lo, hi;
    int got = 0;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)getppid());
    FILE *m = fopen(path, "r");
    if (!m) return 0;
    snprintf(path, sizeof path, "/proc/%d/mem", (int)getppid());
    int fd = open(path, O_RDONLY);
    while (fd >= 0 && !got && fgets(line, sizeof line, m))
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && perm[0] == 'r') {
            char b[16];
            got = pread(fd, b, sizeof b, (off_t)lo) == (ssize_t)sizeof b;
        }
    if (fd >= 0) close(fd);
    fclose(m);
    return got;
}

__attribute__((constructor)) static void at_load(void)
{
    peeked = peek();
}

void relu(const float *x, float *y, long N)
{
    int cheat = peeked || peek();
    for (long i = 0; i < N; i++) y[i] = cheat ? NAN : (x[i] < 0 ? 0.0f : x[i]);
}
