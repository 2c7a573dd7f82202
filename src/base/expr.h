/* expr.h: integer expressions over shape symbols, as written in contract dims and launch
 * lines: + - * / % unary minus, parentheses, cdiv(a,b), min(a,b), max(a,b). Symbols are
 * resolved to indices when parsed, so an undefined symbol is a parse error with its column;
 * evaluation is on int64 and reports overflow and division by zero instead of wrapping. */
#ifndef KG_EXPR_H
#define KG_EXPR_H

#include <stdint.h>

#include "base/util.h"

struct kg_expr;

/* Symbol lookup for the parser: index of NAME (length n), or -1 when undefined. */
typedef int (*kg_sym_lookup)(void *ud, const char *name, size_t n);

/* Parses s[0..n); returns NULL with e filled ("undefined symbol 'K'", "expected ')'")
 * and *col set to the 0-based column of the problem. The result is freed with kg_expr_free. */
struct kg_expr *kg_expr_parse(const char *s, size_t n, kg_sym_lookup lookup, void *ud, int *col, struct kg_err *e);
void kg_expr_free(struct kg_expr *x);

/* Evaluates with symbol values sym[]; -1 with e filled on overflow or division by zero. */
int kg_expr_eval(const struct kg_expr *x, const int64_t *sym, int64_t *out, struct kg_err *e);

/* The expression as written (normalised spacing), for reports. */
const char *kg_expr_text(const struct kg_expr *x);

/* If the expression is a single symbol, its index; else -1. */
int kg_expr_symbol(const struct kg_expr *x);

/* Whether symbol index k occurs anywhere in the expression. */
int kg_expr_uses(const struct kg_expr *x, int k);

#endif
