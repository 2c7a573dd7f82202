/* worker.c: spawning workers and talking to them. A worker is the init of a PID namespace of
 * its own where the system allows one: it sees no process outside (its kernel cannot signal the
 * judge) and whatever it starts dies with it. It is also its own process group, so a kill
 * takes the compilers and threads it started, and it dies with the judge (PR_SET_PDEATHSIG,
 * set on its side). */
#include "worker/worker.h"

#include "base/memwatch.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *kg_wstatus_name(enum kg_wstatus s)
{
    static const char *const names[] = {"ok",           "refused",       "compile error",   "entry missing",
                                        "launch error", "CUDA error",    "unavailable",     "bad request",
                                        "crash",        "timeout",       "output mismatch", "exception",
                                        "loading",      "out of memory", "interrupted",     "host out of memory"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "?";
}

/* How many processes the host's out-of-memory killer has killed since boot (oom_kill in
 * /proc/vmstat, or in the file KGATE_TEST_VMSTAT names: the tests'), -1 where it cannot be read. */
static long long host_oom_kills(void)
{
    const char *path = getenv("KGATE_TEST_VMSTAT");
    FILE *f = fopen(path && *path ? path : "/proc/vmstat", "r");
    if (!f) return -1;
    char line[128];
    long long n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "oom_kill %lld", &n) == 1) break;
    fclose(f);
    return n;
}

/* In a child of a fresh user namespace: the same uid and gid inside as outside. */
static void map_ids(uid_t uid, gid_t gid)
{
    char m[64];
    int fd = open("/proc/self/setgroups", O_WRONLY);
    if (fd >= 0) {
        if (write(fd, "deny", 4) < 0) { /* the gid map below then fails, and so the worker */
        }
        close(fd);
    }
    snprintf(m, sizeof m, "%u %u 1", (unsigned)uid, (unsigned)uid);
    fd = open("/proc/self/uid_map", O_WRONLY);
    if (fd < 0 || write(fd, m, strlen(m)) < 0) _exit(126);
    close(fd);
    snprintf(m, sizeof m, "%u %u 1", (unsigned)gid, (unsigned)gid);
    fd = open("/proc/self/gid_map", O_WRONLY);
    if (fd < 0 || write(fd, m, strlen(m)) < 0) _exit(126);
    close(fd);
}

/* In the child, the init of a fresh PID and mount namespace: a /proc of its own namespace.
 * libcuda fails in a PID namespace whose /proc is the parent's (cuInit: CUDA_ERROR_OPERATING_SYSTEM,
 * seen on the H200); a fresh one also shows the worker only its own processes. The parent's
 * /proc stays reachable through one descriptor, KGATE_HOST_PROC_FD, for the PyTorch fork
 * server, whose workers tell the judge their pid as the judge's /proc numbers it; every
 * worker closes it before a candidate's first instruction. */
static void own_proc(void)
{
    int host = open("/proc", O_PATH | O_DIRECTORY);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) {
        if (host >= 0) close(host); /* /proc is the parent's and still names the judge's pids */
        return;
    }
    if (host < 0) return;
    char n[16];
    snprintf(n, sizeof n, "%d", host);
    setenv("KGATE_HOST_PROC_FD", n, 1);
}

/* fork() into a PID and mount namespace of the child's own (own_proc): with the privilege to
 * make them, else inside an unprivileged user namespace, else (KGATE_CONTAIN=0, or neither is
 * allowed) a plain fork, and the worker reaps what its kernel starts itself (runners/serve.c).
 * The judge's only lasting thread (base/memwatch.c) takes no lock the child could need, so the
 * raw clone needs none of fork's atfork handlers; the child only execs. */
static pid_t fork_contained(void)
{
    const char *env = getenv("KGATE_CONTAIN");
    if (env && !strcmp(env, "0")) return fork();
    pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) own_proc();
    if (pid >= 0) return pid;
    uid_t uid = getuid();
    gid_t gid = getgid();
    pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) {
        map_ids(uid, gid);
        own_proc();
    }
    if (pid >= 0) return pid;
    return fork();
}

/* A worker's first act: the parent's /proc (own_proc) is not for the candidate. */
void kg_worker_drop_host_proc(void)
{
    const char *fd = getenv("KGATE_HOST_PROC_FD");
    if (!fd) return;
    close(atoi(fd));
    unsetenv("KGATE_HOST_PROC_FD");
}

int kg_worker_spawn(struct kg_worker *w, char *const argv[], struct kg_err *e)
{
    int sv[2];
    w->pid = -1;
    w->mem_limit = w->vm_seen = 0;
    w->oom_kills = host_oom_kills();
    w->fd = w->log_fd = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) return kg_errf(e, "socketpair: %s", strerror(errno));
    int log = memfd_create("kgate-worker-log", MFD_CLOEXEC);
    if (log < 0) {
        close(sv[0]);
        close(sv[1]);
        return kg_errf(e, "memfd_create: %s", strerror(errno));
    }
    pid_t pid = fork_contained();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        close(log);
        return kg_errf(e, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(log, 1);
        dup2(log, 2);
        dup2(sv[1], 3); /* dup2 clears CLOEXEC on the new descriptor */
        execvp(argv[0], argv);
        dprintf(2, "kgate: cannot start the worker %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(sv[1]);
    w->pid = pid;
    kg_memwatch_track(pid);
    w->fd = sv[0];
    w->log_fd = log;
    w->foreign = false;
    return 0;
}

int kg_zygote_start(struct kg_worker *z, char *const argv[], const char *name, struct kg_err *e)
{
    if (kg_worker_spawn(z, argv, e)) return -1;
    /* the zygote says "ready: ..." once PyTorch is imported and it listens (or "error: ...") */
    struct pollfd p = {z->fd, POLLIN, 0};
    double end = kg_now() + 300;
    int r;
    while ((r = poll(&p, 1, 1000)) == 0 || (r < 0 && errno == EINTR))
        if (kg_now() > end) break;
    char msg[1024] = "";
    ssize_t k = r > 0 ? recv(z->fd, msg, sizeof msg - 1, 0) : -1;
    if (k > 0) msg[k] = 0;
    if (k <= 0 || strncmp(msg, "ready", 5)) {
        kg_errf(e, "the PyTorch fork server %s did not start: %s", name, k > 0 ? msg : "no answer");
        kill(-z->pid, SIGKILL);
        kill(z->pid, SIGKILL);
        waitpid(z->pid, NULL, 0);
        close(z->fd);
        close(z->log_fd);
        kg_memwatch_untrack(z->pid);
        z->fd = z->log_fd = z->pid = -1;
        return -1;
    }
    return 0;
}

static int zygote_connect(const char *name, struct kg_err *e)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    if (n + 1 > sizeof a.sun_path) return kg_errf(e, "zygote name too long: %s", name);
    memcpy(a.sun_path + 1, name, n); /* abstract namespace: no file to clean up */
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return kg_errf(e, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n))) {
        kg_errf(e, "cannot reach the PyTorch fork server %s: %s", name, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int kg_worker_spawn_zygote(struct kg_worker *w, const char *name, struct kg_err *e)
{
    w->pid = -1;
    w->mem_limit = w->vm_seen = 0;
    w->oom_kills = host_oom_kills();
    w->fd = w->log_fd = -1;
    int c = zygote_connect(name, e);
    if (c < 0) return -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
        close(c);
        return kg_errf(e, "socketpair: %s", strerror(errno));
    }
    int log = memfd_create("kgate-worker-log", MFD_CLOEXEC);
    json_t *env = json_object();
    for (char **v = environ; *v; v++) {
        const char *eq = strchr(*v, '=');
        if (!eq) continue;
        char key[256];
        size_t kl = (size_t)(eq - *v);
        if (kl >= sizeof key) continue;
        memcpy(key, *v, kl);
        key[kl] = 0;
        json_object_set_new(env, key, json_string(eq + 1));
    }
    json_t *req = json_pack("{s:o}", "env", env);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    int rc = -1;
    if (log < 0 || !body) {
        kg_errf(e, "cannot prepare a worker request");
        goto out;
    }
    int fds[2] = {sv[1], log};
    struct iovec iov = {body, strlen(body)};
    union {
        char buf[CMSG_SPACE(sizeof fds)];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(cm), fds, sizeof fds);
    if (sendmsg(c, &m, MSG_NOSIGNAL) != (ssize_t)iov.iov_len) {
        kg_errf(e, "the PyTorch fork server %s: send: %s", name, strerror(errno));
        goto out;
    }
    char reply[512];
    struct pollfd p = {c, POLLIN, 0};
    ssize_t k = poll(&p, 1, 30000) > 0 ? recv(c, reply, sizeof reply - 1, 0) : -1;
    json_t *r = k > 0 ? json_loadb(reply, (size_t)k, 0, NULL) : NULL;
    json_int_t pid = json_integer_value(json_object_get(r, "pid"));
    if (pid <= 0) {
        const char *why = json_string_value(json_object_get(r, "error"));
        kg_errf(e, "the PyTorch fork server %s gave no worker%s%s", name, why ? ": " : "", why ? why : "");
        json_decref(r);
        goto out;
    }
    json_decref(r);
    w->pid = (pid_t)pid;
    kg_memwatch_track(w->pid);
    w->fd = sv[0];
    w->log_fd = log;
    w->foreign = true;
    sv[0] = log = -1;
    rc = 0;
out:
    free(body);
    close(c);
    close(sv[1]);
    if (sv[0] >= 0) close(sv[0]);
    if (log >= 0) close(log);
    return rc;
}

bool kg_worker_alive(const struct kg_worker *w)
{
    return w->pid > 0;
}

/* Last lines the worker printed, for post-mortems. */
static void log_tail(const struct kg_worker *w, char *buf, size_t n)
{
    buf[0] = 0;
    if (w->log_fd < 0) return;
    off_t end = lseek(w->log_fd, 0, SEEK_END);
    if (end <= 0) return;
    size_t want = n - 1 < 1500 ? n - 1 : 1500;
    off_t start = end > (off_t)want ? end - (off_t)want : 0;
    ssize_t k = pread(w->log_fd, buf, (size_t)(end - start), start);
    if (k < 0) k = 0;
    buf[k] = 0;
    for (ssize_t i = 0; i < k; i++)
        if (buf[i] == 0) buf[i] = ' ';
    char *z = strstr(buf, "\nkgate-zygote: wait status ");
    if (z) *z = 0;
}

#define ZYGOTE_MARK "kgate-zygote: wait status "

/* A foreign worker's wait status, from the line its zygote appends to its log once it has
 * reaped it; waits up to secs for it. -1: not (yet) known. */
static int foreign_wait(const struct kg_worker *w, double secs)
{
    double end = kg_now() + secs;
    for (;;) {
        char buf[128];
        off_t size = lseek(w->log_fd, 0, SEEK_END);
        off_t start = size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0;
        ssize_t k = size > 0 ? pread(w->log_fd, buf, (size_t)(size - start), start) : 0;
        buf[k > 0 ? k : 0] = 0;
        for (ssize_t i = 0; i < k; i++)
            if (buf[i] == 0) buf[i] = ' ';
        const char *m = strstr(buf, ZYGOTE_MARK);
        if (m) return atoi(m + strlen(ZYGOTE_MARK));
        if (kg_now() > end) return -1;
        usleep(2000);
    }
}

/* Why a call ends without a reply. */
enum end { END_DIED, END_TIMEOUT, END_STOPPED };

/* Kills the worker where it may still run, waits for it and says in rp why the call ended. A
 * worker that died of SIGINT while the caller was stopping (a worker in the terminal's process
 * group gets the Ctrl-C too) was stopped, not crashed; one that died with its address space at
 * (almost) its limit ran out of memory; one that died of SIGKILL while the host's OOM killer
 * killed (it picks the largest process when checks together fill the host) was taken by it. */
static void reap(struct kg_worker *w, struct kg_reply *rp, enum end why, double timeout, const struct kg_call_opts *o)
{
    int status = 0;
    if (why != END_DIED) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
    }
    if (w->foreign) {
        status = foreign_wait(w, 2.0);
        if (status < 0) {
            kill(-w->pid, SIGKILL);
            kill(w->pid, SIGKILL);
            status = foreign_wait(w, 2.0);
        }
        if (status < 0) status = 0xff00; /* unknown: reported as exit status 255 */
    } else {
        pid_t r;
        double end = kg_now() + 2.0;
        while ((r = waitpid(w->pid, &status, WNOHANG)) == 0 && kg_now() < end) usleep(2000);
        if (r == 0) {
            kill(-w->pid, SIGKILL);
            kill(w->pid, SIGKILL);
            waitpid(w->pid, &status, 0);
        }
    }
    if (why == END_DIED && WIFSIGNALED(status) && WTERMSIG(status) == SIGINT && o && o->stop && o->stop(o->ud))
        why = END_STOPPED;
    char tail[1600];
    log_tail(w, tail, sizeof tail);
    const char *sep = *tail ? "\n--- worker output ---\n" : "";
    if (why == END_STOPPED) {
        rp->status = KG_WS_INTERRUPTED;
        rp->code = 0;
        snprintf(rp->msg, sizeof rp->msg,
                 "interrupted: the run was stopped and its worker killed (the next run starts "
                 "a fresh one)");
    } else if (why == END_DIED && w->mem_limit && w->vm_seen >= w->mem_limit / 4 * 3) {
        rp->status = KG_WS_OOM;
        rp->code = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        snprintf(rp->msg, sizeof rp->msg,
                 "the worker died (%s %d) with its address space at %.0f MB of its %.0f MB limit (--memory): the "
                 "kernel ran out of memory%s%s",
                 WIFSIGNALED(status) ? "signal" : "exit status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), w->vm_seen / 1048576.0,
                 w->mem_limit / 1048576.0, sep, tail);
    } else if (why == END_DIED && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && w->oom_kills >= 0 &&
               host_oom_kills() > w->oom_kills) {
        rp->status = KG_WS_HOST_OOM;
        rp->code = SIGKILL;
        snprintf(rp->msg, sizeof rp->msg,
                 "the worker was killed by the host's out-of-memory killer (SIGKILL while /proc/vmstat's "
                 "oom_kill rose): the host ran out of memory, which says nothing about the kernel%s%s",
                 sep, tail);
    } else if (why == END_TIMEOUT) {
        rp->status = KG_WS_TIMEOUT;
        rp->code = 0;
        snprintf(rp->msg, sizeof rp->msg, "no answer within %.3g s: the run was killed (a hang or an endless loop)%s%s",
                 timeout, sep, tail);
    } else if (WIFSIGNALED(status)) {
        rp->status = KG_WS_CRASH;
        rp->code = WTERMSIG(status);
        snprintf(rp->msg, sizeof rp->msg, "the worker was killed by signal %d (%s)%s%s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), sep, tail);
    } else {
        rp->status = KG_WS_CRASH;
        rp->code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        snprintf(rp->msg, sizeof rp->msg, "the worker exited with status %d (the kernel called exit()?)%s%s", rp->code,
                 sep, tail);
    }
    close(w->fd);
    close(w->log_fd);
    kg_memwatch_untrack(w->pid);
    w->fd = w->log_fd = -1;
    w->pid = -1;
}

/* The most address space the worker has had (VmPeak), noted in w->vm_seen. */
static void note_vm(struct kg_worker *w)
{
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%d/status", (int)w->pid);
    FILE *f = fopen(path, "r");
    if (!f) return;
    unsigned long long kb;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmPeak: %llu kB", &kb) == 1 && kb * 1024 > w->vm_seen) w->vm_seen = kb * 1024;
    fclose(f);
}

/* How long one wait may last before stop() is asked again (a signal that arrives just before
 * poll() does not interrupt it), and before a worker under a memory limit is looked at again. */
#define STOP_POLL_MS 100
#define VM_POLL_MS   5

/* Waits up to timeout seconds for w's next message into rp: 0 when one came, END_TIMEOUT,
 * END_STOPPED when the caller's stop() said so, END_DIED when the worker is gone or sent
 * garbage (as -1). A worker under a memory limit is watched meanwhile, so that a death at the
 * limit can be told from other crashes. */
static int await_reply(struct kg_worker *w, struct kg_reply *rp, double timeout, const struct kg_call_opts *o)
{
    double end = kg_now() + timeout;
    for (;;) {
        if (o && o->stop && o->stop(o->ud)) return 1 + END_STOPPED;
        double left = end - kg_now();
        if (left <= 0) return 1 + END_TIMEOUT;
        struct pollfd p = {w->fd, POLLIN, 0};
        int ms = (int)(left * 1000) + 1;
        if (o && o->stop && ms > STOP_POLL_MS) ms = STOP_POLL_MS;
        if (w->mem_limit) {
            note_vm(w);
            if (ms > VM_POLL_MS) ms = VM_POLL_MS;
        }
        int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) continue;
        break;
    }
    ssize_t k;
    while ((k = recv(w->fd, rp, sizeof *rp, 0)) < 0 && errno == EINTR) {
    }
    if (k != (ssize_t)sizeof *rp || rp->magic != KG_PROTO_MAGIC) return 1 + END_DIED;
    rp->msg[sizeof rp->msg - 1] = 0;
    return 0;
}

int kg_worker_call(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout)
{
    return kg_worker_request(w, rq, shm_fd, rp, timeout, NULL);
}

int kg_worker_call_until(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout,
                         bool (*stop)(void *ud), void *ud)
{
    struct kg_call_opts o = {.stop = stop, .ud = ud};
    return kg_worker_request(w, rq, shm_fd, rp, timeout, &o);
}

/* Sends rq (and shm_fd when >= 0): 0, or -1 with the worker reaped and rp saying why. */
static int send_request(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout,
                        const struct kg_call_opts *o)
{
    memset(rp, 0, sizeof *rp);
    if (w->pid <= 0) {
        rp->status = KG_WS_CRASH;
        snprintf(rp->msg, sizeof rp->msg, "no worker");
        return -1;
    }
    if (o && o->stop && o->stop(o->ud)) {
        rp->status = KG_WS_INTERRUPTED;
        snprintf(rp->msg, sizeof rp->msg, "interrupted: not started");
        return -1;
    }
    struct iovec iov = {(void *)rq, sizeof *rq};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (shm_fd >= 0) {
        m.msg_control = u.buf;
        m.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &shm_fd, sizeof(int));
    }
    ssize_t k;
    while ((k = sendmsg(w->fd, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (k != (ssize_t)sizeof *rq) {
        reap(w, rp, END_DIED, timeout, o);
        return -1;
    }
    return 0;
}

/* The reply to a request sent, within wait seconds; a worker that ends otherwise is reaped, and
 * a timeout reported as one of timeout seconds (the call's limit). */
static int finish_request(struct kg_worker *w, struct kg_reply *rp, double wait, double timeout,
                          const struct kg_call_opts *o)
{
    int r = await_reply(w, rp, wait, o);
    if (r == 0 && rp->status == KG_WS_PROGRESS) { /* compiled: the candidate's code is next */
        double then = o && o->then > 0 ? o->then : timeout;
        r = await_reply(w, rp, then, o);
        if (r == 1 + END_TIMEOUT) {
            reap(w, rp, END_TIMEOUT, then, o);
            snprintf(rp->msg, sizeof rp->msg,
                     "the kernel did not finish loading within %.3g s: its own code (a constructor, module-level "
                     "code) never returned, and the worker was killed",
                     then);
            return -1;
        }
    }
    if (r) {
        reap(w, rp, (enum end)(r - 1), timeout, o);
        return -1;
    }
    /* alive until now: a death from here on while the count rises is the OOM killer's (it
     * takes idle workers too, whose death the next call finds) */
    w->oom_kills = host_oom_kills();
    return 0;
}

int kg_worker_request(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout,
                      const struct kg_call_opts *o)
{
    if (send_request(w, rq, shm_fd, rp, timeout, o)) return -1;
    return finish_request(w, rp, timeout, timeout, o);
}

int kg_worker_send(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout)
{
    return send_request(w, rq, shm_fd, rp, timeout, NULL);
}

int kg_worker_await(struct kg_worker *w, struct kg_reply *rp, double timeout, double deadline,
                    const struct kg_call_opts *o)
{
    memset(rp, 0, sizeof *rp);
    double left = deadline - kg_now();
    /* a reply that came while the caller was busy is taken, even past the deadline */
    return finish_request(w, rp, left > 0.001 ? left : 0.001, timeout, o);
}

void kg_worker_stop(struct kg_worker *w)
{
    if (w->pid <= 0) return;
    struct kg_req rq;
    memset(&rq, 0, sizeof rq);
    rq.magic = KG_PROTO_MAGIC;
    rq.cmd = KG_CMD_QUIT;
    send(w->fd, &rq, sizeof rq, MSG_NOSIGNAL);
    if (w->foreign) { /* the zygote reaps it and notes its status in the log */
        if (foreign_wait(w, 1.0) < 0) {
            kill(-w->pid, SIGKILL);
            kill(w->pid, SIGKILL);
            foreign_wait(w, 1.0);
        }
    } else {
        int status;
        double end = kg_now() + 1.0;
        while (waitpid(w->pid, &status, WNOHANG) == 0) {
            if (kg_now() > end) {
                kill(-w->pid, SIGKILL);
                kill(w->pid, SIGKILL);
                waitpid(w->pid, &status, 0);
                break;
            }
            usleep(1000);
        }
    }
    close(w->fd);
    close(w->log_fd);
    kg_memwatch_untrack(w->pid);
    w->fd = w->log_fd = -1;
    w->pid = -1;
}

int kg_proto_recv(int fd, struct kg_req *rq, int *shm_fd)
{
    struct iovec iov = {rq, sizeof *rq};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr m = {0};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = u.buf;
    m.msg_controllen = sizeof u.buf;
    *shm_fd = -1;
    ssize_t k;
    while ((k = recvmsg(fd, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (k <= 0) return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(shm_fd, CMSG_DATA(c), sizeof(int));
    if (k != (ssize_t)sizeof *rq || rq->magic != KG_PROTO_MAGIC) return -1;
    return 0;
}

int kg_proto_send_reply(int fd, const struct kg_reply *rp)
{
    ssize_t k;
    while ((k = send(fd, rp, sizeof *rp, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    return k == (ssize_t)sizeof *rp ? 0 : -1;
}

int kg_proto_layout(FILE *f)
{
    fprintf(f,
            "{\"kg_req\": %zu, \"kg_reply\": %zu, \"kg_req_run\": %zu, \"kg_req_arg\": %zu, \"kg_req_load\": %zu, "
            "\"kg_req_oracle\": %zu, \"kg_req_problem\": %zu, \"kg_req_tensor\": %zu, \"kg_dev_info\": %zu, "
            "\"kg_launch_rec\": %zu, \"reply.msg\": %zu, \"reply.launch\": %zu, \"run.sym_values\": %zu, "
            "\"oracle.shm_size\": %zu, \"oracle.resident\": %zu, \"problem.shm_size\": %zu, \"reply.pair_overlap\": "
            "%zu, \"reply.digest\": %zu, \"reply.dev_peak\": %zu, \"reply.dev_held\": %zu}\n",
            sizeof(struct kg_req), sizeof(struct kg_reply), sizeof(struct kg_req_run), sizeof(struct kg_req_arg),
            sizeof(struct kg_req_load), sizeof(struct kg_req_oracle), sizeof(struct kg_req_problem),
            sizeof(struct kg_req_tensor), sizeof(struct kg_dev_info), sizeof(struct kg_launch_rec),
            offsetof(struct kg_reply, msg), offsetof(struct kg_reply, launch), offsetof(struct kg_req_run, sym_values),
            offsetof(struct kg_req_oracle, shm_size), offsetof(struct kg_req_oracle, resident),
            offsetof(struct kg_req_problem, shm_size), offsetof(struct kg_reply, pair_overlap),
            offsetof(struct kg_reply, digest), offsetof(struct kg_reply, dev_peak),
            offsetof(struct kg_reply, dev_held));
    return 0;
}
