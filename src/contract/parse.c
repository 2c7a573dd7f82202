/* parse.c: the small readers every key's parser uses (parse.h): errors naming FILE:LINE, trimming,
 * item lists, identifiers and integers, and the lookups of a contract's symbols and args by name
 * (contract.h), which the expression parser and the later layers call too. */
#include "contract/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kg_perr(struct kg_parse *x, int line, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0) return kg_errf(x->e, "%s:%d: %s", x->c->path, line, msg);
    return kg_errf(x->e, "%s: %s", x->c->path, msg);
}

char *kg_trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) *--end = 0;
    return s;
}

int kg_lookup_sym(void *ud, const char *name, size_t n)
{
    const struct kg_contract *c = ud;
    for (int i = 0; i < c->nsyms; i++)
        if (strlen(c->sym[i]) == n && memcmp(c->sym[i], name, n) == 0) return i;
    return -1;
}

int kg_contract_sym(const struct kg_contract *c, const char *name)
{
    return kg_lookup_sym((void *)c, name, strlen(name));
}

int kg_contract_arg(const struct kg_contract *c, const char *name)
{
    for (int i = 0; i < c->nargs; i++)
        if (strcmp(c->args[i].name, name) == 0) return i;
    return -1;
}

int kg_valid_ident(const char *s, size_t n)
{
    if (n == 0 || n >= KG_NAME_MAX || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return 0;
    return 1;
}

int kg_parse_int64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s) return -1;
    while (isspace((unsigned char)*end)) end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

char *kg_next_item(char **cursor, const char *seps)
{
    char *s = *cursor;
    if (!s) return NULL;
    for (;;) {
        s += strspn(s, seps);
        if (!*s) {
            *cursor = NULL;
            return NULL;
        }
        char *end = s + strcspn(s, seps);
        if (*end) {
            *end = 0;
            *cursor = end + 1;
        } else
            *cursor = NULL;
        char *t = kg_trim(s);
        if (*t) return t;
        if (!*cursor) return NULL;
        s = *cursor;
    }
}

int kg_line_of(const char *base, const char *p)
{
    int line = 1;
    for (const char *q = base; q < p; q++)
        if (*q == '\n') line++;
    return line;
}
