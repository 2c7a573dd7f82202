/* cache.c: cache directory, the embedded kgate.h, and running compilers with a time limit. */
#include "base/cache.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern const char kg_kgate_h[]; /* kgate_h.c, generated from src/kgate.h */

int kg_mkdirs(const char *path)
{
    char tmp[KG_PATH_MAX];
    if (kg_strlcpy(tmp, path, sizeof tmp) >= sizeof tmp) return -1;
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0700) && errno != EEXIST) return -1;
            *p = '/';
        }
    if (mkdir(tmp, 0700) && errno != EEXIST) return -1;
    return 0;
}

int kg_cache_dir(char *buf, size_t n, struct kg_err *e)
{
    const char *env = getenv("KGATE_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, n, "%s", env);
    else if (xdg && *xdg)
        snprintf(buf, n, "%s/kgate", xdg);
    else if (home && *home)
        snprintf(buf, n, "%s/.cache/kgate", home);
    else
        snprintf(buf, n, "/tmp/kgate-%u", (unsigned)getuid());
    if (kg_mkdirs(buf)) {
        snprintf(buf, n, "/tmp/kgate-%u", (unsigned)getuid());
        if (kg_mkdirs(buf)) return kg_errf(e, "cannot create a cache directory (%s): %s", buf, strerror(errno));
    }
    return 0;
}

void kg_gpu_lock_path(const char *vis, char *buf, size_t n)
{
    const char *dir = getenv("KGATE_LOCK_DIR");
    snprintf(buf, n, "%s/kgate-limits-gpu-%s.lock", dir && *dir ? dir : "/tmp", vis && *vis ? vis : "all");
}

int kg_gpu_lock_open(const char *vis)
{
    char path[KG_DIR_MAX + KG_PATH_SLACK];
    kg_gpu_lock_path(vis, path, sizeof path);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) (void)fchmod(fd, 0666); /* past the umask, for other users' kgate (fails when not ours) */
    return fd;
}

int kg_gpu_lock_take(int fd, double limit, bool (*stop)(void *), void *ud, double *waited)
{
    const double t0 = kg_now();
    for (;;) {
        *waited = kg_now() - t0;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
        if (errno != EWOULDBLOCK && errno != EINTR) return 0;
        if (*waited >= limit || (stop && stop(ud))) return -1;
        usleep(50000);
    }
}

int kg_cache_include_dir(const char *cache, char *buf, size_t n, struct kg_err *e)
{
    uint64_t h = kg_hash64(kg_kgate_h, strlen(kg_kgate_h), 0);
    snprintf(buf, n, "%s/include-%016llx", cache, (unsigned long long)h);
    char path[KG_PATH_MAX + KG_PATH_SLACK];
    snprintf(path, sizeof path, "%s/kgate.h", buf);
    struct stat st;
    if (stat(path, &st) == 0) return 0;
    if (kg_mkdirs(buf)) return kg_errf(e, "cannot create %s: %s", buf, strerror(errno));
    return kg_write_file(path, kg_kgate_h, e);
}

int kg_run_cmd(char *const argv[], char *out, size_t n, double timeout)
{
    int fds[2];
    size_t len = 0;
    out[0] = 0;
    if (pipe(fds)) {
        snprintf(out, n, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(out, n, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    double end = kg_now() + timeout;
    int killed = 0;
    for (;;) {
        double left = end - kg_now();
        if (left <= 0) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            killed = 1;
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        char tmp[4096]; /* one pipe read */
        ssize_t k = read(fds[0], tmp, sizeof tmp);
        if (k <= 0) break;
        if (len + 1 < n) {
            size_t c = (size_t)k < n - 1 - len ? (size_t)k : n - 1 - len;
            memcpy(out + len, tmp, c);
            len += c;
            out[len] = 0;
        }
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (killed) {
        snprintf(out + len, n - len, "\n(%s killed after %.0f s)", argv[0], timeout);
        return -1;
    }
    if (WIFSIGNALED(status)) {
        snprintf(out + len, n - len, "\n(%s killed by signal %d)", argv[0], WTERMSIG(status));
        return -1;
    }
    return WEXITSTATUS(status);
}

/* Whether some line of src is `#include <kgate.h>` (or "kgate.h"), spaces allowed. */
static int includes_kgate_h(const char *src)
{
    for (const char *p = src; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *q = p;
        while (*q == ' ' || *q == '\t') q++;
        if (*q++ != '#') continue;
        while (*q == ' ' || *q == '\t') q++;
        if (strncmp(q, "include", 7)) continue;
        q += 7;
        while (*q == ' ' || *q == '\t') q++;
        if ((*q == '<' || *q == '"') && !strncmp(q + 1, "kgate.h", 7)) return 1;
    }
    return 0;
}

/* Whether the identifier id (n characters) is declared by kgate.h: it occurs there as a word. */
static int kgate_h_declares(const char *id, size_t n)
{
    for (const char *p = strstr(kg_kgate_h, "kg_"); p; p = strstr(p + 1, "kg_")) {
        bool starts = p == kg_kgate_h || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        if (starts && !strncmp(p, id, n) && !(isalnum((unsigned char)p[n]) || p[n] == '_')) return 1;
    }
    return 0;
}

/* The line of src where the word name first occurs outside comments, 0 when it does not. */
static int first_use(const char *src, const char *name)
{
    size_t n = strlen(name);
    int line = 1;
    for (const char *p = src; *p; p++) {
        if (p[0] == '/' && p[1] == '/') p += strcspn(p, "\n");
        if (p[0] == '/' && p[1] == '*') {
            for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++) line += *p == '\n';
            if (*p) p++; /* at the comment's closing '/' */
        }
        if (!*p) break;
        if (*p == '\n') line++;
        bool starts = p == src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        if (starts && !strncmp(p, name, n) && !(isalnum((unsigned char)p[n]) || p[n] == '_')) return line;
    }
    return 0;
}

int kg_missing_kgate_h(const char *src, const char *out, char *name, size_t n, int *line)
{
    if (includes_kgate_h(src)) return 0;
    for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *end = strchr(l, '\n');
        if (!end) end = l + strlen(l);
        const char *msg = strstr(l, ": error: ");
        if (!msg || msg > end) msg = strstr(l, ": warning: implicit declaration");
        if (!msg || msg > end) msg = strstr(l, "undefined symbol: "); /* dlopen's, of such a function */
        if (!msg || msg > end) continue;
        for (const char *p = msg; p + 3 < end; p++) {
            if (strncmp(p, "kg_", 3) || isalnum((unsigned char)p[-1]) || p[-1] == '_') continue;
            size_t k = 3;
            while (p + k < end && (isalnum((unsigned char)p[k]) || p[k] == '_')) k++;
            if (!kgate_h_declares(p, k)) continue;
            snprintf(name, n, "%.*s", (int)k, p);
            /* FILE:LINE:COL: error: ... ; the file name may hold colons, the line is before COL */
            *line = 0;
            const char *c = msg;
            while (c > l && c[-1] != ':') c--; /* c at COL */
            if (c > l + 1) {
                const char *b = c - 1;
                while (b > l && isdigit((unsigned char)b[-1])) b--;
                if (b < c - 1) *line = atoi(b);
            }
            if (!*line) *line = first_use(src, name);
            return 1;
        }
    }
    return 0;
}
