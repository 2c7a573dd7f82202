/* store.h: the JSONL store of an audit, a log one audit at a time appends to (store.c). A line
 * is a record: a JSON object with a string "id", written whole, newline-terminated and fsync'd.
 * Reading a store reports, rather than hides, every line that is not a record and every id that
 * has more than one; the last record of an id is the one that counts. */
#ifndef KG_AUDIT_STORE_H
#define KG_AUDIT_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/util.h"

/* A store opened for appending: its descriptor holds the exclusive lock (flock(2)) for as long
 * as it is open; size is where the next record starts (the end of the last whole record). */
struct audit_store {
    const char *path;
    int fd;
    long long size;
    int written; /* records appended since the open */
};

/* Opens path for appending and takes its lock; *created says whether it was made here (it did
 * not exist). KG_EXIT_USAGE when another process holds the lock (e names the store and the
 * holder's pid where /proc/locks shows it), KG_EXIT_INTERNAL when it cannot be opened. */
int kg_audit_store_open(struct audit_store *s, const char *path, bool *created, struct kg_err *e);
/* Appends rec as one line; with sync, fsync(2)s it before returning. A failed or short write
 * is cut back off (the store keeps only whole records) and is KG_EXIT_INTERNAL, e naming the
 * store and the record's id. */
int kg_audit_store_append(struct audit_store *s, json_t *rec, bool sync, struct kg_err *e);
/* Cuts the store back to size bytes (a torn last line); KG_EXIT_INTERNAL on failure. */
int kg_audit_store_cut(struct audit_store *s, long long size, struct kg_err *e);
/* Closes the store (releasing its lock); KG_EXIT_INTERNAL when close(2) fails: records may be
 * lost. A store that is not open (fd < 0) is a no-op. */
int kg_audit_store_close(struct audit_store *s, struct kg_err *e);
/* The pid of the process holding the lock of path, from /proc/locks: 0 when it is not held, or
 * when that cannot be read (no path, no /proc). */
int kg_audit_store_holder(const char *path);

/* What reading stores found. The last line of the last store read is its tail: torn when it has
 * no newline or is not a record (an audit killed while writing it); a torn tail is counted in
 * skipped but not warned about, since the reader decides (report and merge skip it, --resume
 * cuts it). */
struct audit_log {
    json_t *byid;   /* id -> its last record, in the order the ids first appear */
    json_t *where;  /* id -> "STORE:LINE" of that record */
    int records;    /* lines that were records, duplicates included */
    int skipped;    /* lines that were not records (blank lines aside), a torn tail included */
    int duplicates; /* records a later record of the same id replaced */
    bool torn;      /* the tail, as read last: */
    long long tail_off;
    long long tail_len;
    int tail_line;
    char tail_id[256]; /* the pair id of a torn tail where it is readable, else "" */
};

/* Reads the store path (through fd when fd >= 0, which it leaves open) into l, which may hold
 * the records of stores read before (a later store's record of an id wins). Warns on stderr,
 * prefixed by who, about each line that is not a record (with its line number) and each id
 * seen again. KG_EXIT_INTERNAL with e naming the store when it cannot be read. */
int kg_audit_log_read(struct audit_log *l, const char *path, int fd, const char *who, struct kg_err *e);
/* Warns, prefixed by who, about the torn tail of the store path just read, if it has one: what
 * `kgate report` and `audit-merge` say of a line they skip. */
void kg_audit_log_warn_tail(const struct audit_log *l, const char *path, const char *who);
void kg_audit_log_free(struct audit_log *l);

/* Where a corpus's time went: each record's "timing" (compile, inputs, oracle, runs, compare,
 * the standard test's and the decoy check's own seconds, memory_wait; the rest of its total is
 * copying, input transforms and worker starts, not timed apart; records from before a part was
 * timed count it in the rest), what its audit_seconds (the check's wall time, which idle check
 * slots are measured against) holds beyond its total and its wait (the check's process
 * starting, opening the problem before the clock, writing its report), summed over records. */
enum {
    KG_SPENT_COMPILE,
    KG_SPENT_INPUTS,
    KG_SPENT_ORACLE,
    KG_SPENT_RUNS,
    KG_SPENT_COMPARE,
    KG_SPENT_STANDARD,
    KG_SPENT_DECOY,
    KG_SPENT_MEMWAIT, /* before the first gate, waiting for room in the host (not in its total) */
    KG_SPENT_REST,
    KG_SPENT_OUTSIDE,
    KG_SPENT_WALL,
    KG_AUDIT_NSPENT
};
void kg_audit_spent_add(double spent[KG_AUDIT_NSPENT], json_t *rec);
/* One paragraph: kernels/hour over wall_s (0: not known) and the sums, in seconds and shares;
 * slot_s is the check slots' capacity (wall time x slots; 0: idle not known). md: as a table. */
void kg_audit_spent_print(FILE *f, const double spent[KG_AUDIT_NSPENT], int pairs, double wall_s, double slot_s,
                          bool md);

#endif
