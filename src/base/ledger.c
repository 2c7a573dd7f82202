/* ledger.c: a budget file shared by the checks of one audit. One line "budget BYTES", then one
 * line "PID BYTES" per reservation; every read and write happens under flock, and a line whose
 * process is gone is dropped by the next reader, so no check ever has to release. */
#include "base/ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define LEDGER_MAX 256 /* reservations kept: far more than the checks an audit runs at once */

struct ledger {
    uint64_t budget;
    int n;
    long pid[LEDGER_MAX];
    uint64_t bytes[LEDGER_MAX];
};

int kg_ledger_create(const char *path, uint64_t budget, struct kg_err *e)
{
    char text[64];
    snprintf(text, sizeof text, "budget %" PRIu64 "\n", budget);
    return kg_write_file(path, text, e);
}

static bool alive(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* The ledger's budget and its live reservations (those of processes still running). */
static int ledger_read(int fd, struct ledger *l)
{
    char buf[LEDGER_MAX * 48];
    ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
    if (got < 0) return -1;
    buf[got] = 0;
    memset(l, 0, sizeof *l);
    char *line = buf, *nl;
    if (sscanf(line, "budget %" SCNu64, &l->budget) != 1) return -1;
    while ((nl = strchr(line, '\n')) && *(line = nl + 1)) {
        long pid;
        uint64_t b;
        if (sscanf(line, "%ld %" SCNu64, &pid, &b) == 2 && pid > 0 && l->n < LEDGER_MAX && alive(pid)) {
            l->pid[l->n] = pid;
            l->bytes[l->n++] = b;
        }
    }
    return 0;
}

static int ledger_write(int fd, const struct ledger *l)
{
    char buf[LEDGER_MAX * 48];
    int len = snprintf(buf, sizeof buf, "budget %" PRIu64 "\n", l->budget);
    for (int i = 0; i < l->n; i++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, "%ld %" PRIu64 "\n", l->pid[i], l->bytes[i]);
    return pwrite(fd, buf, (size_t)len, 0) == len && ftruncate(fd, len) == 0 ? 0 : -1;
}

int kg_ledger_reserve(const char *path, uint64_t bytes, bool (*stop)(void *), void *ud, double *waited,
                      struct kg_err *e)
{
    static bool done;
    *waited = 0;
    if (done) return 0;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return kg_errf(e, "%s: %s", path, strerror(errno));
    const double t0 = kg_now();
    const long me = (long)getpid();
    int rc = 0;
    for (;;) {
        struct ledger l;
        if (flock(fd, LOCK_EX) || ledger_read(fd, &l)) {
            rc = kg_errf(e, "%s: not a ledger kgate audit wrote (%s)", path, strerror(errno));
            break;
        }
        uint64_t taken = 0;
        int others = 0;
        for (int i = 0; i < l.n; i++)
            if (l.pid[i] != me) {
                taken += l.bytes[i];
                others++;
            }
        bool room = others == 0 || (taken <= l.budget && bytes <= l.budget - taken);
        if (room || (stop && stop(ud))) {
            if (l.n < LEDGER_MAX) { /* (a full ledger: this check goes on unrecorded) */
                l.pid[l.n] = me;
                l.bytes[l.n++] = bytes;
            }
            if (ledger_write(fd, &l)) rc = kg_errf(e, "%s: cannot write: %s", path, strerror(errno));
            flock(fd, LOCK_UN);
            break;
        }
        flock(fd, LOCK_UN);
        nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
    }
    close(fd);
    *waited = kg_now() - t0;
    done = rc == 0;
    return rc;
}
