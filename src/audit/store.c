/* store.c: the audit's JSONL store as a log that can be trusted. One audit appends at a time
 * (an exclusive flock(2) held from open to close: a second audit refuses, naming the holder); a
 * record goes in whole or not at all (a failed or short write is cut back off and stops the
 * audit); reading reports each line that is not a record and each id seen again, and keeps the
 * last record of an id. `kgate audit-merge` joins stores into one through a temporary file. */
#include "audit/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "audit/audit.h"
#include "engine/engine.h"

/* Lines of each kind a read lists by number; past that it says how many more. */
#define WARN_MAX 10

/* ---- the lock ------------------------------------------------------------------------------- */

/* The pid holding an exclusive flock on the file st describes, from /proc/locks ("1: FLOCK
 * ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF"); 0 when none is held or /proc/locks cannot be read.
 * Where the device does not match (an overlay reports another), a lone lock on the same inode
 * number is taken. */
static int flock_holder(const struct stat *st)
{
    FILE *f = fopen("/proc/locks", "re");
    if (!f) return 0;
    char line[256];
    int pid = 0, same_ino = 0, ino_pid = 0;
    while (fgets(line, sizeof line, f)) {
        char type[16], mode[16], rw[16];
        int p;
        unsigned maj, min;
        unsigned long long ino;
        if (strstr(line, "->")) continue; /* a process waiting for the lock */
        if (sscanf(line, "%*d: %15s %15s %15s %d %x:%x:%llu", type, mode, rw, &p, &maj, &min, &ino) != 7) continue;
        if (strcmp(type, "FLOCK") || strcmp(rw, "WRITE") || ino != (unsigned long long)st->st_ino) continue;
        if (maj == major(st->st_dev) && min == minor(st->st_dev)) {
            pid = p;
            break;
        }
        same_ino++;
        ino_pid = p;
    }
    fclose(f);
    return pid ? pid : same_ino == 1 ? ino_pid : 0;
}

int kg_audit_store_holder(const char *path)
{
    struct stat st;
    if (stat(path, &st)) return 0;
    return flock_holder(&st);
}

/* ---- appending ------------------------------------------------------------------------------- */

int kg_audit_store_open(struct audit_store *s, const char *path, bool *created, struct kg_err *e)
{
    *s = (struct audit_store){.path = path, .fd = -1};
    *created = false;
    int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0)
            *created = true;
        else if (errno == EEXIST) /* made by another process meanwhile: its lock decides below */
            fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
    }
    if (fd < 0) {
        kg_errf(e, "%s: cannot open: %s", path, strerror(errno));
        return KG_EXIT_INTERNAL;
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        kg_errf(e, "%s: not a regular file: a store is a file kgate appends to", path);
        return KG_EXIT_USAGE;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        int err = errno;
        close(fd);
        if (err != EWOULDBLOCK) {
            kg_errf(e, "%s: cannot lock: %s", path, strerror(err));
            return KG_EXIT_INTERNAL;
        }
        int pid = flock_holder(&st);
        char who[48] = "another process";
        if (pid > 0) snprintf(who, sizeof who, "another process (pid %d)", pid);
        kg_errf(e,
                "%s is in use: %s holds its lock (a running kgate audit or audit-merge); one audit writes a store "
                "at a time: wait for it to end, or give this one a store of its own (kgate audit-merge joins them)",
                path, who);
        return KG_EXIT_USAGE;
    }
    s->fd = fd;
    s->size = (long long)st.st_size;
    return 0;
}

int kg_audit_store_cut(struct audit_store *s, long long size, struct kg_err *e)
{
    if (ftruncate(s->fd, (off_t)size) || fsync(s->fd)) {
        kg_errf(e, "%s: cannot cut it back to %lld bytes: %s", s->path, size, strerror(errno));
        return KG_EXIT_INTERNAL;
    }
    s->size = size;
    return 0;
}

/* The test hook of a full disk: with KGATE_TEST_STORE_FAIL_AFTER=N, a store this process has
 * appended N records to gets the next one only halfway, then ENOSPC, as from a disk that fills
 * up. tests/audit_store.sh uses it where it cannot mount a small tmpfs (not root); nothing
 * else reads it. */
static bool disk_full_now(const struct audit_store *s)
{
    const char *v = getenv("KGATE_TEST_STORE_FAIL_AFTER");
    return v && *v && s->written >= atoi(v);
}

int kg_audit_store_append(struct audit_store *s, json_t *rec, bool sync, struct kg_err *e)
{
    const char *id = json_string_value(json_object_get(rec, "id"));
    char *line = json_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!line) {
        kg_errf(e, "%s: cannot write the record of %s: out of memory", s->path, id ? id : "?");
        return KG_EXIT_INTERNAL;
    }
    size_t n = strlen(line), done = 0;
    line[n++] = '\n'; /* over the terminator: the line is written by length */
    int err = 0;
    if (disk_full_now(s)) {
        ssize_t w = write(s->fd, line, n / 2);
        done = w > 0 ? (size_t)w : 0;
        err = ENOSPC;
    }
    while (done < n && !err) {
        ssize_t w = write(s->fd, line + done, n - done);
        if (w > 0)
            done += (size_t)w;
        else if (w == 0 || errno != EINTR)
            err = w ? errno : EIO; /* a short write is retried; the retry says why it stopped */
    }
    free(line);
    if (!err && sync && fsync(s->fd)) err = errno;
    if (err) {
        /* a record that is not whole (or not durable) is not in the store: --resume checks it again */
        bool cut = !done || ftruncate(s->fd, (off_t)s->size) == 0;
        kg_errf(e, "%s: cannot write the record of %s: %s%s", s->path, id ? id : "?", strerror(err),
                cut ? "" : " (and the part written could not be cut off: kgate audit --resume cuts it)");
        return KG_EXIT_INTERNAL;
    }
    s->size += (long long)n;
    s->written++;
    return 0;
}

int kg_audit_store_close(struct audit_store *s, struct kg_err *e)
{
    if (s->fd < 0) return 0;
    int rc = close(s->fd);
    s->fd = -1;
    if (rc) {
        kg_errf(e, "%s: close failed: %s: its last records may be lost", s->path, strerror(errno));
        return KG_EXIT_INTERNAL;
    }
    return 0;
}

/* ---- reading --------------------------------------------------------------------------------- */

/* The pair id of a line that does not parse, where it can be read: the string of an "id" key
 * followed by "problem" (how the audit writes a record; a gate's "id" is followed by others). */
static void torn_id(const char *s, size_t n, char *id, size_t cap)
{
    id[0] = 0;
    const char *end = s + n;
    for (const char *p = s; (p = memmem(p, (size_t)(end - p), "\"id\":", 5)); p += 5) {
        const char *q = p + 5;
        while (q < end && *q == ' ') q++;
        if (q >= end || *q != '"') continue;
        const char *r = q + 1;
        while (r < end && *r != '"') r += *r == '\\' ? 2 : 1;
        if (r >= end) continue;
        const char *after = r + 1;
        while (after < end && (*after == ' ' || *after == ',')) after++;
        if ((size_t)(end - after) < 10 || memcmp(after, "\"problem\":", 10)) continue;
        json_t *v = json_loadb(q, (size_t)(r + 1 - q), JSON_DECODE_ANY, NULL);
        if (json_is_string(v)) kg_strlcpy(id, json_string_value(v), cap);
        json_decref(v);
        if (id[0]) return;
    }
}

/* One record of line lineno into l; warns when its id has one already. */
static void add_record(struct audit_log *l, json_t *rec, const char *id, const char *path, int lineno, const char *who,
                       int *warned)
{
    json_t *here = json_sprintf("%s:%d", path, lineno);
    json_t *before = json_object_get(l->where, id);
    if (before) {
        l->duplicates++;
        if ((*warned)++ < WARN_MAX)
            fprintf(stderr, "%s: %s: another record of %s (the one before is at %s): the last record of an id counts\n",
                    who, json_string_value(here), id, json_string_value(before));
    }
    json_object_set_new(l->byid, id, rec); /* a key set again keeps its place */
    json_object_set_new(l->where, id, here);
    l->records++;
}

static void warn_skipped(const char *who, const char *path, int lineno, int *warned)
{
    if ((*warned)++ < WARN_MAX)
        fprintf(stderr, "%s: %s:%d: not a record (not a JSON object with an \"id\"): skipped\n", who, path, lineno);
}

int kg_audit_log_read(struct audit_log *l, const char *path, int fd, const char *who, struct kg_err *e)
{
    if (!l->byid) {
        l->byid = json_object();
        l->where = json_object();
    }
    int rfd = fd >= 0 ? dup(fd) : -1;
    FILE *f = fd >= 0 ? (rfd >= 0 ? fdopen(rfd, "r") : NULL) : fopen(path, "re");
    if (!f) {
        kg_errf(e, "%s: cannot open: %s", path, strerror(errno));
        if (rfd >= 0) close(rfd);
        return fd >= 0 ? KG_EXIT_INTERNAL : KG_EXIT_USAGE;
    }
    if (fd >= 0) rewind(f); /* the descriptor appends: its offset is only the reader's */
    char *line = NULL, bad_id[256] = "";
    size_t cap = 0;
    ssize_t n;
    long long off = 0, bad_off = -1;
    int lineno = 0, bad_line = 0, warned_skip = 0, warned_dup = 0;
    l->torn = false;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        long long at = off;
        off += n;
        if (line[strspn(line, " \t\r\n")] == 0) continue;
        if (bad_off >= 0) warn_skipped(who, path, bad_line, &warned_skip); /* not the last line after all */
        bad_off = -1;
        /* a line without its newline is torn even where it parses: the write of it did not finish */
        json_t *rec = line[n - 1] == '\n' ? json_loadb(line, (size_t)n, 0, NULL) : NULL;
        const char *id = json_string_value(json_object_get(rec, "id"));
        if (id) {
            add_record(l, rec, id, path, lineno, who, &warned_dup);
            continue;
        }
        json_decref(rec);
        l->skipped++;
        bad_off = at;
        bad_line = lineno;
        torn_id(line, (size_t)n, bad_id, sizeof bad_id);
    }
    int rerr = ferror(f) ? errno : 0;
    free(line);
    fclose(f);
    if (rerr) {
        kg_errf(e, "%s: cannot read: %s", path, strerror(rerr));
        return KG_EXIT_INTERNAL;
    }
    if (bad_off >= 0) {
        l->torn = true;
        l->tail_off = bad_off;
        l->tail_len = off - bad_off;
        l->tail_line = bad_line;
        kg_strlcpy(l->tail_id, bad_id, sizeof l->tail_id);
    }
    if (warned_skip > WARN_MAX)
        fprintf(stderr, "%s: %s: %d more lines that are not records, skipped\n", who, path, warned_skip - WARN_MAX);
    if (warned_dup > WARN_MAX)
        fprintf(stderr, "%s: %s: %d more records of an id seen before\n", who, path, warned_dup - WARN_MAX);
    return 0;
}

void kg_audit_log_warn_tail(const struct audit_log *l, const char *path, const char *who)
{
    if (!l->torn) return;
    char pair[300] = "";
    if (l->tail_id[0]) snprintf(pair, sizeof pair, " (pair %s)", l->tail_id);
    fprintf(stderr,
            "%s: %s:%d: a torn last record of %lld bytes%s: skipped (an audit was stopped while writing it, or is "
            "writing it now; kgate audit --resume cuts it and checks the pair again)\n",
            who, path, l->tail_line, l->tail_len, pair);
}

void kg_audit_log_free(struct audit_log *l)
{
    json_decref(l->byid);
    json_decref(l->where);
    l->byid = l->where = NULL;
}

/* ---- audit-merge ----------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The records of l, sorted by id, into tmp; durable when it returns 0. */
static int write_sorted(const char *out, const char *tmp, const struct audit_log *l, struct kg_err *e)
{
    struct audit_store t = {.path = out, .fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (t.fd < 0) {
        kg_errf(e, "%s: cannot create: %s", tmp, strerror(errno));
        return KG_EXIT_INTERNAL;
    }
    size_t nk = json_object_size(l->byid), i = 0;
    const char **keys = calloc(nk ? nk : 1, sizeof *keys);
    int rc = 0;
    if (!keys) {
        close(t.fd);
        kg_errf(e, "out of memory");
        return KG_EXIT_INTERNAL;
    }
    const char *key;
    json_t *val;
    json_object_foreach(l->byid, key, val) keys[i++] = key;
    qsort(keys, nk, sizeof *keys, cmp_str);
    for (i = 0; i < nk && !rc; i++) rc = kg_audit_store_append(&t, json_object_get(l->byid, keys[i]), false, e);
    free(keys);
    if (!rc && fsync(t.fd)) {
        kg_errf(e, "%s: fsync: %s", tmp, strerror(errno));
        rc = KG_EXIT_INTERNAL;
    }
    if (rc)
        close(t.fd);
    else
        rc = kg_audit_store_close(&t, e);
    return rc;
}

int kg_audit_merge(const char *out, char *const *in, int n, struct kg_err *e)
{
    static const char who[] = "kgate audit-merge";
    struct audit_log l = {0};
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        int holder = kg_audit_store_holder(in[i]);
        if (holder)
            fprintf(stderr, "%s: %s is being written by a running audit (pid %d): only its records so far are merged\n",
                    who, in[i], holder);
        rc = kg_audit_log_read(&l, in[i], -1, who, e);
        if (!rc) kg_audit_log_warn_tail(&l, in[i], who);
    }
    /* OUT is locked while it is replaced, so that no audit appends to the file being replaced;
     * the records go to a temporary that is renamed over it: OUT is whole, old or new */
    struct audit_store lock = {.fd = -1};
    bool created = false;
    if (!rc) rc = kg_audit_store_open(&lock, out, &created, e);
    char tmp[KG_PATH_MAX + KG_PATH_SLACK];
    kg_tmp_name(tmp, sizeof tmp, out);
    if (!rc) rc = write_sorted(out, tmp, &l, e);
    if (!rc && rename(tmp, out)) {
        kg_errf(e, "%s: cannot replace it: %s", out, strerror(errno));
        rc = KG_EXIT_INTERNAL;
    }
    if (rc && lock.fd >= 0) {
        unlink(tmp);
        if (created) unlink(out);
    }
    if (lock.fd >= 0) close(lock.fd); /* the lock of the file replaced */
    if (!rc) {
        fprintf(stderr, "%s: %zu records from %d stores into %s", who, json_object_size(l.byid), n, out);
        if (l.skipped || l.duplicates)
            fprintf(stderr, " (%d lines that are not records skipped, %d records replaced by a later one of their id)",
                    l.skipped, l.duplicates);
        fprintf(stderr, "\n");
    }
    kg_audit_log_free(&l);
    return rc;
}

/* ---- where the time went -------------------------------------------------------------------- */

void kg_audit_spent_add(double spent[KG_AUDIT_NSPENT], json_t *rec)
{
    static const char *const keys[] = {"compile", "inputs",   "oracle", "runs",
                                       "compare", "standard", "decoy",  "memory_wait"};
    json_t *t = json_object_get(rec, "timing");
    double parts = 0;
    for (int i = 0; i < KG_SPENT_REST; i++) {
        double v = json_number_value(json_object_get(t, keys[i]));
        spent[i] += v;
        if (i != KG_SPENT_MEMWAIT) parts += v;
    }
    double total = json_number_value(json_object_get(t, "total"));
    if (total > parts) spent[KG_SPENT_REST] += total - parts;
    double wall = json_number_value(json_object_get(rec, "audit_seconds"));
    double inside = total + json_number_value(json_object_get(t, "memory_wait"));
    if (wall > inside && total > 0) spent[KG_SPENT_OUTSIDE] += wall - inside;
    spent[KG_SPENT_WALL] += wall;
}

void kg_audit_spent_print(FILE *f, const double spent[KG_AUDIT_NSPENT], int pairs, double wall_s, double slot_s,
                          bool md)
{
    static const char *const names[] = {
        "compile",       "inputs",      "oracle",           "runs",     "compare",
        "standard test", "decoy check", "host memory wait", "the rest", "check start and end"};
    double idle = slot_s > spent[KG_SPENT_WALL] ? slot_s - spent[KG_SPENT_WALL] : 0;
    double all = idle;
    for (int i = 0; i < KG_SPENT_WALL; i++) all += spent[i];
    if (md)
        fprintf(f, "| where the time went (%d pairs) | seconds | share |\n|---|---:|---:|\n", pairs);
    else
        fprintf(f, "kgate audit: %d pairs%s", pairs, wall_s > 0 ? "" : "\n");
    if (!md && wall_s > 0) fprintf(f, ", %.0f kernels/hour; time summed over pairs:", pairs / wall_s * 3600);
    bool first = true;
    for (int i = 0; i <= KG_SPENT_WALL; i++) {
        if (i == KG_SPENT_WALL && !(slot_s > 0)) break;
        /* a part no record has (no check waited; host kernels have no standard test): no line */
        if (i != KG_SPENT_WALL && i != KG_SPENT_REST && !(spent[i] >= 0.05) && i >= KG_SPENT_STANDARD) continue;
        double v = i < KG_SPENT_WALL ? spent[i] : idle;
        const char *name = i < KG_SPENT_WALL ? names[i] : "idle check slots";
        double share = all > 0 ? 100 * v / all : 0;
        if (md)
            fprintf(f, "| %s | %.1f | %.0f%% |\n", name, v, share);
        else
            fprintf(f, "%s %s %.1f s (%.0f%%)", first ? "" : ",", name, v, share);
        first = false;
    }
    fputc('\n', f);
}
