/* builtin.h: kernels embedded in the binary (`builtin:NAME`): the demo, so that a fresh
 * install has something to check, and the inspector's built-in targets. */
#ifndef KG_BUILTIN_H
#define KG_BUILTIN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct kg_builtin {
    const char *name; /* without extension */
    const char *file; /* file name, with extension */
    const char *source;
};

extern const struct kg_builtin kg_builtins[]; /* NULL-terminated by name */

/* Writes builtin NAME into the cache and returns its path. NAME may be a file name
 * (softmax_rows_cuda.cu); a plain NAME means NAME_cuda.cu when prefer_gpu and a GPU device node
 * exists, else NAME.c. */
int kg_builtin_path(const char *name, bool prefer_gpu, char *buf, size_t n, struct kg_err *e);

/* `kgate --list-builtins`: one line per built-in NAME into out (its runners, its op or oracle,
 * the first sentence of its description); returns how many (builtin_list.c). */
int kg_builtin_list(char *out, size_t n);

#endif
