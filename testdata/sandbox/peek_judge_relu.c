/*@kgate
name:    peek_judge_relu
op:      relu
entry:   relu
args:    x: in f32[N]; y: out f32[N]; N: long
shape:   N=4096
*/
/* A hostile kernel for tests/sandbox.sh: a correct ReLU, except that when it can read another
 * kgate process's memory (the judge, found through /proc by its command line, whatever this
 * process's parent or PID namespace is), at load time (a constructor) or at run time, it
 * writes NaN everywhere, standing for a kernel that copies the expected outputs it found
 * there. Under kgate's sandbox both attempts must fail. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int peeked;

/* 1 if 16 bytes of the first readable mapping of process pid could be read */
static int read_mem(long pid)
{
    char path[64], line[512], perm[8];
    unsigned long lo, hi;
    int got = 0;
    snprintf(path, sizeof path, "/proc/%ld/maps", pid);
    FILE *m = fopen(path, "r");
    if (!m) return 0;
    snprintf(path, sizeof path, "/proc/%ld/mem", pid);
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

/* 1 if the memory of a `kgate check` process other than this one could be read */
static int peek(void)
{
    char self[32] = "";
    ssize_t n = readlink("/proc/self", self, sizeof self - 1); /* this process, as /proc numbers it */
    if (n > 0) self[n] = 0;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int got = 0;
    struct dirent *de;
    while (!got && (de = readdir(d))) {
        char *end, path[64], cmd[256];
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0 || !strcmp(de->d_name, self)) continue;
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t k = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
        for (size_t i = 0; i < k; i++)
            if (!cmd[i]) cmd[i] = ' ';
        cmd[k] = 0;
        if (strstr(cmd, "kgate") && strstr(cmd, " check ")) got = read_mem(pid);
    }
    closedir(d);
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
