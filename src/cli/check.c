/* check.c: `kgate check FILE` (and `kgate demo`) judges one kernel file, or one KernelBench
 * pair with --ref, with the selected gates and prints the report as text and/or JSON. It runs
 * in phases: options into a struct check_args, the file and gates resolved, the session opened,
 * gates + baseline + decoy run, the reports written, the exit status computed. The option table
 * here is also the main --help's. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

enum {
    O_GATES = 'g',
    O_SEED = 's',
    O_JSON = 'j',
    O_RUNNER = 'r',
    O_HELP = 'h',
    O_VERSION = 'V',
    O_VERBOSE = 'v',
    O_BASELINE = 1000,
    O_SHAPE,
    O_DTYPE,
    O_DIST,
    O_TIMEOUT,
    O_TOL,
    O_NO_COLOR,
    O_LIST_GATES,
    O_REPL,
    O_QUIET,
    O_REF,
    O_PYTHON,
    O_COMPILE_ONLY,
    O_EXHAUSTIVE,
    O_MEMORY,
    O_ALLOW,
    O_ESTIMATE,
};

static const struct kg_cli_opt opts[] = {
    {"gates", 1, O_GATES, "ID,ID", "run only these gates (default: all twelve, in order)"},
    {"seed", 1, O_SEED, "N", "base seed of every input (default 1)"},
    {"json", 1, O_JSON, "OUT", "also write the report as JSON to OUT (alone or '-': stdout; the text to stderr)"},
    {"runner", 1, O_RUNNER, "host|cuda", "runner (default: host for .c, cuda for .cu)"},
    {"baseline", 1, O_BASELINE, "kernelbench",
     "also run the field's standard test: kernelbench (atol=rtol=1e-2) or kernelbench-fp32 (1e-4)"},
    {"ref", 1, O_REF, "PROBLEM.py", "KernelBench format: FILE is a ModelNew candidate answering PROBLEM.py's Model"},
    {"python", 1, O_PYTHON, "PATH", "the interpreter of the torch runner (default: $KGATE_PYTHON, else python3)"},
    {"shape", 1, O_SHAPE, "SYM=V,..", "pin shape symbols (replays one case; the shapes gate runs only it)"},
    {"dtype", 1, O_DTYPE, "DTYPE", "pin the instance dtype of a `dtypes:` contract"},
    {"dist", 1, O_DIST, "NAME", "pin the input distribution: normal uniform unit binary large-mean mixed special"},
    {"timeout", 1, O_TIMEOUT, "SECONDS", "time limit of one kernel run (default 10)"},
    {"memory", 1, O_MEMORY, "SIZE", "host kernels: the worker's memory limit, e.g. 4G (default: half the RAM)"},
    {"tolerance", 1, O_TOL, "K", "calibration factor k of threshold = k x ref error + floor (default: contract's, 2)"},
    {"verbose", 0, O_VERBOSE, NULL, "print details and evidence of passing gates too"},
    {"quiet", 0, O_QUIET, NULL, "print only the verdict line"},
    {"no-color", 0, O_NO_COLOR, NULL, "no colours (also when NO_COLOR is set or stdout is not a terminal)"},
    {"allow", 1, O_ALLOW, "tf32",
     "accept on purpose: tf32 judges fp32 against TF32's precision (10-bit mantissa inputs)"},
    {"exhaustive", 0, O_EXHAUSTIVE, NULL, "calibrated gates measure every case, also after a failure (audits)"},
    {"compile-only", 0, O_COMPILE_ONLY, NULL, "load and compile the kernel into the cache, run nothing"},
    {"estimate", 0, O_ESTIMATE, NULL,
     "with --ref: print the problem's tensor bytes at its nominal size (PyTorch's meta device), run nothing"},
    {"list-gates", 0, O_LIST_GATES, NULL, "list the gates and exit"},
    {"repl", 0, O_REPL, NULL, "the inspector's command language as a plain line REPL"},
    {"help", 0, O_HELP, NULL, "this help"},
    {"version", 0, O_VERSION, NULL, "print the version"},
};
#define NOPTS (int)(sizeof opts / sizeof *opts)

/* A phase's answer when the command goes on; anything else is the exit status to return, passed
 * through as the library gave it (so GO_ON is outside what an exit status or an error can be). */
enum { GO_ON = 256 };

void kg_cli_usage(FILE *f)
{
    fprintf(f, "usage: kgate check FILE [options]     judge a kernel with the twelve gates\n"
               "       kgate check --ref PROBLEM.py CANDIDATE.py [options]  a KernelBench-format candidate\n"
               "       kgate audit --store OUT.jsonl (--jsonl ROWS | --dir RUNS --problems ROOT | --pair P:C...)\n"
               "       kgate audit-merge OUT.jsonl IN.jsonl...  |  kgate report STORE [--out DIR]\n"
               "       kgate FILE | kgate --repl [FILE] the interactive inspector\n"
               "       kgate demo                      check the built-in example (host runner without a GPU)\n"
               "       kgate lab [check] [N [DIR]]     the guided lab: list, start, autograde a lesson\n"
               "       kgate explain GATE|CAUSE        what a gate checks and why; what a cause is\n"
               "       kgate --list-gates | --list-builtins | --help | --version (and the runners here)\n"
               "FILE is a .c (host runner) or .cu (CUDA runner) file with a /*@kgate ... */ contract\n"
               "(kgate-contract(5)), or builtin:NAME (kgate --list-builtins lists them).\n\noptions:\n");
    for (int i = 0; i < NOPTS; i++) {
        char left[48];
        if (opts[i].val < 256 && opts[i].val > 0)
            snprintf(left, sizeof left, "-%c, --%s%s%s", opts[i].val, opts[i].name, opts[i].arg ? " " : "",
                     opts[i].arg ? opts[i].arg : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", opts[i].name, opts[i].arg ? " " : "",
                     opts[i].arg ? opts[i].arg : "");
        fprintf(f, "  %-28s %s\n", left, opts[i].help);
    }
    fprintf(f, "\nexit status: 0 every gate passed or skipped, 1 a gate failed or errored, 2 bad usage or a\n"
               "kernel file that cannot be loaded, 3 nothing was checked (the runner cannot run here),\n"
               "4 kgate itself failed.\n");
}

/* ---- options -------------------------------------------------------------------------------- */

struct check_args {
    struct kg_session_opts so;
    const char *gates, *json_out, *shape, *ref;
    bool verbose, quiet, color, compile_only, estimate;
    struct kg_baseline base;
    const char *path;          /* the kernel file (or the candidate, with ref) */
    char pathbuf[KG_PATH_MAX]; /* where a builtin:NAME was written */
};

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

static int opt_seed(struct check_args *a, const char *arg)
{
    char *end;
    errno = 0;
    a->so.seed = strtoull(arg, &end, 10);
    if (errno || *end || end == arg) {
        fprintf(stderr, "kgate: --seed: '%s' is not a non-negative integer\n", arg);
        return KG_EXIT_USAGE;
    }
    a->so.seed_given = true;
    return GO_ON;
}

static int opt_runner(struct check_args *a, const char *arg)
{
    if (!strcmp(arg, "host"))
        a->so.runner = KG_RUNNER_HOST;
    else if (!strcmp(arg, "cuda"))
        a->so.runner = KG_RUNNER_CUDA;
    else {
        fprintf(stderr, "kgate: --runner: expected host or cuda, got '%s'\n", arg);
        return KG_EXIT_USAGE;
    }
    return GO_ON;
}

static int opt_baseline(struct check_args *a, const char *arg)
{
    a->base.asked = true;
    if (!strcmp(arg, "kernelbench")) {
        a->base.name = "kernelbench";
        a->base.tol = 1e-2;
    } else if (!strcmp(arg, "kernelbench-fp32")) {
        a->base.name = "kernelbench-fp32";
        a->base.tol = 1e-4;
    } else {
        fprintf(stderr, "kgate: --baseline: expected kernelbench or kernelbench-fp32, got '%s'\n", arg);
        return KG_EXIT_USAGE;
    }
    return GO_ON;
}

static int opt_dtype(struct check_args *a, const char *arg)
{
    enum kg_dtype t;
    if (kg_dtype_parse(arg, strlen(arg), &t) || t == KG_DTYPE_T) {
        fprintf(stderr, "kgate: --dtype: unknown dtype '%s'\n", arg);
        return KG_EXIT_USAGE;
    }
    a->so.dtype = t;
    return GO_ON;
}

static int opt_dist(struct check_args *a, const char *arg)
{
    enum kg_dist d;
    if (kg_dist_parse(arg, &d)) {
        fprintf(stderr,
                "kgate: --dist: unknown distribution '%s' (normal uniform unit binary large-mean mixed special)\n",
                arg);
        return KG_EXIT_USAGE;
    }
    a->so.dist = d;
    return GO_ON;
}

static int opt_timeout(struct check_args *a, const char *arg)
{
    char *end;
    a->so.timeout = strtod(arg, &end);
    if (*end || !(a->so.timeout > 0)) {
        fprintf(stderr, "kgate: --timeout: expected a positive number of seconds\n");
        return KG_EXIT_USAGE;
    }
    return GO_ON;
}

static int opt_memory(struct check_args *a, const char *arg)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    double unit = 1;
    switch (*end) {
    case 'K':
    case 'k':
        unit = 1024.0;
        end++;
        break;
    case 'M':
    case 'm':
        unit = 1024.0 * 1024;
        end++;
        break;
    case 'G':
    case 'g':
        unit = 1024.0 * 1024 * 1024;
        end++;
        break;
    case 'T':
    case 't':
        unit = 1024.0 * 1024 * 1024 * 1024;
        end++;
        break;
    default: break;
    }
    if (errno || end == arg || *end || !(v * unit >= 16 << 20) || !(v * unit < 1e18)) {
        fprintf(stderr, "kgate: --memory: expected a size of at least 16M, like 512M or 4G, got '%s'\n", arg);
        return KG_EXIT_USAGE;
    }
    a->so.memory = (uint64_t)(v * unit);
    return GO_ON;
}

static int opt_tolerance(struct check_args *a, const char *arg)
{
    char *end;
    a->so.tol_k = strtod(arg, &end);
    if (end == arg || *end || !(a->so.tol_k >= 1 && a->so.tol_k <= KG_TOL_K_MAX)) {
        fprintf(stderr, "kgate: --tolerance: expected a number from 1 to 1e6 (the calibration factor k), got '%s'\n",
                arg);
        return KG_EXIT_USAGE;
    }
    return GO_ON;
}

/* One option of getopt_long into a; GO_ON, or the exit status (--help, a bad value). */
static int set_option(struct check_args *a, int ch, const char *arg)
{
    switch (ch) {
    case O_GATES: a->gates = arg; return GO_ON;
    case O_SEED: return opt_seed(a, arg);
    case O_JSON: a->json_out = arg; return GO_ON;
    case O_RUNNER: return opt_runner(a, arg);
    case O_BASELINE: return opt_baseline(a, arg);
    case O_REF: a->ref = arg; return GO_ON;
    case O_PYTHON: a->so.python = arg; return GO_ON;
    case O_SHAPE: a->shape = arg; return GO_ON; /* symbols are known once the file is loaded: see apply_shape */
    case O_DTYPE: return opt_dtype(a, arg);
    case O_DIST: return opt_dist(a, arg);
    case O_TIMEOUT: return opt_timeout(a, arg);
    case O_MEMORY: return opt_memory(a, arg);
    case O_TOL: return opt_tolerance(a, arg);
    case O_VERBOSE: a->verbose = true; return GO_ON;
    case O_EXHAUSTIVE: a->so.exhaustive = true; return GO_ON;
    case O_ALLOW:
        if (strcmp(arg, "tf32")) {
            fprintf(stderr, "kgate check: --allow: expected tf32, got '%s'\n", arg);
            return KG_EXIT_USAGE;
        }
        a->so.allow_tf32 = true;
        return GO_ON;
    case O_COMPILE_ONLY: a->compile_only = a->so.compile_only = true; return GO_ON;
    case O_ESTIMATE: a->estimate = true; return GO_ON;
    case O_QUIET: a->quiet = true; return GO_ON;
    case O_NO_COLOR: a->color = false; return GO_ON;
    case O_HELP: kg_cli_usage(stdout); return KG_EXIT_OK;
    case O_VERSION: return kg_cli_version();
    default: kg_cli_usage(stderr); return KG_EXIT_USAGE;
    }
}

static int parse_args(int argc, char **argv, struct check_args *a)
{
    memset(a, 0, sizeof *a);
    kg_session_opts_default(&a->so);
    a->color = isatty(1) && !getenv("NO_COLOR");
    struct option lo[NOPTS + 1];
    kg_cli_longopts(opts, NOPTS, lo);
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "g:s:j:r:hVv", lo, NULL)) != -1) {
        int rc = set_option(a, ch, optarg);
        if (rc != GO_ON) return rc;
    }
    return GO_ON;
}

/* ---- the file and the gates ----------------------------------------------------------------- */

/* The one FILE argument (the built-in example for demo); builtin:NAME is written to the cache. */
static int resolve_path(struct check_args *a, int argc, char **argv, bool demo)
{
    if (demo) {
        if (optind != argc) {
            fprintf(stderr, "kgate demo takes no file\n");
            return KG_EXIT_USAGE;
        }
        a->path = "builtin:softmax_rows";
    } else {
        if (optind + 1 != argc) {
            fprintf(stderr, "kgate check: expected exactly one FILE\n");
            kg_cli_usage(stderr);
            return KG_EXIT_USAGE;
        }
        a->path = argv[optind];
    }
    struct kg_err e;
    if (!strncmp(a->path, "builtin:", 8)) {
        enum kg_builtin_pick pick = a->so.runner == KG_RUNNER_CUDA   ? KG_BUILTIN_CUDA
                                    : a->so.runner == KG_RUNNER_HOST ? KG_BUILTIN_HOST
                                                                     : KG_BUILTIN_AUTO;
        if (kg_builtin_path(a->path + 8, pick, a->pathbuf, sizeof a->pathbuf, &e)) {
            fprintf(stderr, "kgate: %s\n", e.msg);
            return KG_EXIT_USAGE;
        }
        a->path = a->pathbuf;
    }
    return GO_ON;
}

/* --shape of a contract file: every symbol at its nominal value but those given. */
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

/* --gates ID,ID (`all` for every gate, in order) into sel; at most KG_MAX_GATES are kept. */
static int select_gates(const char *gates, const struct kg_gate **sel, int *ns)
{
    *ns = 0;
    if (!gates) {
        for (int i = 0; i < kg_ngates; i++) sel[(*ns)++] = kg_gates[i];
        return GO_ON;
    }
    char *dup = strdup(gates), *save = NULL;
    for (char *it = strtok_r(dup, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (!strcmp(it, "all")) {
            for (int i = 0; i < kg_ngates && *ns < KG_MAX_GATES; i++) sel[(*ns)++] = kg_gates[i];
            continue;
        }
        const struct kg_gate *g = kg_gate_find(it);
        if (!g) {
            fprintf(stderr, "kgate: --gates: no gate '%s' (kgate --list-gates)\n", it);
            free(dup);
            return KG_EXIT_USAGE;
        }
        if (*ns < KG_MAX_GATES) sel[(*ns)++] = g;
    }
    free(dup);
    return GO_ON;
}

/* ---- the session ---------------------------------------------------------------------------- */

static void progress(void *ud, const char *gate, const char *what)
{
    (void)ud;
    if (isatty(2)) fprintf(stderr, "\r\033[K  %s: %s", gate, what), fflush(stderr);
}

/* A pair's --shape: its symbols exist only once the problem is described. */
static int pin_pair_shape(struct kg_session *s, const char *shape)
{
    struct kg_err se;
    char *dup = strdup(shape), *save = NULL;
    for (char *it = strtok_r(dup, ", ", &save); it; it = strtok_r(NULL, ", ", &save)) {
        char *eq = strchr(it, '=');
        if (eq) *eq = 0;
        if (!eq || kg_inspect_set(s, it, atoll(eq + 1), &se)) {
            fprintf(stderr, "kgate: --shape: %s\n", eq ? se.msg : "expected SYM=VALUE");
            free(dup);
            return KG_EXIT_USAGE;
        }
    }
    free(dup);
    return GO_ON;
}

/* Opens the session, or the pair's with --ref; GO_ON with *s open, else the exit status with
 * nothing left open (--compile-only ends here too: the compile cache is warm now). */
static int open_session(const struct check_args *a, struct kg_session **s)
{
    struct kg_err e;
    int rc = a->ref ? kg_session_open_pair(s, a->ref, a->path, &a->so, &e) : kg_session_open(s, a->path, &a->so, &e);
    if (rc != KG_EXIT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return rc;
    }
    if (a->compile_only) {
        const char *why = kg_session_cannot_run(*s); /* compiled where it cannot run: say so */
        if (why)
            fprintf(stderr, "%s: compiled (%s), not loaded: %s\n", a->path, kg_session_last_load(*s)->compiler, why);
        rc = KG_EXIT_OK;
    } else if (a->ref && a->shape)
        rc = pin_pair_shape(*s, a->shape);
    else
        rc = GO_ON;
    if (rc != GO_ON) kg_session_close(*s);
    return rc;
}

/* ---- running and reporting ------------------------------------------------------------------ */

struct check_result {
    const struct kg_gate *sel[KG_MAX_GATES];
    struct kg_verdict v[KG_MAX_GATES];
    int ns;
    struct kg_decoy decoy; /* with --ref */
    char decoy_why[512];
};

/* The gates in order, then (for a pair) the decoy check and the standard test. */
static void run_check(struct kg_session *s, struct check_args *a, struct check_result *r)
{
    if (a->base.beside) kg_session_baseline_start(s, a->base.tol);
    for (int i = 0; i < r->ns; i++) kg_session_run_gate(s, r->sel[i], &r->v[i]);
    kg_session_host_done(s, kg_overall(r->v, r->ns) == KG_PASS);
    kg_group_causes(r->v, r->ns);
    if (a->so.progress) fprintf(stderr, "\r\033[K");
    /* the decoy check before the standard test's answer is taken: it overlaps the trials that run
     * beside the gates, and the judge's workers are then done (their memory back for the trials
     * that run after the gates, alone: on the H100, l1_99's 22 s with 25 GiB of idle workers) */
    memset(&r->decoy, 0, sizeof r->decoy);
    r->decoy_why[0] = 0;
    if (a->ref) {
        struct kg_err de;
        if (kg_session_decoy(s, &r->decoy, &de)) kg_strlcpy(r->decoy_why, de.msg, sizeof r->decoy_why);
    }
    if (a->base.asked) {
        kg_session_workers_done(s);
        a->base.result = kg_session_baseline(s, a->base.tol, a->base.why, sizeof a->base.why);
    }
}

static void write_text(FILE *txt, const struct kg_session *s, const struct check_args *a, const struct check_result *r)
{
    if (!a->quiet)
        kg_report_text(txt, s, r->v, r->ns, &a->base, a->color && txt == stdout, a->verbose);
    else
        fprintf(txt, "%s %s\n", kg_session_contract(s)->name, kg_overall_name(kg_overall(r->v, r->ns)));
    if (!a->ref || a->quiet) return;
    const struct kg_decoy *d = &r->decoy;
    if (!d->valid)
        fprintf(txt, "decoy check: not available (%s)\n", r->decoy_why);
    else if (d->decoy)
        fprintf(txt,
                "decoy: YES: of the %d kernels the candidate launched, none is its own (all are the reference's too)\n"
                "                   cause: decoy: %s\n",
                d->launched, kg_cause_def(KG_CAUSE_DECOY)->title);
    else
        fprintf(txt, "decoy: no: %d of its %d kernels are its own (%s%s)\n", d->own, d->launched, d->own_names[0],
                d->own > 1 ? ", ..." : "");
}

static json_t *decoy_json(const struct check_result *r)
{
    json_t *d = json_object();
    json_object_set_new(d, "checked", json_boolean(r->decoy.valid));
    if (r->decoy.valid) {
        json_object_set_new(d, "decoy", json_boolean(r->decoy.decoy));
        json_object_set_new(d, "kernels_launched", json_integer(r->decoy.launched));
        json_object_set_new(d, "own_kernels", json_integer(r->decoy.own));
        /* the evidence: which kernels were its own (the first four) */
        json_t *names = json_array();
        const int nn = (int)(sizeof r->decoy.own_names / sizeof *r->decoy.own_names);
        for (int i = 0; i < r->decoy.own && i < nn; i++)
            json_array_append_new(names, json_string(r->decoy.own_names[i]));
        json_object_set_new(d, "own_names", names);
    } else {
        json_object_set_new(d, "why", json_string(r->decoy_why));
    }
    return d;
}

/* The JSON report to the --json file or stdout ('-'); KG_EXIT_INTERNAL when it cannot be written. */
static int write_json(const struct kg_session *s, const struct check_args *a, const struct check_result *r)
{
    json_t *doc = kg_report_json(s, r->v, r->ns, &a->base);
    if (a->ref) {
        json_object_set_new(doc, "decoy", decoy_json(r));
        if (r->decoy.valid && r->decoy.decoy) /* a cause of its own, after the gates' */
            json_array_append_new(json_object_get(doc, "causes"),
                                  json_pack("{s:s,s:s,s:s}", "id", kg_cause_def(KG_CAUSE_DECOY)->id, "gate", "decoy",
                                            "text", "none of the kernels the candidate launched is its own"));
        json_object_set_new(doc, "problem", json_string(a->ref));
    }
    const char *out = a->json_out;
    int bad;
    struct stat st;
    if (!strcmp(out, "-")) {
        bad = json_dumpf(doc, stdout, JSON_INDENT(2)) || fputc('\n', stdout) == EOF;
    } else if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) { /* a device or a pipe: as it is */
        bad = json_dump_file(doc, out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    } else { /* through a temporary and a rename: a judge killed meanwhile leaves no half report */
        char *text = json_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII);
        struct kg_err e;
        bad = !text || kg_write_file(out, text, &e);
        free(text);
    }
    json_decref(doc);
    if (!bad) return KG_EXIT_OK;
    fprintf(stderr, "kgate: cannot write %s\n", out);
    return KG_EXIT_INTERNAL;
}

/* 0 when every gate passed, skipped or was refused, but 3 when none decided anything: the
 * verdict is not-checked. */
static int verdict_status(const struct check_result *r)
{
    enum kg_status o = kg_overall(r->v, r->ns);
    if (o == KG_SKIP) return KG_EXIT_UNAVAILABLE;
    return o == KG_PASS ? KG_EXIT_OK : KG_EXIT_FAIL;
}

/* --estimate: one JSON line on stdout, {"in_bytes": N, "out_bytes": M}, kgate audit's cost of
 * the pair (it starts the largest first); exit 3 where the meta device cannot tell. */
static int estimate(const struct check_args *a)
{
    if (!a->ref) {
        fprintf(stderr, "kgate check: --estimate needs --ref PROBLEM.py\n");
        return KG_EXIT_USAGE;
    }
    struct kg_err e;
    double in = 0, out = 0;
    int rc = kg_session_estimate_pair(a->ref, a->path, &a->so, &in, &out, &e);
    if (rc) {
        fprintf(stderr, "%s\n", e.msg);
        return rc;
    }
    printf("{\"in_bytes\": %.0f, \"out_bytes\": %.0f}\n", in, out);
    return KG_EXIT_OK;
}

static int check(struct check_args *a, struct check_result *r)
{
    if (a->estimate) return estimate(a);
    if (a->shape && !a->ref && apply_shape(a->shape, &a->so, a->path)) return KG_EXIT_USAGE;
    int rc = select_gates(a->gates, r->sel, &r->ns);
    if (rc != GO_ON) return rc;
    if (isatty(2) && !a->quiet) a->so.progress = progress;
    /* KGATE_STANDARD_BESIDE=0: the standard test after the gates, alone (for comparing); beside
     * them, its worker loads as the session opens */
    const char *beside = getenv("KGATE_STANDARD_BESIDE");
    a->base.beside = a->base.asked && !(beside && !strcmp(beside, "0"));
    a->so.baseline_ahead = a->base.beside && a->ref;
    struct kg_session *s;
    if ((rc = open_session(a, &s)) != GO_ON) return rc;
    run_check(s, a, r);
    /* JSON on stdout: the text goes to stderr, so that stdout stays one JSON document */
    FILE *txt = a->json_out && !strcmp(a->json_out, "-") ? stderr : stdout;
    write_text(txt, s, a, r);
    rc = a->json_out ? write_json(s, a, r) : KG_EXIT_OK;
    if (rc == KG_EXIT_OK) rc = verdict_status(r);
    for (int i = 0; i < r->ns; i++) kg_verdict_clear(&r->v[i]);
    kg_session_close(s);
    return rc;
}

/* The test hook of the host's out-of-memory killer (tests/audit_oom.sh): with
 * KGATE_TEST_KILL_ONCE=FILE, the first check to create FILE dies of SIGKILL. */
static void test_kill_once(void)
{
    const char *f = getenv("KGATE_TEST_KILL_ONCE");
    if (!f || !*f) return;
    int fd = open(f, O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd < 0) return;
    close(fd);
    raise(SIGKILL);
}

int kg_cli_check(int argc, char **argv, bool demo)
{
    test_kill_once();
    char *args[256];
    if (argc >= (int)(sizeof args / sizeof *args)) {
        fprintf(stderr, "kgate: too many arguments\n");
        return KG_EXIT_USAGE;
    }
    for (int i = 0; i < argc; i++) args[i] = bare_json(i, argc, argv) ? "--json=-" : argv[i];
    args[argc] = NULL;
    struct check_args a;
    struct check_result r;
    int rc = parse_args(argc, args, &a);
    if (rc == GO_ON) rc = resolve_path(&a, argc, args, demo);
    if (rc == GO_ON) rc = check(&a, &r);
    return rc;
}
