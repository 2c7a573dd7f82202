/* main.c: the kgate command line. `kgate check` judges one kernel file with the twelve gates;
 * `kgate FILE` opens the inspector; `kgate __worker FD` is the worker process the judge
 * starts (never typed by hand). --help is generated from the option table below, the one
 * place options are defined. Only this file exits. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "contract/builtin.h"
#include "engine/inspect.h"
#include "engine/report.h"
#include "runners/runner.h"
#include "base/sandbox.h"
#include "gates/gate.h"
#include "engine/torch.h"
#ifdef KG_HAVE_TUI
#include "tui/tui.h"
#endif

struct opt {
    const char *name;
    int has_arg;
    int val;
    const char *arg;
    const char *help;
};

enum {
    O_GATES = 'g', O_SEED = 's', O_JSON = 'j', O_RUNNER = 'r', O_HELP = 'h', O_VERSION = 'V', O_VERBOSE = 'v',
    O_BASELINE = 1000, O_SHAPE, O_DTYPE, O_DIST, O_TIMEOUT, O_TOL, O_NO_COLOR, O_LIST_GATES, O_REPL, O_QUIET,
    O_REF, O_PYTHON, O_COMPILE_ONLY, O_EXHAUSTIVE,
};

static const struct opt opts[] = {
    {"gates", 1, O_GATES, "ID,ID", "run only these gates (default: all twelve, in order)"},
    {"seed", 1, O_SEED, "N", "base seed of every input (default 1)"},
    {"json", 1, O_JSON, "OUT", "also write the report as JSON to OUT (alone or '-': stdout; the text to stderr)"},
    {"runner", 1, O_RUNNER, "host|cuda", "runner (default: host for .c, cuda for .cu)"},
    {"baseline", 1, O_BASELINE, "kernelbench", "also run the field's standard test: kernelbench (atol=rtol=1e-2) or kernelbench-fp32 (1e-4)"},
    {"ref", 1, O_REF, "PROBLEM.py", "KernelBench format: FILE is a ModelNew candidate answering PROBLEM.py's Model"},
    {"python", 1, O_PYTHON, "PATH", "the interpreter of the torch runner (default: $KGATE_PYTHON, else python3)"},
    {"shape", 1, O_SHAPE, "SYM=V,..", "pin shape symbols (replays one case; the shapes gate runs only it)"},
    {"dtype", 1, O_DTYPE, "DTYPE", "pin the instance dtype of a `dtypes:` contract"},
    {"dist", 1, O_DIST, "NAME", "pin the input distribution: normal uniform unit binary large-mean mixed special"},
    {"timeout", 1, O_TIMEOUT, "SECONDS", "time limit of one kernel run (default 10)"},
    {"tolerance", 1, O_TOL, "K", "calibration factor k of threshold = k x ref error + floor (default: contract's, 2)"},
    {"verbose", 0, O_VERBOSE, NULL, "print details and evidence of passing gates too"},
    {"quiet", 0, O_QUIET, NULL, "print only the verdict line"},
    {"no-color", 0, O_NO_COLOR, NULL, "no colours (also when NO_COLOR is set or stdout is not a terminal)"},
    {"exhaustive", 0, O_EXHAUSTIVE, NULL, "calibrated gates measure every case, also after a failure (audits)"},
    {"compile-only", 0, O_COMPILE_ONLY, NULL, "load and compile the kernel into the cache, run nothing"},
    {"list-gates", 0, O_LIST_GATES, NULL, "list the gates and exit"},
    {"repl", 0, O_REPL, NULL, "the inspector's command language as a plain line REPL"},
    {"help", 0, O_HELP, NULL, "this help"},
    {"version", 0, O_VERSION, NULL, "print the version"},
};
#define NOPTS (int)(sizeof opts / sizeof *opts)

static void usage(FILE *f)
{
    fprintf(f, "usage: kgate check FILE [options]     judge a kernel with the twelve gates\n"
               "       kgate check --ref PROBLEM.py CANDIDATE.py [options]  a KernelBench-format candidate\n"
               "       kgate audit --store OUT.jsonl (--jsonl ROWS | --dir RUNS --problems ROOT | --pair P:C...)\n"
               "       kgate audit-merge OUT.jsonl IN.jsonl...  |  kgate report STORE [--out DIR]\n"
               "       kgate FILE | kgate --repl [FILE] the interactive inspector\n"
               "       kgate demo                      check the built-in example (host runner without a GPU)\n"
               "       kgate explain GATE              what a gate checks and why\n"
               "       kgate --list-gates | --help | --version\n"
               "FILE is a .c (host runner) or .cu (CUDA runner) file with a /*@kgate ... */ contract\n"
               "(kgate-contract(5)), or builtin:NAME (kgate --list-builtins... see `kgate demo`).\n\noptions:\n");
    for (int i = 0; i < NOPTS; i++) {
        char left[48];
        if (opts[i].val < 256 && opts[i].val > 0)
            snprintf(left, sizeof left, "-%c, --%s%s%s", opts[i].val, opts[i].name, opts[i].arg ? " " : "",
                     opts[i].arg ? opts[i].arg : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", opts[i].name, opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
        fprintf(f, "  %-28s %s\n", left, opts[i].help);
    }
    fprintf(f, "\nexit status: 0 every gate passed or skipped, 1 a gate failed or errored, 2 bad usage or a\n"
               "kernel file that cannot be loaded, 3 nothing was checked (the runner cannot run here),\n"
               "4 kgate itself failed.\n");
}

static void list_gates(void)
{
    for (int i = 0; kg_gates[i]; i++)
        printf("%-16s %-4s %s%s\n", kg_gates[i]->id, kg_gates[i]->tolerance_free ? "tf" : "cal", kg_gates[i]->title,
               kg_gates[i]->needs_gpu ? " (GPU only)" : "");
    printf("\ntf: tolerance-free; cal: calibrated threshold = k x ref error + floor\n");
}

static int explain(const char *id)
{
    const struct kg_gate *g = kg_gate_find(id);
    if (!g) {
        fprintf(stderr, "kgate: no gate '%s' (kgate --list-gates)\n", id);
        return KG_EXIT_USAGE;
    }
    printf("%s: %s (%s)\n\n%s\n", g->id, g->title, g->tolerance_free ? "tolerance-free" : "calibrated", g->explain);
    if (g->explain_python) printf("\n%s\n", g->explain_python);
    return KG_EXIT_OK;
}

static int apply_shape(const char *text, struct kg_session_opts *o, const char *path)
{
    struct kg_contract *c;
    struct kg_err e;
    if (kg_contract_load(path, &c, &e)) return 0; /* the session reports the load error */
    o->pin_shape = true;
    for (int i = 0; i < KG_MAX_SYMS; i++) o->sym[i] = i < c->nsyms ? c->nominal[i] : 0;
    char *dup = strdup(text), *save = NULL;
    int rc = 0;
    for (char *it = strtok_r(dup, ", ", &save); it; it = strtok_r(NULL, ", ", &save)) {
        char *eq = strchr(it, '=');
        char *end;
        if (!eq) {
            fprintf(stderr, "kgate: --shape: expected SYM=VALUE, got '%s'\n", it);
            rc = -1;
            break;
        }
        *eq = 0;
        int k = kg_contract_sym(c, it);
        long long v = strtoll(eq + 1, &end, 10);
        if (k < 0) {
            fprintf(stderr, "kgate: --shape: %s has no shape symbol '%s'\n", path, it);
            rc = -1;
            break;
        }
        if (*end || end == eq + 1 || v < 0) {
            fprintf(stderr, "kgate: --shape: %s=%s is not a non-negative integer\n", it, eq + 1);
            rc = -1;
            break;
        }
        o->sym[k] = v;
    }
    free(dup);
    kg_contract_free(c);
    return rc;
}

static void progress(void *ud, const char *gate, const char *what)
{
    (void)ud;
    if (isatty(2)) fprintf(stderr, "\r\033[K  %s: %s", gate, what), fflush(stderr);
}

/* `--json` names its output file, but `kgate check FILE --json` (nothing after it, another
 * option, or the kernel file) means JSON on stdout: such a bare --json becomes --json=-. */
static bool bare_json(int i, int argc, char **argv)
{
    if (strcmp(argv[i], "--json") && strcmp(argv[i], "-j")) return false;
    if (i + 1 >= argc) return true;
    const char *n = argv[i + 1], *dot = strrchr(n, '.');
    if (n[0] == '-') return n[1] != 0;
    return !strncmp(n, "builtin:", 8) || (dot && (!strcmp(dot, ".c") || !strcmp(dot, ".cu") || !strcmp(dot, ".py")));
}

static int cmd_check(int argc, char **argv, bool demo)
{
    char *args[256];
    if (argc >= (int)(sizeof args / sizeof *args)) {
        fprintf(stderr, "kgate: too many arguments\n");
        return KG_EXIT_USAGE;
    }
    for (int i = 0; i < argc; i++) args[i] = bare_json(i, argc, argv) ? "--json=-" : argv[i];
    args[argc] = NULL;
    argv = args;

    struct kg_session_opts so;
    kg_session_opts_default(&so);
    const char *gates = NULL, *json_out = NULL, *shape = NULL, *ref = NULL;
    bool verbose = false, quiet = false, color = isatty(1) && !getenv("NO_COLOR"), compile_only = false;
    struct kg_baseline base = {0};
    struct option lo[NOPTS + 1];
    for (int i = 0; i < NOPTS; i++) lo[i] = (struct option){opts[i].name, opts[i].has_arg, NULL, opts[i].val};
    memset(&lo[NOPTS], 0, sizeof lo[NOPTS]);
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "g:s:j:r:hVv", lo, NULL)) != -1) {
        char *end;
        switch (ch) {
        case O_GATES: gates = optarg; break;
        case O_SEED:
            errno = 0;
            so.seed = strtoull(optarg, &end, 10);
            if (errno || *end || end == optarg) {
                fprintf(stderr, "kgate: --seed: '%s' is not a non-negative integer\n", optarg);
                return KG_EXIT_USAGE;
            }
            so.seed_given = true;
            break;
        case O_JSON: json_out = optarg; break;
        case O_RUNNER:
            if (!strcmp(optarg, "host"))
                so.runner = KG_RUNNER_HOST;
            else if (!strcmp(optarg, "cuda"))
                so.runner = KG_RUNNER_CUDA;
            else {
                fprintf(stderr, "kgate: --runner: expected host or cuda, got '%s'\n", optarg);
                return KG_EXIT_USAGE;
            }
            break;
        case O_BASELINE:
            base.asked = true;
            if (!strcmp(optarg, "kernelbench")) {
                base.name = "kernelbench";
                base.tol = 1e-2;
            } else if (!strcmp(optarg, "kernelbench-fp32")) {
                base.name = "kernelbench-fp32";
                base.tol = 1e-4;
            } else {
                fprintf(stderr, "kgate: --baseline: expected kernelbench or kernelbench-fp32, got '%s'\n", optarg);
                return KG_EXIT_USAGE;
            }
            break;
        case O_REF: ref = optarg; break;
        case O_PYTHON: so.python = optarg; break;
        case O_SHAPE:
            shape = optarg; /* symbols are known once the file is loaded: see apply_shape */
            break;
        case O_DTYPE: {
            enum kg_dtype t;
            if (kg_dtype_parse(optarg, strlen(optarg), &t) || t == KG_DTYPE_T) {
                fprintf(stderr, "kgate: --dtype: unknown dtype '%s'\n", optarg);
                return KG_EXIT_USAGE;
            }
            so.dtype = t;
            break;
        }
        case O_DIST: {
            enum kg_dist d;
            if (kg_dist_parse(optarg, &d)) {
                fprintf(stderr, "kgate: --dist: unknown distribution '%s' (normal uniform unit binary large-mean mixed special)\n", optarg);
                return KG_EXIT_USAGE;
            }
            so.dist = d;
            break;
        }
        case O_TIMEOUT:
            so.timeout = strtod(optarg, &end);
            if (*end || !(so.timeout > 0)) {
                fprintf(stderr, "kgate: --timeout: expected a positive number of seconds\n");
                return KG_EXIT_USAGE;
            }
            break;
        case O_TOL:
            so.tol_k = strtod(optarg, &end);
            if (*end || !(so.tol_k >= 1)) {
                fprintf(stderr, "kgate: --tolerance: expected a number >= 1\n");
                return KG_EXIT_USAGE;
            }
            break;
        case O_VERBOSE: verbose = true; break;
        case O_EXHAUSTIVE: so.exhaustive = true; break;
        case O_COMPILE_ONLY: compile_only = true; break;
        case O_QUIET: quiet = true; break;
        case O_NO_COLOR: color = false; break;
        case O_HELP: usage(stdout); return KG_EXIT_OK;
        default: usage(stderr); return KG_EXIT_USAGE;
        }
    }
    char pathbuf[4096];
    const char *path;
    if (demo) {
        if (optind != argc) {
            fprintf(stderr, "kgate demo takes no file\n");
            return KG_EXIT_USAGE;
        }
        path = "builtin:softmax_rows";
    } else {
        if (optind + 1 != argc) {
            fprintf(stderr, "kgate check: expected exactly one FILE\n");
            usage(stderr);
            return KG_EXIT_USAGE;
        }
        path = argv[optind];
    }
    struct kg_err e;
    if (!strncmp(path, "builtin:", 8)) {
        if (kg_builtin_path(path + 8, demo, pathbuf, sizeof pathbuf, &e)) {
            fprintf(stderr, "kgate: %s\n", e.msg);
            return KG_EXIT_USAGE;
        }
        path = pathbuf;
    }
    if (shape && !ref && apply_shape(shape, &so, path)) return KG_EXIT_USAGE;
    /* which gates */
    const struct kg_gate *sel[32];
    int ns = 0;
    if (gates) {
        char *dup = strdup(gates), *save = NULL;
        for (char *it = strtok_r(dup, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
            if (!strcmp(it, "all")) {
                for (int i = 0; kg_gates[i]; i++) sel[ns++] = kg_gates[i];
                continue;
            }
            const struct kg_gate *g = kg_gate_find(it);
            if (!g) {
                fprintf(stderr, "kgate: --gates: no gate '%s' (kgate --list-gates)\n", it);
                free(dup);
                return KG_EXIT_USAGE;
            }
            if (ns < 32) sel[ns++] = g;
        }
        free(dup);
    } else {
        for (int i = 0; kg_gates[i]; i++) sel[ns++] = kg_gates[i];
    }
    if (isatty(2) && !quiet) {
        so.progress = progress;
    }
    struct kg_session *s;
    int rc = ref ? kg_session_open_pair(&s, ref, path, &so, &e) : kg_session_open(&s, path, &so, &e);
    if (rc != KG_EXIT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return rc;
    }
    if (compile_only) { /* the compile cache is warm now: that was the point */
        kg_session_close(s);
        return KG_EXIT_OK;
    }
    if (ref && shape) { /* a pair's symbols exist only once the problem is described */
        struct kg_err se;
        char *dup = strdup(shape), *save = NULL;
        for (char *it = strtok_r(dup, ", ", &save); it; it = strtok_r(NULL, ", ", &save)) {
            char *eq = strchr(it, '=');
            if (eq) *eq = 0;
            if (!eq || kg_inspect_set(s, it, atoll(eq + 1), &se)) {
                fprintf(stderr, "kgate: --shape: %s\n", eq ? se.msg : "expected SYM=VALUE");
                free(dup);
                kg_session_close(s);
                return KG_EXIT_USAGE;
            }
        }
        free(dup);
    }
    struct kg_verdict v[32];
    for (int i = 0; i < ns; i++) kg_session_run_gate(s, sel[i], &v[i]);
    if (so.progress) fprintf(stderr, "\r\033[K");
    if (base.asked) base.result = kg_session_baseline(s, base.tol, base.why, sizeof base.why);
    struct kg_decoy decoy = {0};
    char decoy_why[512] = "";
    if (ref) {
        struct kg_err de;
        if (kg_session_decoy(s, &decoy, &de)) snprintf(decoy_why, sizeof decoy_why, "%s", de.msg);
    }
    /* JSON on stdout: the text goes to stderr, so that stdout stays one JSON document */
    FILE *txt = json_out && !strcmp(json_out, "-") ? stderr : stdout;
    if (!quiet) kg_report_text(txt, s, v, ns, &base, color && txt == stdout, verbose);
    else
        fprintf(txt, "%s %s\n", kg_session_contract(s)->name, kg_status_name(kg_overall(v, ns)));
    if (ref && !quiet) {
        if (!decoy.valid)
            fprintf(txt, "decoy check: not available (%s)\n", decoy_why);
        else if (decoy.decoy)
            fprintf(txt, "decoy: YES: of the %d kernels the candidate launched, none is its own (all are the reference's too)\n",
                    decoy.launched);
        else
            fprintf(txt, "decoy: no: %d of its %d kernels are its own (%s%s)\n", decoy.own, decoy.launched,
                    decoy.own_names[0], decoy.own > 1 ? ", ..." : "");
    }

    if (json_out) {
        json_t *doc = kg_report_json(s, v, ns, &base);
        if (ref) {
            json_t *d = json_object();
            json_object_set_new(d, "checked", json_boolean(decoy.valid));
            if (decoy.valid) {
                json_object_set_new(d, "decoy", json_boolean(decoy.decoy));
                json_object_set_new(d, "kernels_launched", json_integer(decoy.launched));
                json_object_set_new(d, "own_kernels", json_integer(decoy.own));
            } else {
                json_object_set_new(d, "why", json_string(decoy_why));
            }
            json_object_set_new(doc, "decoy", d);
            json_object_set_new(doc, "problem", json_string(ref));
        }
        int bad = strcmp(json_out, "-") ? json_dump_file(doc, json_out, JSON_INDENT(2) | JSON_ENSURE_ASCII)
                                        : json_dumpf(doc, stdout, JSON_INDENT(2)) || fputc('\n', stdout) == EOF;
        json_decref(doc);
        if (bad) {
            fprintf(stderr, "kgate: cannot write %s\n", json_out);
            rc = KG_EXIT_INTERNAL;
        }
    }
    enum kg_status overall = kg_overall(v, ns);
    bool all_skipped = true;
    for (int i = 0; i < ns; i++) all_skipped &= v[i].status == KG_SKIP;
    if (rc == KG_EXIT_OK) rc = overall == KG_PASS ? (all_skipped && ns ? KG_EXIT_UNAVAILABLE : KG_EXIT_OK) : KG_EXIT_FAIL;
    for (int i = 0; i < ns; i++) kg_verdict_clear(&v[i]);
    kg_session_close(s);
    return rc;
}

static int cmd_audit(int argc, char **argv)
{
    /* The defaults are the configuration measured on the H200 (16 cores, 1 GPU): 6 checks and 10
     * builds at once, 1093 pairs/hour over the controls; an audit is CPU-bound, so both scale
     * with the cores (3/8 and 5/8 of them). A load_inline build runs its C++ and CUDA halves at
     * once. --jobs given: that many; --gpus N alone: at least one check per GPU. */
    long ncpu = kg_ncpu();
    struct audit_opts o = {.jobs = -1, .compile_jobs = ncpu > 3 ? (int)(ncpu * 5 / 8) : 1, .limit = 900,
                           .run_timeout = 60, .seed = 1};
    char *pairs[4096];
    static const struct opt aopts[] = {
        {"store", 1, 's', "OUT.jsonl", "the JSONL store results are appended to (required)"},
        {"jsonl", 1, 'j', "ROWS.jsonl", "rows {id, problem (path or source), candidate (path or source), label}"},
        {"dir", 1, 'd', "RUNS", "a KernelBench run directory (files named level_L..._problem_P...)"},
        {"problems", 1, 'p', "ROOT", "with --dir: the KernelBench root holding level1/, level2/, ..."},
        {"pair", 1, 'P', "PROB:CAND", "one pair (repeatable)"},
        {"resume", 0, 'r', NULL, "skip the pairs the store already holds"},
        {"shard", 1, 'S', "I/N", "only pairs I, I+N, I+2N, ... (sorted by id): split a corpus across machines"},
        {"jobs", 1, 'J', "N", "pairs checked at once (default: 3/8 of the cores, at least one per GPU)"},
        {"gpus", 1, 'G', "N", "GPUs to use: one check per GPU (CUDA_VISIBLE_DEVICES)"},
        {"compile-jobs", 1, 'C', "N", "candidates compiled ahead on the CPU cores (default: 5/8 of the cores)"},
        {"limit", 1, 'L', "SECONDS", "time limit of one pair (default 900)"},
        {"timeout", 1, 'T', "SECONDS", "time limit of one kernel run inside a check (default 60)"},
        {"tolerance", 1, 'k', "K", "calibration factor (default 2; the report sweeps k anyway)"},
        {"seed", 1, 'x', "N", "base seed (default 1)"},
        {"python", 1, 'y', "PATH", "the torch runner's interpreter"},
        {"help", 0, 'h', NULL, "this help"},
    };
    int n = (int)(sizeof aopts / sizeof *aopts);
    struct option lo[32];
    for (int i = 0; i < n; i++) lo[i] = (struct option){aopts[i].name, aopts[i].has_arg, NULL, aopts[i].val};
    memset(&lo[n], 0, sizeof lo[n]);
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 's': o.store = optarg; break;
        case 'j': o.jsonl = optarg; break;
        case 'd': o.dir = optarg; break;
        case 'p': o.problems = optarg; break;
        case 'P':
            if (o.npairs < 4096) pairs[o.npairs++] = optarg;
            break;
        case 'r': o.resume = true; break;
        case 'S':
            if (sscanf(optarg, "%d/%d", &o.shard_i, &o.shard_n) != 2 || o.shard_n < 1 || o.shard_i < 0 ||
                o.shard_i >= o.shard_n) {
                fprintf(stderr, "kgate audit: --shard: expected I/N with 0 <= I < N\n");
                return KG_EXIT_USAGE;
            }
            break;
        case 'J': o.jobs = atoi(optarg); break;
        case 'G': o.gpus = atoi(optarg); break;
        case 'C': o.compile_jobs = atoi(optarg); break;
        case 'L': o.limit = atof(optarg); break;
        case 'T': o.run_timeout = atof(optarg); break;
        case 'k': o.tol_k = atof(optarg); break;
        case 'x': o.seed = strtoull(optarg, NULL, 10); break;
        case 'y': o.python = optarg; break;
        case 'h':
        default:
            fprintf(ch == 'h' ? stdout : stderr, "usage: kgate audit --store OUT.jsonl [inputs] [options]\n");
            for (int i = 0; i < n; i++) {
                char left[48];
                snprintf(left, sizeof left, "--%s%s%s", aopts[i].name, aopts[i].arg ? " " : "", aopts[i].arg ? aopts[i].arg : "");
                fprintf(ch == 'h' ? stdout : stderr, "  %-26s %s\n", left, aopts[i].help);
            }
            return ch == 'h' ? KG_EXIT_OK : KG_EXIT_USAGE;
        }
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

static int cmd_report(int argc, char **argv)
{
    struct report_opts o = {.out_dir = NULL, .seed = 1, .sample = 5};
    static const struct option lo[] = {
        {"out", 1, NULL, 'o'}, {"gnuplot", 1, NULL, 'g'}, {"seed", 1, NULL, 's'}, {"sample", 1, NULL, 'n'}, {0, 0, 0, 0}};
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
            fprintf(stderr, "usage: kgate report STORE [--out DIR] [--seed N] [--sample N] [--gnuplot PATH]\n");
            return KG_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: kgate report STORE [--out DIR] [--seed N] [--sample N] [--gnuplot PATH]\n");
        return KG_EXIT_USAGE;
    }
    o.store = argv[optind];
    char dir[4096];
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

int main(int argc, char **argv)
{
    /* the judge (and every worker) closes its memory to other processes: a kernel must not
     * read expected outputs out of the judge or the oracle worker (see sandbox.h) */
    kg_sandbox_private();
    if (argc >= 3 && !strcmp(argv[1], "__worker")) return kg_worker_main(atoi(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "__layout")) return kg_proto_layout(stdout);
    /* the judge allocates and frees tensors of a few MB per run, hundreds of times a check: keep
     * them in the heap instead of fresh mmaps that fault in every page again each time */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if (argc < 2) {
#ifdef KG_HAVE_TUI
        if (isatty(0) && isatty(1)) return kg_tui_main(NULL, false);
#endif
        usage(stderr);
        return KG_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "check")) return cmd_check(argc - 1, argv + 1, false);
    if (!strcmp(cmd, "demo")) return cmd_check(argc - 1, argv + 1, true);
    if (!strcmp(cmd, "audit")) return cmd_audit(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "audit-merge")) {
        if (argc < 4) {
            fprintf(stderr, "usage: kgate audit-merge OUT.jsonl IN.jsonl...\n");
            return KG_EXIT_USAGE;
        }
        struct kg_err e;
        if (kg_audit_merge(argv[2], argv + 3, argc - 3, &e)) {
            fprintf(stderr, "kgate audit-merge: %s\n", e.msg);
            return KG_EXIT_USAGE;
        }
        return KG_EXIT_OK;
    }
    if (!strcmp(cmd, "explain")) {
        if (argc != 3) {
            fprintf(stderr, "usage: kgate explain GATE\n");
            return KG_EXIT_USAGE;
        }
        return explain(argv[2]);
    }
    if (!strcmp(cmd, "--list-gates") || !strcmp(cmd, "gates")) {
        list_gates();
        return KG_EXIT_OK;
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return KG_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("kgate %s\n", PACKAGE_VERSION);
        return KG_EXIT_OK;
    }
#ifdef KG_HAVE_TUI
    if (!strcmp(cmd, "--repl")) return kg_tui_main(argc > 2 ? argv[2] : NULL, true);
    if (cmd[0] != '-') return kg_tui_main(cmd, !(isatty(0) && isatty(1)));
#else
    if (!strcmp(cmd, "--repl") || cmd[0] != '-') {
        fprintf(stderr, "kgate: this build has no inspector (configured with --disable-tui); use kgate check FILE\n");
        return KG_EXIT_USAGE;
    }
#endif
    fprintf(stderr, "kgate: unknown command '%s'\n", cmd);
    usage(stderr);
    return KG_EXIT_USAGE;
}
