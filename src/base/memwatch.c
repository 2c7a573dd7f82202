/* memwatch.c: the sampling thread of memwatch.h. The worker pids live in a small table under a
 * mutex; a sample reads /proc/PID/status for this process and each of them (microseconds), sums,
 * and keeps the most. The thread lives as long as the check, while the judge forks its workers
 * with a raw clone that runs no atfork handler (worker.c): so it takes no lock but its own (no
 * malloc, no stdio: open, read and a buffer on its stack) and blocks every signal, which stay
 * the main thread's to take. */
#include "base/memwatch.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRACKED_MAX 16 /* a check's workers: the candidate's, a fresh one, the oracle's, a fork server */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t tracked[TRACKED_MAX];
static uint64_t peak;
static bool started;
static double every;

/* The number of kB on the line "key:" of text, in bytes; false when there is none. */
static bool kb_field(const char *text, const char *key, uint64_t *bytes)
{
    const char *at = strstr(text, key);
    if (!at) return false;
    at += strlen(key);
    while (*at == ' ' || *at == '\t') at++;
    uint64_t kb = 0;
    if (*at < '0' || *at > '9') return false;
    while (*at >= '0' && *at <= '9') kb = kb * 10 + (uint64_t)(*at++ - '0');
    *bytes = kb * 1024;
    return true;
}

bool kg_proc_mem(pid_t pid, uint64_t *anon, uint64_t *shmem)
{
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    *anon = *shmem = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n, got = 0;
    while (got < (ssize_t)sizeof text - 1 && (n = read(fd, text + got, sizeof text - 1 - (size_t)got)) > 0) got += n;
    close(fd);
    text[got > 0 ? got : 0] = 0;
    return kb_field(text, "\nRssAnon:", anon) && kb_field(text, "\nRssShmem:", shmem);
}

/* One sample: the private memory of this process and the tracked ones, plus the most shared
 * memory one of them maps; the peak raised to it. Under lock. */
static void sample(void)
{
    uint64_t anon, shmem, sum = 0, most = 0;
    for (int i = -1; i < TRACKED_MAX; i++) {
        pid_t p = i < 0 ? getpid() : tracked[i];
        if (p <= 0 || !kg_proc_mem(p, &anon, &shmem)) continue;
        sum += anon;
        if (shmem > most) most = shmem;
    }
    if (sum + most > peak) peak = sum + most;
}

static void *watch(void *unused)
{
    (void)unused;
    const struct timespec ts = {(time_t)every, (long)((every - (double)(time_t)every) * 1e9)};
    for (;;) {
        pthread_mutex_lock(&lock);
        sample();
        pthread_mutex_unlock(&lock);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

bool kg_memwatch_start(double period)
{
    pthread_mutex_lock(&lock);
    bool ok = started;
    if (!started) {
        every = period > 0.001 ? period : 0.001;
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&a, 64 * 1024);
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread starts with every signal blocked */
        ok = started = pthread_create(&t, &a, watch, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&a);
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

void kg_memwatch_track(pid_t pid)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < TRACKED_MAX; i++)
        if (tracked[i] <= 0) {
            tracked[i] = pid;
            break;
        }
    pthread_mutex_unlock(&lock);
}

void kg_memwatch_untrack(pid_t pid)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < TRACKED_MAX; i++)
        if (tracked[i] == pid) tracked[i] = 0;
    pthread_mutex_unlock(&lock);
}

uint64_t kg_memwatch_peak(void)
{
    pthread_mutex_lock(&lock);
    if (started) sample();
    uint64_t p = started ? peak : 0;
    pthread_mutex_unlock(&lock);
    return p;
}
