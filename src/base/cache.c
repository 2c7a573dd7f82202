/* cache.c: cache directory, the embedded kgate.h, and running compilers with a time limit. */
#include "base/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
