/* parse.h: what the files of the contract parser share (contract.c reads the header and runs the
 * key table, args.c parses the keys about the entry's parameters, signature.c matches them
 * against the entry's definition). Not an interface for other layers: contract.h is that. */
#ifndef KG_CONTRACT_PARSE_H
#define KG_CONTRACT_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "contract/contract.h"

/* The contract being loaded and where its errors go. */
struct kg_parse {
    struct kg_contract *c;
    struct kg_err *e;
};

/* Fills x->e with "FILE:LINE: message" (just "FILE: message" when line is 0); returns -1. */
int kg_perr(struct kg_parse *x, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Strips white space from both ends of s, in place; returns the first kept character. */
char *kg_trim(char *s);

/* Iterates over items separated by any of `seps`, each trimmed, skipping empty ones. */
char *kg_next_item(char **cursor, const char *seps);

/* Whether the n characters at s are a C identifier shorter than KG_NAME_MAX. */
int kg_valid_ident(const char *s, size_t n);

/* A whole string as a decimal int64 (white space after it allowed); -1 if it is not one. */
int kg_parse_int64(const char *s, int64_t *out);

/* The expression parser's lookup (ud: the contract): index of the n-character symbol, or -1. */
int kg_lookup_sym(void *ud, const char *name, size_t n);

/* The 1-based line of p in the text starting at base. */
int kg_line_of(const char *base, const char *p);

/* Keys about the entry's parameters (args.c), each given the key's value and line. */
int kg_parse_shape(struct kg_parse *x, char *value, int line);
int kg_parse_args(struct kg_parse *x, char *value, int line);
int kg_parse_sweep(struct kg_parse *x, char *value, int line);
int kg_parse_launch(struct kg_parse *x, char *value, int line);
int kg_parse_alias(struct kg_parse *x, char *value, int line);
int kg_parse_inputs(struct kg_parse *x, char *value, int line);

/* The entry's definition in the source against args: (signature.c). */
int kg_check_signature(struct kg_parse *x);

#endif
