/* audit.c: the command lines of `kgate audit` (a corpus into a JSONL store), `kgate
 * audit-merge` (shards into one store) and `kgate report` (the figures of a store). Each turns
 * its arguments into the options of src/audit and prints what went wrong; the work is there. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* ---- kgate audit ---------------------------------------------------------------------------- */

static const struct kg_cli_opt aopts[] = {
    {"store", 1, 's', "OUT.jsonl", "the JSONL store results are appended to (required; one audit at a time)"},
    {"jsonl", 1, 'j', "ROWS.jsonl", "rows {id, problem (path or source), candidate (path or source), label}"},
    {"dir", 1, 'd', "RUNS", "a KernelBench run directory (files named level_L..._problem_P...)"},
    {"problems", 1, 'p', "ROOT", "with --dir: the KernelBench root holding level1/, level2/, ..."},
    {"pair", 1, 'P', "PROB:CAND", "one pair (repeatable)"},
    {"resume", 0, 'r', NULL, "skip the pairs the store already holds (a torn last record is cut off)"},
    {"shard", 1, 'S', "I/N", "only pairs I, I+N, I+2N, ... (sorted by id): split a corpus across machines"},
    {"jobs", 1, 'J', "N", "pairs checked at once (default: 3/8 of the cores, at least one per GPU)"},
    {"gpus", 1, 'G', "N", "GPUs to use: one check per GPU (CUDA_VISIBLE_DEVICES)"},
    {"compile-jobs", 1, 'C', "N", "candidates compiled ahead on the CPU cores (default: 5/8 of the cores)"},
    {"limit", 1, 'L', "SECONDS", "time limit of one pair (default 900)"},
    {"timeout", 1, 'T', "SECONDS", "time limit of one kernel run inside a check (default 60)"},
    {"allow", 1, 'A', "tf32", "passed to every check: tf32 judges fp32 against TF32's precision"},
    {"tolerance", 1, 'k', "K", "calibration factor (default 2; the report sweeps k anyway)"},
    {"seed", 1, 'x', "N", "base seed (default 1)"},
    {"python", 1, 'y', "PATH", "the torch runner's interpreter"},
    {"help", 0, 'h', NULL, "this help"},
};
#define NAOPTS    (int)(sizeof aopts / sizeof *aopts)
#define MAX_PAIRS 4096 /* --pair given more often than this: the rest are ignored */

static void audit_usage(FILE *f)
{
    fprintf(f, "usage: kgate audit --store OUT.jsonl [inputs] [options]\n");
    for (int i = 0; i < NAOPTS; i++) {
        char left[48];
        snprintf(left, sizeof left, "--%s%s%s", aopts[i].name, aopts[i].arg ? " " : "",
                 aopts[i].arg ? aopts[i].arg : "");
        fprintf(f, "  %-26s %s\n", left, aopts[i].help);
    }
}

/* One option into o (pairs collects --pair): 0; -1 on a bad --shard; 1 for --help or an
 * option getopt did not know. */
static int audit_option(struct audit_opts *o, char **pairs, int ch, char *arg)
{
    switch (ch) {
    case 's': o->store = arg; break;
    case 'j': o->jsonl = arg; break;
    case 'd': o->dir = arg; break;
    case 'p': o->problems = arg; break;
    case 'P':
        if (o->npairs < MAX_PAIRS) pairs[o->npairs++] = arg;
        break;
    case 'r': o->resume = true; break;
    case 'S':
        if (sscanf(arg, "%d/%d", &o->shard_i, &o->shard_n) != 2 || o->shard_n < 1 || o->shard_i < 0 ||
            o->shard_i >= o->shard_n) {
            fprintf(stderr, "kgate audit: --shard: expected I/N with 0 <= I < N\n");
            return -1;
        }
        break;
    case 'J': o->jobs = atoi(arg); break;
    case 'G': o->gpus = atoi(arg); break;
    case 'C': o->compile_jobs = atoi(arg); break;
    case 'L': o->limit = atof(arg); break;
    case 'T': o->run_timeout = atof(arg); break;
    case 'A':
        if (strcmp(arg, "tf32")) {
            fprintf(stderr, "kgate audit: --allow: expected tf32, got '%s'\n", arg);
            return -1;
        }
        o->allow_tf32 = true;
        break;
    case 'k': {
        char *end;
        o->tol_k = strtod(arg, &end);
        if (end == arg || *end || !(o->tol_k >= 1 && o->tol_k <= KG_TOL_K_MAX)) {
            fprintf(stderr, "kgate audit: --tolerance: expected a number from 1 to 1e6, got '%s'\n", arg);
            return -1;
        }
        break;
    }
    case 'x': o->seed = strtoull(arg, NULL, 10); break;
    case 'y': o->python = arg; break;
    default: return 1;
    }
    return 0;
}

int kg_cli_audit(int argc, char **argv)
{
    /* The defaults are the configuration measured on the H200 (16 cores, 1 GPU): 6 checks and 10
     * builds at once, 1093 pairs/hour over the controls; an audit is CPU-bound, so both scale
     * with the cores (3/8 and 5/8 of them). A load_inline build runs its C++ and CUDA halves at
     * once. --jobs given: that many; --gpus N alone: at least one check per GPU. */
    long ncpu = kg_ncpu();
    struct audit_opts o = {
        .jobs = -1, .compile_jobs = ncpu > 3 ? (int)(ncpu * 5 / 8) : 1, .limit = 900, .run_timeout = 60, .seed = 1};
    char *pairs[MAX_PAIRS];
    struct option lo[NAOPTS + 1];
    kg_cli_longopts(aopts, NAOPTS, lo);
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        int rc = audit_option(&o, pairs, ch, optarg);
        if (rc > 0) audit_usage(ch == 'h' ? stdout : stderr);
        if (rc) return rc > 0 && ch == 'h' ? KG_EXIT_OK : KG_EXIT_USAGE;
    }
    o.pairs = pairs;
    if (o.jobs == -1) { /* not given */
        o.jobs = ncpu * 3 / 8 > 1 ? (int)(ncpu * 3 / 8) : 1;
        if (o.gpus > 0 && o.jobs < o.gpus) o.jobs = o.gpus;
    }
    if (!o.store || (!o.jsonl && !o.dir && !o.npairs) || optind != argc || o.jobs < 1 || o.compile_jobs < 0 ||
        !(o.limit > 0)) {
        fprintf(stderr, "kgate audit: need --store and at least one of --jsonl, --dir, --pair (kgate audit --help)\n");
        return KG_EXIT_USAGE;
    }
    struct kg_err e;
    int rc = kg_audit(&o, &e);
    if (rc) fprintf(stderr, "kgate audit: %s\n", e.msg);
    return rc;
}

/* ---- kgate audit-merge, kgate report -------------------------------------------------------- */

int kg_cli_audit_merge(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: kgate audit-merge OUT.jsonl IN.jsonl...\n");
        return KG_EXIT_USAGE;
    }
    struct kg_err e;
    int rc = kg_audit_merge(argv[1], argv + 2, argc - 2, &e);
    if (rc) fprintf(stderr, "kgate audit-merge: %s\n", e.msg);
    return rc;
}

int kg_cli_report(int argc, char **argv)
{
    static const char use[] = "usage: kgate report STORE [--out DIR] [--seed N] [--sample N] [--gnuplot PATH]\n";
    struct report_opts o = {.out_dir = NULL, .seed = 1, .sample = 5};
    static const struct option lo[] = {{"out", 1, NULL, 'o'},
                                       {"gnuplot", 1, NULL, 'g'},
                                       {"seed", 1, NULL, 's'},
                                       {"sample", 1, NULL, 'n'},
                                       {0, 0, 0, 0}};
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
        if (ch == 'o')
            o.out_dir = optarg;
        else if (ch == 'g')
            o.gnuplot = optarg;
        else if (ch == 's')
            o.seed = strtoull(optarg, NULL, 10);
        else if (ch == 'n')
            o.sample = atoi(optarg);
        else {
            fputs(use, stderr);
            return KG_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fputs(use, stderr);
        return KG_EXIT_USAGE;
    }
    o.store = argv[optind];
    char dir[KG_PATH_MAX];
    if (!o.out_dir) {
        snprintf(dir, sizeof dir, "%s.report", o.store);
        o.out_dir = dir;
    }
    struct kg_err e;
    if (kg_audit_report(&o, &e)) {
        fprintf(stderr, "kgate report: %s\n", e.msg);
        return KG_EXIT_USAGE;
    }
    return KG_EXIT_OK;
}
