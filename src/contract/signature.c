/* signature.c: the entry's definition, found in the source with comments and strings blanked,
 * matched against args: (count, names, pointer or scalar). A definition that macros generate is
 * not found and is left to the compile step. */
#include "contract/parse.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Blanks a string or char literal's contents from p (just after its opening quote) up to the
 * closing quote q on the same line (a backslash escapes the next character; newlines are kept,
 * so lines still count); returns where it stopped: the closing quote, a newline or the end. */
static char *blank_literal(char *p, char q)
{
    while (*p && *p != q && *p != '\n') {
        if (*p == '\\' && p[1]) {
            *p++ = ' ';
            if (*p == '\n') {
                p++;
                continue;
            }
        }
        *p++ = ' ';
    }
    return p;
}

/* Whether the quote at p (in s) is a digit separator, inside a number as 1'000'000 (C++14,
 * so CUDA C): the token it belongs to starts with a digit. */
static int in_number(const char *s, const char *p)
{
    const char *b = p;
    while (b > s && (isalnum((unsigned char)b[-1]) || b[-1] == '_' || b[-1] == '.' || b[-1] == '\'')) b--;
    return isdigit((unsigned char)*b);
}

/* Blanks out comments and string and char literals (keeping newlines) so the scan below sees
 * code: '"' is a char, not the start of a string that would hide the rest of its line. */
static void strip_comments(char *s)
{
    for (char *p = s; *p; p++) {
        if (p[0] == '/' && p[1] == '*') {
            char *q = strstr(p + 2, "*/");
            char *end = q ? q + 2 : p + strlen(p);
            for (; p < end; p++)
                if (*p != '\n') *p = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') *p++ = ' ';
            if (!*p) break;
        } else if (*p == '"' || (*p == '\'' && !in_number(s, p))) {
            p = blank_literal(p + 1, *p);
            if (!*p) break;
        }
    }
}

static int is_word(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* The entry's definition in code (comments blanked): the name as a whole word, followed by its
 * parameter list and '{', preceded by a type, '*' or ')' (launch bounds) but not `return` (a
 * call). Cuts the list at its ')' and sets *params to its inside; *returns_int says whether the
 * word before the name is `int`. NULL when there is none. */
static char *find_definition(char *code, const char *entry, char **params, bool *returns_int)
{
    size_t n = strlen(entry);
    for (char *p = code; (p = strstr(p, entry)); p += n) {
        size_t at = (size_t)(p - code); /* offsets, not pointers: nothing points before code */
        if (at > 0 && is_word(code[at - 1])) continue;
        char *q = p + n;
        if (is_word(*q)) continue;
        while (isspace((unsigned char)*q)) q++;
        if (*q != '(') continue;
        size_t b = at; /* one past the character before the name */
        while (b > 0 && isspace((unsigned char)code[b - 1])) b--;
        if (b == 0) continue;
        char last = code[b - 1];
        if (!(is_word(last) || last == '*' || last == ')')) continue;
        size_t w = b - 1; /* the word that ends there */
        while (w > 0 && is_word(code[w - 1])) w--;
        size_t wl = b - w;
        if (wl == 6 && !strncmp(code + w, "return", 6)) continue;
        int depth = 0;
        char *r = q;
        for (; *r; r++) {
            if (*r == '(') depth++;
            if (*r == ')' && --depth == 0) break;
        }
        if (!*r) continue;
        char *after = r + 1;
        while (isspace((unsigned char)*after)) after++;
        if (*after != '{') continue; /* only definitions */
        *returns_int = wl == 3 && !strncmp(code + w, "int", 3);
        *r = 0;
        *params = q + 1;
        return p;
    }
    return NULL;
}

/* Splits a parameter list on depth-0 commas into items, leaving out `void`; returns how many
 * there are. Keeps the first KG_MAX_ARGS + 1, one more than any args: can declare, but counts
 * them all for the message. */
static int split_params(char *params, char **items)
{
    int np = 0, depth = 0;
    char *st = params;
    for (char *p = params;; p++) {
        if (*p == '(' || *p == '[' || *p == '<') depth++;
        if (*p == ')' || *p == ']' || *p == '>') depth--;
        if ((*p == ',' && depth == 0) || !*p) {
            char sv = *p;
            *p = 0;
            char *t = kg_trim(st);
            if (*t && strcmp(t, "void") != 0) {
                if (np <= KG_MAX_ARGS) items[np] = t;
                np++;
            }
            if (!sv) break;
            st = p + 1;
        }
    }
    return np;
}

/* The parameters (items, np) of the definition on `line` against args: count, names (the last
 * identifier outside brackets) and kinds (a pointer or array is a tensor). */
static int match_params(struct kg_parse *x, char **items, int np, int line)
{
    struct kg_contract *c = x->c;
    if (np != c->nargs)
        return kg_perr(x, c->line_args, "args: %d declared, but %s (line %d) takes %d parameter%s", c->nargs, c->entry,
                       line, np, np == 1 ? "" : "s");
    for (int i = 0; i < np; i++) {
        char *t = items[i];
        int is_ptr = strchr(t, '*') || strchr(t, '[');
        char *lb = strchr(t, '[');
        if (lb) *lb = 0;
        char *e = t + strlen(t);
        while (e > t && !is_word(e[-1])) e--;
        char *s = e;
        while (s > t && is_word(s[-1])) s--;
        const struct kg_arg *a = &c->args[i];
        if ((size_t)(e - s) != strlen(a->name) || strncmp(s, a->name, (size_t)(e - s)) != 0)
            return kg_perr(x, c->line_args, "args: arg %d is '%s', but parameter %d of %s (line %d) is named '%.*s'",
                           i + 1, a->name, i + 1, c->entry, line, (int)(e - s), s);
        if (is_ptr != (a->kind == KG_ARG_TENSOR))
            return kg_perr(x, c->line_args, "args: '%s' is declared a %s, but %s (line %d) takes it as a %s", a->name,
                           a->kind == KG_ARG_TENSOR ? "tensor" : "scalar", c->entry, line,
                           is_ptr ? "pointer" : "scalar");
    }
    return 0;
}

/* Finds the definition of the entry and checks its parameter count, names and kinds. A
 * definition that cannot be found (generated by macros) is left for the compile step. */
int kg_check_signature(struct kg_parse *x)
{
    struct kg_contract *c = x->c;
    char *code = strdup(c->source);
    if (!code) return kg_perr(x, 0, "out of memory");
    strip_comments(code);
    char *params, *items[KG_MAX_ARGS + 1];
    char *found = find_definition(code, c->entry, &params, &c->entry_returns_int);
    int rc = 0;
    if (found) {
        c->line_entry_def = kg_line_of(code, found);
        rc = match_params(x, items, split_params(params, items), c->line_entry_def);
    }
    free(code);
    return rc;
}
