/* main.c: the kgate command line's dispatcher. `kgate check` and `kgate demo` are in check.c
 * (which also holds the option table --help is generated from), `kgate audit`, `audit-merge`
 * and `report` in audit.c; `kgate FILE` opens the inspector; `kgate __worker FD` is the worker
 * process the judge starts (never typed by hand); `--version` is version.c. Only this file exits. */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#ifdef KG_HAVE_TUI
#include "tui/tui.h"
#endif

static void list_gates(void)
{
    for (int i = 0; i < kg_ngates; i++)
        printf("%-16s %-4s %s%s\n", kg_gates[i]->id, kg_gates[i]->tolerance_free ? "tf" : "cal", kg_gates[i]->title,
               kg_gates[i]->needs_gpu ? " (GPU only)" : "");
    printf("\ntf: tolerance-free; cal: calibrated threshold = k x ref error + floor\n");
}

static int explain(const char *id)
{
    const struct kg_gate *g = kg_gate_find(id);
    enum kg_cause c = g ? KG_CAUSE_NONE : kg_cause_find(id);
    if (c != KG_CAUSE_NONE && c != KG_CAUSE_GATE) {
        const struct kg_cause_def *d = kg_cause_def(c);
        printf("%s (cause): %s\n\n%s\n", d->id, d->title, d->explain);
        return KG_EXIT_OK;
    }
    if (!g) {
        fprintf(stderr, "kgate: no gate or cause '%s' (kgate --list-gates; a report's cause: lines name causes)\n", id);
        return KG_EXIT_USAGE;
    }
    printf("%s: %s (%s)\n\n%s\n", g->id, g->title, g->tolerance_free ? "tolerance-free" : "calibrated", g->explain);
    if (g->explain_python) printf("\n%s\n", g->explain_python);
    return KG_EXIT_OK;
}

static int list_builtins(void)
{
    static char out[16384];
    kg_builtin_list(out, sizeof out);
    fputs(out, stdout);
    printf("\nkgate check builtin:NAME, or kgate builtin:NAME for the inspector\n");
    return KG_EXIT_OK;
}

/* `kgate FILE` with a FILE that is not there (a mistyped command, too): said here, exit 2,
 * rather than an inspector with nothing loaded. */
static bool no_such_file(const char *path)
{
    if (!strncmp(path, "builtin:", 8) || access(path, F_OK) == 0) return false;
    fprintf(stderr, "kgate: %s: no such file (and no such command; kgate --help)\n", path);
    return true;
}

int main(int argc, char **argv)
{
    /* the judge (and every worker) closes its memory to other processes: a kernel must not
     * read expected outputs out of the judge or the oracle worker (see sandbox.h) */
    kg_sandbox_private();
    if (argc >= 3 && !strcmp(argv[1], "__worker")) return kg_worker_main(atoi(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "__layout")) return kg_proto_layout(stdout);
    if (argc == 2 && !strcmp(argv[1], "__probe")) return kg_cli_probe_here();
    /* the judge allocates and frees tensors of up to GBs per run, hundreds of times a check: keep
     * them all in the heap, never returned, instead of fresh mmaps that fault in (and the kernel
     * zeroes) every page again each time. glibc caps the mmap threshold at 32 MB, so mmap goes
     * altogether (a 3.4e7-element KernelBench pair on the CPU: 5% less wall time) */
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, -1);
    if (argc < 2) {
#ifdef KG_HAVE_TUI
        if (isatty(0) && isatty(1)) return kg_tui_main(NULL, false);
#endif
        kg_cli_usage(stderr);
        return KG_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "check")) return kg_cli_check(argc - 1, argv + 1, false);
    if (!strcmp(cmd, "demo")) return kg_cli_check(argc - 1, argv + 1, true);
    if (!strcmp(cmd, "audit")) return kg_cli_audit(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return kg_cli_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "audit-merge")) return kg_cli_audit_merge(argc - 1, argv + 1);
    if (!strcmp(cmd, "lab")) return kg_cli_lab(argc - 1, argv + 1);
    if (!strcmp(cmd, "explain")) {
        if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
            printf("usage: kgate explain GATE\nwhat a gate checks and why; the gates: kgate --list-gates\n");
            return KG_EXIT_OK;
        }
        if (argc != 3) {
            fprintf(stderr, "usage: kgate explain GATE|CAUSE\n");
            return KG_EXIT_USAGE;
        }
        return explain(argv[2]);
    }
    if (!strcmp(cmd, "--list-builtins") || !strcmp(cmd, "list-builtins") || !strcmp(cmd, "builtins"))
        return list_builtins();
    if (!strcmp(cmd, "--list-gates") || !strcmp(cmd, "gates")) {
        list_gates();
        return KG_EXIT_OK;
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        kg_cli_usage(stdout);
        return KG_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) return kg_cli_version();
    if (cmd[0] != '-' && no_such_file(cmd)) return KG_EXIT_USAGE;
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
    kg_cli_usage(stderr);
    return KG_EXIT_USAGE;
}
