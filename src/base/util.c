/* util.c: error formatting, bounded string copies, hashing, whole-file reads, the clock, the
 * number of usable cores. */
#include "base/util.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int kg_errf(struct kg_err *e, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

size_t kg_strlcpy(char *dst, const char *src, size_t n)
{
    size_t len = strlen(src);
    if (n) {
        size_t k = len < n - 1 ? len : n - 1;
        memcpy(dst, src, k);
        dst[k] = '\0';
    }
    return len;
}

void kg_appendf(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    if (*len + 1 >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *len, n - *len, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    *len += (size_t)k;
    if (*len > n - 1) *len = n - 1;
}

uint64_t kg_hash64(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

char *kg_read_file(const char *path, size_t *len, struct kg_err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        kg_errf(e, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        kg_errf(e, "%s: out of memory", path);
        return NULL;
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                kg_errf(e, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        kg_errf(e, "%s: read error", path);
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

double kg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The cores this process may run on: its affinity mask (a Slurm task or a container's cpuset),
 * not every core of the machine. */
int kg_ncpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int kg_write_file(const char *path, const char *text, struct kg_err *e)
{
    char tmp[KG_PATH_MAX + 2 * KG_PATH_SLACK];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return kg_errf(e, "cannot write %s: %s", tmp, strerror(errno));
    int bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path)) {
        unlink(tmp);
        return kg_errf(e, "cannot write %s", path);
    }
    return 0;
}
