/* audit.h: `kgate audit` (a corpus of KernelBench-format pairs into a JSONL store),
 * `kgate audit-merge` (shards into one store) and `kgate report` (the figures that defend an
 * audit). */
#ifndef KG_AUDIT_H
#define KG_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

struct audit_opts {
    const char *store;    /* the JSONL store (required) */
    const char *jsonl;    /* rows {id, problem, candidate, label} */
    const char *dir;      /* KernelBench run directory ... */
    const char *problems; /* ... and the KernelBench root its problems come from */
    char **pairs;         /* PROBLEM.py:CANDIDATE.py */
    int npairs;
    bool resume;
    int shard_i, shard_n;
    int jobs, gpus, compile_jobs;
    double limit;       /* per kernel, seconds */
    double run_timeout; /* per run inside a check */
    bool allow_tf32;    /* --allow tf32, passed to every check */
    double tol_k;
    uint64_t seed;
    const char *python;
};

/* Checks o's pairs into o->store: 0, or an exit status with e saying why (KG_EXIT_USAGE: a bad
 * input, or the store is held by another audit; KG_EXIT_INTERNAL: a record could not be written,
 * and the audit stopped there). */
int kg_audit(const struct audit_opts *o, struct kg_err *e);
/* Joins the stores in[0..n) into out (store.c): one record per id, the last read wins, sorted
 * by id; out is replaced whole, under its lock. 0, or an exit status with e saying why. */
int kg_audit_merge(const char *out, char *const *in, int n, struct kg_err *e);

struct report_opts {
    const char *store;
    const char *out_dir; /* report.md, report.json, *.svg */
    const char *gnuplot; /* the plotting program (default gnuplot) */
    uint64_t seed;       /* of the stratified sample */
    int sample;          /* kernels per gate in the hand-audit sample */
};

int kg_audit_report(const struct report_opts *o, struct kg_err *e);

#endif
