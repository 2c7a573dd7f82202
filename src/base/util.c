/* util.c: error formatting, bounded string copies, hashing, whole-file reads, the clock, the
 * number of usable cores, the memory left to this process. */
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
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

/* What fstat says a file is, for the message that refuses it. */
static const char *file_kind(mode_t m)
{
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISDIR(m)) return "a directory";
    if (S_ISSOCK(m)) return "a socket";
    return "not a plain file";
}

/* max in the unit a person would write it in. */
static void size_text(size_t max, char *buf, size_t n)
{
    if (max >= (1u << 20) && max % (1u << 20) == 0)
        snprintf(buf, n, "%zu MiB", max >> 20);
    else
        snprintf(buf, n, "%zu bytes", max);
}

/* Opened without blocking (a FIFO with no writer would block open(2) forever) and checked with
 * fstat before a byte is read (a character device such as /dev/zero never ends); read with at
 * most max + 1 bytes asked for, so a file that grows past max while being read is refused too. */
char *kg_read_file(const char *path, size_t max, size_t *len, struct kg_err *e)
{
    char cap[32];
    size_text(max, cap, sizeof cap);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        kg_errf(e, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st)) {
        kg_errf(e, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        kg_errf(e, "%s: not a regular file (%s): kgate reads only regular files", path, file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    if ((uintmax_t)st.st_size > max) {
        kg_errf(e, "%s: %jd bytes, more than %s: the most kgate reads of one file", path, (intmax_t)st.st_size, cap);
        close(fd);
        return NULL;
    }
    size_t want = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(want + 1);
    for (;;) {
        if (!buf) {
            close(fd);
            kg_errf(e, "%s: out of memory", path);
            return NULL;
        }
        ssize_t k = read(fd, buf + n, want - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            kg_errf(e, "%s: read error: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return NULL;
        }
        if (k == 0) break;
        n += (size_t)k;
        if (n > max) {
            kg_errf(e, "%s: more than %s: the most kgate reads of one file", path, cap);
            free(buf);
            close(fd);
            return NULL;
        }
        if (n == want) { /* the file grew since fstat: read on, within max */
            want = want * 2 < max + 1 ? want * 2 : max + 1;
            char *nb = realloc(buf, want + 1);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    close(fd);
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

/* The number after "KEY" in a text file (a line "KEY: N kB" of /proc/meminfo, or a file that
 * holds only a number when key is ""), times mult; 0 when absent or not a number ("max"). */
static uint64_t file_number(const char *path, const char *key, uint64_t mult)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[512];
    unsigned long long v = 0;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl)) {
            char *p = line + kl, *end;
            while (*p == ':' || *p == ' ' || *p == '\t') p++;
            errno = 0;
            v = strtoull(p, &end, 10);
            if (errno || end == p) v = 0;
            break;
        }
    fclose(f);
    return v > UINT64_MAX / mult ? UINT64_MAX : (uint64_t)v * mult;
}

static uint64_t min_known(uint64_t a, uint64_t b)
{
    return b && b < a ? b : a;
}

/* What this process's cgroup (v2) may still use: memory.max - memory.current; 0: no limit. */
static uint64_t cgroup_left(void)
{
    char line[KG_PATH_MAX], path[KG_PATH_MAX + 32];
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return 0;
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) found = !strncmp(line, "0::", 3);
    fclose(f);
    if (!found) return 0;
    line[strcspn(line, "\n")] = 0;
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
    uint64_t max = file_number(path, "", 1);
    if (!max) return 0;
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", line + 3);
    uint64_t cur = file_number(path, "", 1);
    return cur < max ? max - cur : 1;
}

uint64_t kg_mem_available(void)
{
    uint64_t avail = file_number("/proc/meminfo", "MemAvailable", 1024), left = UINT64_MAX;
    struct sysinfo si;
    if (!avail && sysinfo(&si) == 0) avail = ((uint64_t)si.freeram + si.bufferram) * si.mem_unit;
    left = min_known(left, avail);
    left = min_known(left, cgroup_left());
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        /* ulimit -v: what the address space has left beyond what is mapped now */
        uint64_t mapped = file_number("/proc/self/statm", "", (uint64_t)sysconf(_SC_PAGESIZE));
        left = min_known(left, mapped < rl.rlim_cur ? rl.rlim_cur - mapped : 1);
    }
    return left;
}

unsigned kg_checks_at_once(void)
{
    const char *v = getenv("KGATE_CHECKS_AT_ONCE");
    long n = v ? strtol(v, NULL, 10) : 1;
    return n >= 1 && n <= 4096 ? (unsigned)n : 1;
}

uint64_t kg_cache_cap(const char *env, unsigned divisor, uint64_t max)
{
    const char *v = getenv(env);
    if (v) return strtoull(v, NULL, 10) << 20;
    uint64_t share = kg_host_share() / divisor;
    return share < max ? share : max;
}

uint64_t kg_host_share(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : (uint64_t)8 << 30;
    return phys / kg_checks_at_once();
}

void kg_tmp_name(char *buf, size_t n, const char *path)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)buf;
    }
    snprintf(buf, n, "%s.%d.%016" PRIx64 ".tmp", path, (int)getpid(), r);
}

int kg_write_file(const char *path, const char *text, struct kg_err *e)
{
    char tmp[KG_PATH_MAX + 2 * KG_PATH_SLACK];
    kg_tmp_name(tmp, sizeof tmp, path);
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
