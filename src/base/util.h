/* util.h: the error buffer every fallible kgate call fills, and small string helpers.
 * Library code never prints or exits on error: it returns -1 (or NULL) with a message in a
 * struct kg_err that names file and line where there is one; only main() decides. */
#ifndef KG_UTIL_H
#define KG_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct kg_err {
    char msg[2048];
};

/* Path buffers: a directory kgate makes files in (the cache, a work directory) fits in
 * KG_DIR_MAX bytes, so "DIR/NAME" with a name shorter than KG_NAME_ROOM bytes fits in KG_PATH_MAX. */
#define KG_DIR_MAX   2048
#define KG_NAME_ROOM 2048
#define KG_PATH_MAX  (KG_DIR_MAX + KG_NAME_ROOM)
/* What a buffer needs beyond the path it extends with a short suffix ("/kgate.h", ".PID.tmp",
 * "/host-HASH.so"): each derived buffer is its source's size plus this, so no suffix is lost. */
#define KG_PATH_SLACK 256

/* Formats into e (when e is non-NULL) and returns -1, so `return kg_errf(e, ...)` reads well. */
int kg_errf(struct kg_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies at most n-1 bytes and always terminates; returns strlen(src). */
size_t kg_strlcpy(char *dst, const char *src, size_t n);

/* Appends printf output to buf (of size n) at *len, truncating; keeps *len <= n-1. */
void kg_appendf(char *buf, size_t n, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* FNV-1a 64-bit hash, for content-addressed caches and case ids. */
uint64_t kg_hash64(const void *data, size_t n, uint64_t seed);

/* The most kgate reads of a source file: a kernel, its oracle, a KernelBench problem or
 * candidate, a header it includes. Far above any real one; a bound so that a link to a huge
 * file is refused at once instead of filling memory. kgate-contract(5) says it. */
#define KG_SOURCE_MAX ((size_t)16 << 20)
/* The most it reads of a file it wrote itself or had a compiler write (cache entries,
 * binaries, logs). */
#define KG_OUTPUT_MAX ((size_t)1 << 30)

/* Reads a whole regular file of at most max bytes into a NUL-terminated malloc'd buffer; NULL
 * with e filled on error. Anything else (a FIFO, a device such as /dev/zero, a directory) is
 * refused before a byte is read, and opening never blocks. */
char *kg_read_file(const char *path, size_t max, size_t *len, struct kg_err *e);

/* Writes text to path through PATH.PID.tmp and a rename, so that concurrent kgate processes
 * never read a half-written file; -1 with e naming the file. */
int kg_write_file(const char *path, const char *text, struct kg_err *e);
/* A temporary name beside path, unique among concurrent writers: path.PID.RANDOM.tmp. The pid
 * alone is not: every worker runs as pid 1 of its own PID namespace, and two workers compiling
 * the same kernel into the cache at once (make check -j, an audit) wrote one temporary file. */
void kg_tmp_name(char *buf, size_t n, const char *path);

/* Monotonic clock in seconds. */
double kg_now(void);
/* cores available to this process (affinity mask), at least 1 */
int kg_ncpu(void);
/* Bytes this process could still allocate: the least of what the kernel reports available
 * (MemAvailable), what its cgroup's memory.max leaves and what the address-space limit
 * (ulimit -v) leaves; UINT64_MAX when none of them is known. */
uint64_t kg_mem_available(void);
/* What a cache of freed memory may keep: $env MiB when set (for measurements), else this check's
 * share of the host's physical memory (kg_checks_at_once) / divisor, at most max bytes (8 GiB
 * of physical memory assumed when unknown). */
uint64_t kg_cache_cap(const char *env, unsigned divisor, uint64_t max);
/* How many checks share this host: $KGATE_CHECKS_AT_ONCE (kgate audit sets it for its checks),
 * else 1. Every per-process budget of memory (the memo, the pools) is a share of the host. */
unsigned kg_checks_at_once(void);
/* This check's share of the host's physical memory (8 GiB assumed when unknown). */
uint64_t kg_host_share(void);

#endif
