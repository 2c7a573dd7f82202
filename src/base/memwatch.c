/* memwatch.c: the sampling thread of memwatch.h. The worker pids live in a small table under a
 * mutex; a sample reads /proc/PID/status for this process and each of them (microseconds), sums,
 * and keeps the most. */
#include "base/memwatch.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define TRACKED_MAX 16 /* a check's workers: the candidate's, a fresh one, the oracle's, a fork server */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t tracked[TRACKED_MAX];
static uint64_t peak;
static bool started;
static double every;

bool kg_proc_mem(pid_t pid, uint64_t *anon, uint64_t *shmem)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "r");
    *anon = *shmem = 0;
    if (!f) return false;
    int found = 0;
    uint64_t kb;
    while (found < 2 && fgets(line, sizeof line, f)) {
        if (sscanf(line, "RssAnon: %" SCNu64, &kb) == 1) {
            *anon = kb * 1024;
            found++;
        } else if (sscanf(line, "RssShmem: %" SCNu64, &kb) == 1) {
            *shmem = kb * 1024;
            found++;
        }
    }
    fclose(f);
    return found == 2;
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
        ok = started = pthread_create(&t, &a, watch, NULL) == 0;
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
