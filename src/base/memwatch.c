/* memwatch.c: the sampling thread of memwatch.h. The worker pids live in a small table under a
 * mutex; a sample reads /proc for this process and each of them (smaps_rollup costs about 0.05
 * ms for a process of gigabytes of huge pages, so sampling every 0.1 s costs nothing that
 * shows), sums, and keeps the most. */
#include "base/memwatch.h"

#include <inttypes.h>
#include <pthread.h>
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

/* The sum of the "key:  N kB" lines named in keys (NULL-terminated) of a /proc file, in bytes;
 * false when the file cannot be read or has none of them. */
static bool proc_kb(const char *path, const char *const *keys, uint64_t *bytes)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char line[256];
    uint64_t sum = 0;
    bool found = false;
    while (fgets(line, sizeof line, f))
        for (const char *const *k = keys; *k; k++) {
            size_t n = strlen(*k);
            uint64_t kb;
            if (!strncmp(line, *k, n) && line[n] == ':' && sscanf(line + n + 1, "%" SCNu64, &kb) == 1) {
                sum += kb * 1024;
                found = true;
            }
        }
    fclose(f);
    *bytes = sum;
    return found;
}

uint64_t kg_proc_mem(pid_t pid)
{
    static const char *const pss[] = {"Pss", NULL}, *const rss[] = {"RssAnon", "RssShmem", NULL};
    char path[64];
    uint64_t b = 0;
    snprintf(path, sizeof path, "/proc/%ld/smaps_rollup", (long)pid);
    if (proc_kb(path, pss, &b)) return b;
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    return proc_kb(path, rss, &b) ? b : 0;
}

/* One sample: this process and the tracked ones, summed; the peak raised to it. Under lock. */
static void sample(void)
{
    uint64_t sum = kg_proc_mem(getpid());
    for (int i = 0; i < TRACKED_MAX; i++)
        if (tracked[i] > 0) sum += kg_proc_mem(tracked[i]);
    if (sum > peak) peak = sum;
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
