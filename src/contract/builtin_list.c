/* builtin_list.c: `kgate --list-builtins`, read from the table of embedded kernels: one line per
 * built-in NAME (its host and CUDA variants together), with what its contract says it computes
 * and its `// builtin:` summary line. */
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
        snprintf(about, sizeof about, "%s", b->summary); /* its `// builtin:` line (embed.awk requires one) */
        kg_appendf(out, n, &len, "builtin:%-22s %-10s %s%s%s\n", name, runners, what, about[0] ? ": " : "", about);
        count++;
    }
    return count;
}
