/* builtin.h: kernels embedded in the binary (`builtin:NAME`): the demo, so that a fresh
 * install has something to check, and the inspector's built-in targets (the gated-linear-
 * recurrence family, forward and backward, each as a host variant NAME.c and a CUDA one). */
#ifndef KG_BUILTIN_H
#define KG_BUILTIN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct kg_builtin {
    const char *name; /* without extension */
    const char *file; /* file name, with extension */
    const char *source;
    const char *summary; /* one line, from the source's `// builtin: ...` (kgate --list-builtins) */
};

extern const struct kg_builtin kg_builtins[]; /* NULL-terminated by name */

/* Which variant a plain NAME means. */
enum kg_builtin_pick {
    KG_BUILTIN_AUTO, /* the CUDA one when a GPU device node exists, else the host one */
    KG_BUILTIN_HOST, /* NAME.c (--runner host) */
    KG_BUILTIN_CUDA, /* NAME.cu or NAME_cuda.cu (--runner cuda) */
};

/* Writes builtin NAME into the cache and returns its path. NAME may be a file name
 * (softmax_rows_cuda.cu, gdn_bwd.c), which pick does not change, or a plain NAME. */
int kg_builtin_path(const char *name, enum kg_builtin_pick pick, char *buf, size_t n, struct kg_err *e);

/* `kgate --list-builtins`: one line per built-in NAME into out (its runners, its op or oracle,
 * its `// builtin:` summary); returns how many (builtin_list.c). */
int kg_builtin_list(char *out, size_t n);

#endif
