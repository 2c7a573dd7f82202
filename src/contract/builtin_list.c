/* builtin_list.c: `kgate --list-builtins`, read from the table of embedded kernels: one line per
 * built-in NAME (its host and CUDA variants together), with what its contract says it computes
 * and the first sentence of the comment that follows the contract. */
#include <stdio.h>
#include <string.h>

#include "contract/builtin.h"
#include "contract/contract.h"

/* The plain NAME of b: softmax_rows for softmax_rows.c and softmax_rows_cuda.cu. */
static void plain_name(const struct kg_builtin *b, char *buf, size_t n)
{
    size_t l = strlen(b->name);
    if (strstr(b->file, ".cu") && l > 5 && !strcmp(b->name + l - 5, "_cuda")) l -= 5;
    snprintf(buf, n, "%.*s", (int)l, b->name);
}

/* The first sentence of the first block comment after the contract's closing, as one line of
 * at most 72 characters: for a built-in without a `// builtin:` line. */
static void summary(const char *src, char *buf, size_t n)
{
    buf[0] = 0;
    const char *end = strstr(src, "*/");
    const char *c = end ? strstr(end + 2, "/*") : NULL;
    if (!c) return;
    size_t len = 0;
    bool space = false;
    for (const char *p = c + 2; *p && strncmp(p, "*/", 2) && len + 1 < n; p++) {
        if (*p == '\n' || *p == ' ' || *p == '\t' || *p == '*') {
            space = len > 0;
            continue;
        }
        if (space) buf[len++] = ' ';
        space = false;
        if (len + 1 < n) buf[len++] = *p;
        if (*p == '.' && (p[1] == ' ' || p[1] == '\n')) break;
    }
    buf[len] = 0;
    if (len > 72) { /* one line: cut at a word, and say so */
        size_t cut = 69;
        while (cut > 40 && buf[cut] != ' ') cut--;
        snprintf(buf + cut, n - cut, "...");
    }
}

int kg_builtin_list(char *out, size_t n)
{
    size_t len = 0;
    int count = 0;
    out[0] = 0;
    for (const struct kg_builtin *b = kg_builtins; b->name; b++) {
        char name[KG_NAME_MAX], other[KG_NAME_MAX];
        plain_name(b, name, sizeof name);
        bool seen = false;
        for (const struct kg_builtin *a = kg_builtins; a < b; a++) {
            plain_name(a, other, sizeof other);
            seen |= !strcmp(name, other);
        }
        if (seen) continue;
        char runners[32] = "", what[KG_PATH_MAX], about[200];
        size_t rl = 0;
        for (const struct kg_builtin *a = b; a->name; a++) {
            plain_name(a, other, sizeof other);
            if (!strcmp(name, other))
                kg_appendf(runners, sizeof runners, &rl, "%s%s", rl ? "," : "",
                           strstr(a->file, ".cu") ? "cuda" : "host");
        }
        struct kg_contract *c;
        struct kg_err e;
        if (kg_contract_load_text(b->file, b->source, strlen(b->source), &c, &e)) {
            snprintf(what, sizeof what, "(its contract does not load: %s)", e.msg);
        } else {
            if (c->has_op)
                snprintf(what, sizeof what, "op %s", c->op_text);
            else
                snprintf(what, sizeof what, "oracle %s", c->oracle_func);
            kg_contract_free(c);
        }
        if (b->summary && b->summary[0]) /* the source's own `// builtin:` line */
            snprintf(about, sizeof about, "%s", b->summary);
        else
            summary(b->source, about, sizeof about);
        kg_appendf(out, n, &len, "builtin:%-22s %-10s %s%s%s\n", name, runners, what, about[0] ? ": " : "", about);
        count++;
    }
    return count;
}
