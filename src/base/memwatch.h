/* memwatch.h: how much of the host's memory one check holds, measured: a thread samples the
 * summed Pss (proportional set size: a page shared by n processes counts 1/n in each, so the
 * segments the judge shares with its workers count once) of this process and of the worker
 * processes it is told of, and keeps the peak. kgate audit's ledger (base/ledger.h) learns from
 * these peaks what a check needs, instead of trusting a constant. */
#ifndef KG_MEMWATCH_H
#define KG_MEMWATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The memory, in bytes, that process pid holds: its Pss (smaps_rollup), or where that file is
 * not readable (a non-dumpable worker, seen by a judge without CAP_SYS_PTRACE) its private and
 * shared resident pages from /proc/PID/status; 0 when the process is gone. */
uint64_t kg_proc_mem(pid_t pid);

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
