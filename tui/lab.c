/* lab.c: the lessons of `kgate lab`, read from the files embedded at build time (kg_lab_*,
 * generated from tui/lab/ by src/base/embed.awk: each named LESSONDIR/FILE), and what is done
 * with them: the list, the copy into a student's folder, the brief, and the check of a fix. A
 * lesson is its folder's lesson.json (title, gate, kernel, brief, three hints) plus its files. */
#include "tui/lab.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "gates/gate.h"

/* generated: tui/lab_files.c */
extern const char *const kg_lab_files_names[];
extern const char *const kg_lab_files_text[];
extern const int kg_lab_files_count;

/* ---- the embedded lessons ---------------------------------------------------------------- */

static bool is_lesson_json(const char *name)
{
    const char *s = strchr(name, '/');
    return s && !strcmp(s + 1, "lesson.json");
}

int kg_lab_count(void)
{
    int n = 0;
    for (int i = 0; i < kg_lab_files_count; i++) n += is_lesson_json(kg_lab_files_names[i]);
    return n;
}

/* Index of the n-th lesson.json (1-based), or -1. */
static int lesson_index(int n)
{
    for (int i = 0; i < kg_lab_files_count; i++)
        if (is_lesson_json(kg_lab_files_names[i]) && --n == 0) return i;
    return -1;
}

/* The embedded text of DIR/FILE, or NULL. */
static const char *lesson_file(const char *dir, const char *file)
{
    size_t dl = strlen(dir);
    for (int i = 0; i < kg_lab_files_count; i++)
        if (!strncmp(kg_lab_files_names[i], dir, dl) && kg_lab_files_names[i][dl] == '/' &&
            !strcmp(kg_lab_files_names[i] + dl + 1, file))
            return kg_lab_files_text[i];
    return NULL;
}

static int get_str(json_t *doc, const char *where, const char *key, bool required, char *buf, size_t n,
                   struct kg_err *e)
{
    json_t *v = json_object_get(doc, key);
    buf[0] = 0;
    if (!v && !required) return 0;
    if (!json_is_string(v)) return kg_errf(e, "%s: \"%s\" must be a string", where, key);
    if (json_string_length(v) >= n) return kg_errf(e, "%s: \"%s\" is longer than %zu bytes", where, key, n - 1);
    kg_strlcpy(buf, json_string_value(v), n);
    return 0;
}

int kg_lab_lesson(int n, struct kg_lesson *l, struct kg_err *e)
{
    int i = lesson_index(n);
    if (i < 0) return kg_errf(e, "no lesson %d (kgate lab lists %d)", n, kg_lab_count());
    memset(l, 0, sizeof *l);
    l->number = n;
    const char *name = kg_lab_files_names[i];
    size_t dl = (size_t)(strchr(name, '/') - name);
    if (dl >= sizeof l->dir) return kg_errf(e, "lesson %s: folder name too long", name);
    memcpy(l->dir, name, dl);
    char where[160];
    snprintf(where, sizeof where, "lesson %s", name);
    json_error_t je;
    json_t *doc = json_loads(kg_lab_files_text[i], 0, &je);
    if (!doc) return kg_errf(e, "%s:%d: %s", where, je.line, je.text);
    int rc = -1;
    char contract[16];
    if (!json_is_object(doc)) {
        kg_errf(e, "%s: expected an object", where);
        goto out;
    }
    if (get_str(doc, where, "title", true, l->title, sizeof l->title, e) ||
        get_str(doc, where, "gate", true, l->gate, sizeof l->gate, e) ||
        get_str(doc, where, "kernel", true, l->kernel, sizeof l->kernel, e) ||
        get_str(doc, where, "brief", true, l->brief, sizeof l->brief, e) ||
        get_str(doc, where, "contract", false, contract, sizeof contract, e) ||
        get_str(doc, where, "entry", false, l->entry, sizeof l->entry, e))
        goto out;
    const struct kg_gate *g = kg_gate_find(l->gate);
    if (!g && strcmp(l->gate, "contract")) {
        kg_errf(e, "%s: \"gate\": no gate '%s'", where, l->gate);
        goto out;
    }
    if (!lesson_file(l->dir, l->kernel)) {
        kg_errf(e, "%s: \"kernel\": %s is not one of the lesson's files", where, l->kernel);
        goto out;
    }
    l->write_contract = !strcmp(contract, "write");
    if (contract[0] && !l->write_contract) {
        kg_errf(e, "%s: \"contract\" is \"write\" or absent", where);
        goto out;
    }
    json_t *h = json_object_get(doc, "hints"), *m = json_object_get(doc, "may_change");
    if (!json_is_array(h) || json_array_size(h) != KG_LAB_HINTS) {
        kg_errf(e, "%s: \"hints\" must be an array of %d strings", where, KG_LAB_HINTS);
        goto out;
    }
    for (int k = 0; k < KG_LAB_HINTS; k++) {
        json_t *s = json_array_get(h, (size_t)k);
        if (!json_is_string(s) || json_string_length(s) >= KG_LAB_TEXT_MAX) {
            kg_errf(e, "%s: hint %d must be a string under %d bytes", where, k + 1, KG_LAB_TEXT_MAX);
            goto out;
        }
        kg_strlcpy(l->hints[k], json_string_value(s), KG_LAB_TEXT_MAX);
    }
    for (size_t k = 0; m && k < json_array_size(m) && l->nmay < 4; k++)
        kg_strlcpy(l->may_change[l->nmay++], json_string_value(json_array_get(m, k)) ?: "", sizeof l->may_change[0]);
    size_t kl = strlen(l->kernel);
    l->gpu = (g && g->needs_gpu) || (kl > 3 && !strcmp(l->kernel + kl - 3, ".cu"));
    rc = 0;
out:
    json_decref(doc);
    return rc;
}

bool kg_lab_can_run(const struct kg_lesson *l, char *why, size_t n)
{
    if (!l->gpu || access("/dev/nvidiactl", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0) return true;
    snprintf(why, n, "needs a GPU (no /dev/nvidia0 here)");
    return false;
}

int kg_lab_list(FILE *out)
{
    fprintf(out, "kgate lab: %d lessons (kgate lab N [DIR] starts one; kgate lab check N [DIR] checks it)\n\n",
            kg_lab_count());
    for (int n = 1; n <= kg_lab_count(); n++) {
        struct kg_lesson l;
        struct kg_err e;
        if (kg_lab_lesson(n, &l, &e)) {
            fprintf(out, "%3d  %s\n", n, e.msg);
            return -1;
        }
        char why[128];
        bool ok = kg_lab_can_run(&l, why, sizeof why);
        fprintf(out, "%3d  %-44s %-16s %-3s %s\n", n, l.title, l.gate, l.gpu ? "GPU" : "", ok ? "runs here" : why);
    }
    return 0;
}

/* ---- the student's copy -------------------------------------------------------------------- */

int kg_lab_copy(const struct kg_lesson *l, const char *dir, bool force, FILE *out, struct kg_err *e)
{
    if (mkdir(dir, 0777) && errno != EEXIST) return kg_errf(e, "cannot create %s: %s", dir, strerror(errno));
    size_t dl = strlen(l->dir);
    for (int i = 0; i < kg_lab_files_count; i++) {
        const char *name = kg_lab_files_names[i];
        if (strncmp(name, l->dir, dl) || name[dl] != '/' || is_lesson_json(name)) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name + dl + 1);
        size_t len;
        struct kg_err re;
        char *have = access(path, F_OK) == 0 ? kg_read_file(path, 1 << 24, &len, &re) : NULL;
        bool same = have && !strcmp(have, kg_lab_files_text[i]);
        free(have);
        if (same) continue;
        if (access(path, F_OK) == 0 && !force) {
            fprintf(out, "keeping %s: it differs from the lesson's (your edits; --force starts over)\n", path);
            continue;
        }
        if (kg_write_file(path, kg_lab_files_text[i], e)) return -1;
    }
    return 0;
}

void kg_lab_brief(const struct kg_lesson *l, const char *path, FILE *out)
{
    fprintf(out, "lesson %d: %s%s\n%s\n", l->number, l->title, l->gpu ? " (GPU)" : "", l->brief);
    fprintf(out, "the file: %s (edit it in another window, then: load %s)\n", path, path);
    fprintf(out, "hint: one more hint each time; lesson: this text; kgate lab check %d DIR: done yet?\n", l->number);
}

/* ---- checking a fix ------------------------------------------------------------------------ */

/* The contract header of text, one entry per key with its continuation lines, whitespace runs
 * made one space; the keys in skip are left out. */
static void header_norm(const char *text, const struct kg_lesson *l, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    const char *p = strstr(text, "/*@kgate"), *end = p ? strstr(p, "*/") : NULL;
    if (!p || !end) return;
    p += 8;
    bool skipping = false;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        if (p < eol && *p != ' ' && *p != '\t') { /* a key line starts an entry */
            skipping = false;
            for (int k = 0; k < l->nmay; k++) {
                size_t kl = strlen(l->may_change[k]);
                if (!strncmp(p, l->may_change[k], kl) && p[kl] == ':') skipping = true;
            }
        }
        for (const char *q = p; q < eol && !skipping && len + 2 < n; q++) {
            bool sp = *q == ' ' || *q == '\t';
            if (sp && (len == 0 || buf[len - 1] == ' ')) continue;
            buf[len++] = sp ? ' ' : *q;
        }
        if (!skipping && len + 2 < n && len && buf[len - 1] != ' ') buf[len++] = ' ';
        buf[len] = 0;
        p = eol + 1;
    }
}

/* The student's header against the lesson's: a lab fixes the kernel, not its contract. */
static int contract_kept(const struct kg_lesson *l, const char *path, FILE *out)
{
    size_t len;
    struct kg_err e;
    char *have = kg_read_file(path, 1 << 24, &len, &e);
    if (!have) {
        fprintf(out, "%s\n", e.msg);
        return -1;
    }
    static const size_t max = 1 << 16;
    char *a = malloc(max), *b = malloc(max);
    int rc = -1;
    if (a && b) {
        header_norm(have, l, a, max);
        header_norm(lesson_file(l->dir, l->kernel), l, b, max);
        rc = strcmp(a, b) ? -1 : 0;
    }
    if (rc) {
        fprintf(out, "not yet: the contract header of %s was changed; the lesson fixes the kernel, not its contract",
                path);
        if (l->nmay) fprintf(out, " (only %s%s may change)", l->may_change[0], l->nmay > 1 ? ", ..." : "");
        fprintf(out, ".\nrestore it (kgate lab %d DIR --force copies the lesson again)\n", l->number);
    }
    free(a);
    free(b);
    free(have);
    return rc;
}

int kg_lab_check(const struct kg_lesson *l, const char *dir, FILE *out)
{
    char path[4096], why[128];
    snprintf(path, sizeof path, "%s/%s", dir, l->kernel);
    if (access(path, R_OK)) {
        fprintf(out, "kgate: no %s: start the lesson first (kgate lab %d %s)\n", path, l->number, dir);
        return KG_EXIT_USAGE;
    }
    if (!kg_lab_can_run(l, why, sizeof why)) {
        fprintf(out, "lesson %d %s: nothing was checked\n", l->number, why);
        return KG_EXIT_UNAVAILABLE;
    }
    if (!l->write_contract && contract_kept(l, path, out)) return KG_EXIT_FAIL;
    struct kg_session_opts o;
    kg_session_opts_default(&o);
    struct kg_session *s;
    struct kg_err e;
    int rc = kg_session_open(&s, path, &o, &e);
    if (rc == KG_EXIT_UNAVAILABLE || rc == KG_EXIT_INTERNAL) {
        fprintf(out, "%s\nlesson %d: nothing was checked\n", e.msg, l->number);
        return rc;
    }
    if (rc != KG_EXIT_OK) {
        fprintf(out, "not yet: %s does not load:\n%s\n", path, e.msg);
        return KG_EXIT_FAIL;
    }
    const struct kg_contract *c = kg_session_contract(s);
    if (l->write_contract && (c->has_op || !c->oracle_func[0] || strcmp(c->entry, l->entry))) {
        fprintf(out, "not yet: the lesson asks for a contract with entry: %s and oracle: FUNC (yours: entry %s, %s)\n",
                l->entry, c->entry, c->has_op ? "op:" : "no oracle");
        kg_session_close(s);
        return KG_EXIT_FAIL;
    }
    int bad = 0, pass = 0, skip = 0;
    for (int i = 0; i < kg_ngates; i++) {
        struct kg_verdict v;
        kg_session_run_gate(s, kg_gates[i], &v);
        if (v.status == KG_PASS) pass++;
        if (v.status == KG_SKIP) skip++;
        if (v.status != KG_PASS && v.status != KG_SKIP) {
            if (!bad++) fprintf(out, "not yet: lesson %d (%s):\n", l->number, path);
            fprintf(out, "  %-16s %-7s %s\n", kg_gates[i]->id, kg_status_name(v.status), v.summary);
        }
        kg_verdict_clear(&v);
    }
    kg_session_close(s);
    if (bad) return KG_EXIT_FAIL;
    if (!pass) {
        fprintf(out, "lesson %d: no gate could run here (%d skipped): nothing was checked\n", l->number, skip);
        return KG_EXIT_UNAVAILABLE;
    }
    fprintf(out, "done: lesson %d (%s): every gate passes (%d pass, %d skip)\n", l->number, l->title, pass, skip);
    return KG_EXIT_OK;
}
