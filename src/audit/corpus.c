/* corpus.c: the pairs of an audit, read from its three inputs: JSONL rows (paths, relative to
 * the file, or inline sources written once into the cache), a KernelBench run directory matched
 * with its problems by level and problem number, and --pair arguments. */
#include "audit/corpus.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cache.h"
#include "engine/engine.h"

/* ---- rows ----------------------------------------------------------------------------------- */

static int push(struct audit_rows *r, const char *id, const char *problem, const char *candidate, const char *label)
{
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 64;
        struct audit_row *nv = realloc(r->v, (size_t)cap * sizeof *nv);
        if (!nv) return -1;
        r->v = nv;
        r->cap = cap;
    }
    struct audit_row *x = &r->v[r->n];
    x->id = strdup(id);
    x->problem = strdup(problem);
    x->candidate = strdup(candidate);
    x->label = label ? strdup(label) : NULL;
    if (!x->id || !x->problem || !x->candidate) return -1;
    r->n++;
    return 0;
}

void kg_audit_rows_free(struct audit_rows *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->v[i].id);
        free(r->v[i].problem);
        free(r->v[i].candidate);
        free(r->v[i].label);
    }
    free(r->v);
}

/* ---- the three inputs ------------------------------------------------------------------------ */

/* Inline source (from a JSONL row) written once into the cache, named by its hash. */
static int materialise(const char *cache, const char *src, char *path, size_t n, struct kg_err *e)
{
    char dir[KG_DIR_MAX + KG_PATH_SLACK];
    snprintf(dir, sizeof dir, "%s/audit-src", cache);
    if (kg_mkdirs(dir)) return kg_errf(e, "cannot create %s", dir);
    snprintf(path, n, "%s/%016llx.py", dir, (unsigned long long)kg_hash64(src, strlen(src), 0));
    if (access(path, R_OK) == 0) return 0;
    return kg_write_file(path, src, e);
}

static bool is_inline(const char *s)
{
    return strchr(s, '\n') != NULL;
}

static int read_jsonl(const char *file, const char *cache, struct audit_rows *r, struct kg_err *e)
{
    FILE *f = fopen(file, "r");
    if (!f) return kg_errf(e, "%s: cannot open: %s", file, strerror(errno));
    char *dup = strdup(file), *dir = dirname(dup);
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        if (line[strspn(line, " \t\r\n")] == 0) continue;
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        const char *id = json_string_value(json_object_get(o, "id"));
        const char *pr = json_string_value(json_object_get(o, "problem"));
        const char *ca = json_string_value(json_object_get(o, "candidate"));
        json_t *lab = json_object_get(o, "label");
        if (!o || !pr || !ca) {
            rc = kg_errf(e, "%s:%d: expected {\"id\", \"problem\", \"candidate\", \"label\"}%s%s", file, lineno,
                         o ? "" : ": ", o ? "" : je.text);
            json_decref(o);
            break;
        }
        char idbuf[32], pp[KG_PATH_MAX], cp[KG_PATH_MAX];
        if (!id) {
            snprintf(idbuf, sizeof idbuf, "row-%d", lineno);
            id = idbuf;
        }
        if (is_inline(pr) ? materialise(cache, pr, pp, sizeof pp, e) : 0) {
            rc = -1;
            json_decref(o);
            break;
        }
        if (!is_inline(pr)) snprintf(pp, sizeof pp, pr[0] == '/' ? "%s" : "%s/%s", pr[0] == '/' ? pr : dir, pr);
        if (is_inline(ca) ? materialise(cache, ca, cp, sizeof cp, e) : 0) {
            rc = -1;
            json_decref(o);
            break;
        }
        if (!is_inline(ca)) snprintf(cp, sizeof cp, ca[0] == '/' ? "%s" : "%s/%s", ca[0] == '/' ? ca : dir, ca);
        char labbuf[64] = "";
        if (json_is_string(lab))
            kg_strlcpy(labbuf, json_string_value(lab), sizeof labbuf);
        else if (json_is_boolean(lab))
            kg_strlcpy(labbuf, json_is_true(lab) ? "pass" : "fail", sizeof labbuf);
        if (push(r, id, pp, cp, labbuf[0] ? labbuf : NULL)) rc = kg_errf(e, "out of memory");
        json_decref(o);
        if (rc) break;
    }
    free(line);
    free(dup);
    fclose(f);
    return rc;
}

/* KernelBench runs: candidates named ...level_<L>..._problem_<P>... matched with the problem
 * <root>/level<L>/<P>_<Name>.py. */
static int find_problem(const char *root, long level, long pid, char *out, size_t n)
{
    char dir[KG_DIR_MAX + KG_PATH_SLACK];
    snprintf(dir, sizeof dir, "%s/level%ld", root, level);
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *de;
    int rc = -1;
    while ((de = readdir(d))) {
        char *end;
        long p = strtol(de->d_name, &end, 10);
        if (end != de->d_name && *end == '_' && p == pid && strstr(de->d_name, ".py")) {
            snprintf(out, n, "%s/%s", dir, de->d_name);
            rc = 0;
            break;
        }
    }
    closedir(d);
    return rc;
}

static int scan_dir(const char *dir, const char *root, const char *prefix, struct audit_rows *r, regex_t *re,
                    int *unmatched, struct kg_err *e)
{
    DIR *d = opendir(dir);
    if (!d) return kg_errf(e, "%s: cannot open: %s", dir, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char path[KG_PATH_MAX], rel[KG_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        snprintf(rel, sizeof rel, "%s%s%s", prefix, *prefix ? "/" : "", de->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        if (S_ISDIR(st.st_mode)) {
            rc = scan_dir(path, root, rel, r, re, unmatched, e);
            continue;
        }
        size_t l = strlen(de->d_name);
        if (l < 4 || strcmp(de->d_name + l - 3, ".py")) continue;
        regmatch_t m[3];
        if (regexec(re, de->d_name, 3, m, 0)) {
            (*unmatched)++;
            continue;
        }
        long level = strtol(de->d_name + m[1].rm_so, NULL, 10), pid = strtol(de->d_name + m[2].rm_so, NULL, 10);
        char prob[KG_PATH_MAX];
        if (find_problem(root, level, pid, prob, sizeof prob)) {
            (*unmatched)++;
            continue;
        }
        if (push(r, rel, prob, path, NULL)) rc = kg_errf(e, "out of memory");
    }
    closedir(d);
    return rc;
}

static int cmp_rows(const void *a, const void *b)
{
    return strcmp(((const struct audit_row *)a)->id, ((const struct audit_row *)b)->id);
}

static int read_dir(const struct audit_opts *o, struct audit_rows *r, struct kg_err *e)
{
    if (!o->problems) return kg_errf(e, "--dir needs --problems KERNELBENCH_ROOT (with level1/, level2/...)");
    regex_t re;
    regcomp(&re, "level_?([0-9]+).*problem_?([0-9]+)", REG_EXTENDED | REG_ICASE);
    int unmatched = 0;
    int rc = scan_dir(o->dir, o->problems, "", r, &re, &unmatched, e);
    regfree(&re);
    if (unmatched) fprintf(stderr, "kgate audit: %d .py files under %s not matched to a problem\n", unmatched, o->dir);
    return rc;
}

/* --pair PROBLEM.py:CANDIDATE.py; the candidate's path is the row's id. */
static int read_pair(const char *pair, struct audit_rows *r, struct kg_err *e)
{
    char *dup = strdup(pair), *colon = dup ? strchr(dup, ':') : NULL;
    if (!colon) {
        free(dup);
        return kg_errf(e, "--pair: expected PROBLEM.py:CANDIDATE.py, got '%s'", pair);
    }
    *colon = 0;
    int rc = push(r, colon + 1, dup, colon + 1, NULL) ? kg_errf(e, "out of memory") : 0;
    free(dup);
    return rc;
}

int kg_audit_corpus(const struct audit_opts *o, const char *cache, struct audit_rows *r, struct kg_err *e)
{
    int rc = o->jsonl ? read_jsonl(o->jsonl, cache, r, e) : 0;
    if (!rc && o->dir) rc = read_dir(o, r, e);
    for (int i = 0; !rc && i < o->npairs; i++) rc = read_pair(o->pairs[i], r, e);
    if (rc) return KG_EXIT_USAGE;
    qsort(r->v, (size_t)r->n, sizeof *r->v, cmp_rows);
    return 0;
}
