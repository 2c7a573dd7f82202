/* cache.h: the content-addressed compile cache and the one place kgate runs a compiler.
 * Compiled kernels are keyed by a hash of everything that affects the binary (source,
 * compiler, flags, kgate.h), written under a temporary name and renamed, so concurrent
 * kgate processes share the cache safely. */
#ifndef KG_CACHE_H
#define KG_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

/* The cache directory, created if needed: $KGATE_CACHE_DIR, else $XDG_CACHE_HOME/kgate,
 * else ~/.cache/kgate, else /tmp/kgate-UID. */
int kg_cache_dir(char *buf, size_t n, struct kg_err *e);

/* A directory holding this build's kgate.h, for host kernels' #include <kgate.h>. */
int kg_cache_include_dir(const char *cache, char *buf, size_t n, struct kg_err *e);

/* Runs argv (no shell) with a time limit; stdout and stderr are captured into out. Returns
 * the exit status (>= 0), or -1 with out describing why it could not run or was killed. */
int kg_run_cmd(char *const argv[], char *out, size_t n, double timeout);

/* Whether a compile failed because src does not include <kgate.h>: the compiler's output out
 * (or dlopen's "undefined symbol") names an identifier kgate.h declares (kg_f16, struct
 * kg_oracle_io, kg_oracle_sym...) and no
 * `#include <kgate.h>` line is in src. Then the identifier goes into name and the line of out
 * that names it (the FILE:LINE:COL: prefix's line, 0 when none) into *line. */
int kg_missing_kgate_h(const char *src, const char *out, char *name, size_t n, int *line);

/* The lock file through which every kgate process on this host takes turns at one GPU's huge
 * cases (the limits gate's past 2^31 elements: tens of GB for seconds), by flock: vis is the
 * CUDA_VISIBLE_DEVICES the checks see (NULL or empty: "all"). Host-wide, not in the cache: two
 * audits, or make check's parallel tests, each with its own cache, share the device all the same.
 * In $KGATE_LOCK_DIR, else /tmp. */
void kg_gpu_lock_path(const char *vis, char *buf, size_t n);

/* Opens (creating, readable and writable by every user: the GPU is the host's) the lock file of
 * kg_gpu_lock_path; -1 when it cannot. */
int kg_gpu_lock_open(const char *vis);

/* Takes fd's lock (kg_gpu_lock_open's), waiting while another holder has it, for at most limit
 * seconds and while stop(ud) (stop may be NULL) says nothing: 0 when taken (or when this file
 * cannot be locked at all: the caller goes on as without it), -1 when not; *waited: the seconds
 * spent. */
int kg_gpu_lock_take(int fd, double limit, bool (*stop)(void *), void *ud, double *waited);

/* mkdir -p */
int kg_mkdirs(const char *path);

#endif
