/* corpus.h: the pairs `kgate audit` judges, as rows read from --jsonl, --dir and --pair
 * (corpus.c). A row owns its strings; kg_audit_rows_free releases them. */
#ifndef KG_AUDIT_CORPUS_H
#define KG_AUDIT_CORPUS_H

#include "audit/audit.h"

struct audit_row {
    char *id, *problem, *candidate, *label;
};

struct audit_rows {
    struct audit_row *v;
    int n, cap;
};

/* Every pair of o's --jsonl, --dir and --pair, appended to r and sorted by id (the order
 * shards are cut in). KG_EXIT_USAGE with e saying why on a bad input; r is then to be freed. */
int kg_audit_corpus(const struct audit_opts *o, const char *cache, struct audit_rows *r, struct kg_err *e);
void kg_audit_rows_free(struct audit_rows *r);

#endif
