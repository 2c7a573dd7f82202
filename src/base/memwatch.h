/* memwatch.h: how much of the host's memory one check holds, measured: a thread samples this
 * process and the worker processes it is told of, and keeps the peak of their private resident
 * memory summed plus the most shared memory any of them maps (the run segments are shared
 * between the judge and a worker: counted once). kgate audit's ledger (base/ledger.h) learns from
 * these peaks what a check needs, instead of trusting a constant. Not Pss (smaps_rollup), which
 * would count shared pages exactly: it walks every page table entry, and sampling it every 0.1 s
 * took a fifth of a core for a check of 0.5 GB of tensors on the CPU (perf: smaps_account);
 * /proc/PID/status's counters cost microseconds. Forked workers' pages shared copy-on-write with
 * their fork server count in each: the measure errs high. */
#ifndef KG_MEMWATCH_H
#define KG_MEMWATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The resident memory, in bytes, of process pid: private (RssAnon) and shared (RssShmem) from
 * /proc/PID/status; false when the process is gone. */
bool kg_proc_mem(pid_t pid, uint64_t *anon, uint64_t *shmem);

/* Starts the sampling thread (every period seconds; again: nothing). false when it cannot. */
bool kg_memwatch_start(double period);
/* Counts pid's memory from now on, until kg_memwatch_untrack(pid) (the worker module tells it
 * of each worker it starts and reaps; without a started watch they cost a lock and a store). */
void kg_memwatch_track(pid_t pid);
void kg_memwatch_untrack(pid_t pid);
/* The peak of the sum sampled so far (one fresh sample taken first), in bytes; 0 when no watch
 * was started. */
uint64_t kg_memwatch_peak(void);

#endif
