/* lab.c: `kgate lab` (the lessons), `kgate lab N [DIR]` (copy lesson N into DIR without its
 * answers and open the inspector on it, with its brief and `hint`), `kgate lab check N [DIR]`
 * (exit 0 once every gate passes: for autograding). The lessons themselves are tui/lab.c's. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "tui/lab.h"
#ifdef KG_HAVE_TUI
#include "tui/tui.h"
#endif

static const struct kg_cli_opt lab_opts[] = {
    {"force", no_argument, 'f', NULL, "kgate lab N: overwrite the files of an earlier start (your edits too)"},
    {"repl", no_argument, 'r', NULL, "kgate lab N: the line REPL instead of the full screen"},
    {"help", no_argument, 'h', NULL, "this help"},
};
#define NLAB_OPTS (int)(sizeof lab_opts / sizeof lab_opts[0])

static void lab_usage(FILE *f)
{
    fprintf(f, "usage: kgate lab                 list the lessons\n"
               "       kgate lab N [DIR]         start lesson N in DIR (default ./kgate-lab-N)\n"
               "       kgate lab check N [DIR]   exit 0 when the fix passes every gate, 1 while not\n");
    for (int i = 0; i < NLAB_OPTS; i++) fprintf(f, "  --%-10s %s\n", lab_opts[i].name, lab_opts[i].help);
}

/* N as a lesson number into l; on failure a message and KG_EXIT_USAGE. */
static int lesson_arg(const char *arg, struct kg_lesson *l)
{
    char *end;
    long n = strtol(arg, &end, 10);
    struct kg_err e;
    if (*end || end == arg || n < 1 || n > kg_lab_count()) {
        fprintf(stderr, "kgate lab: no lesson '%s' (1 to %d; kgate lab lists them)\n", arg, kg_lab_count());
        return KG_EXIT_USAGE;
    }
    if (kg_lab_lesson((int)n, l, &e)) {
        fprintf(stderr, "kgate lab: %s\n", e.msg);
        return KG_EXIT_INTERNAL;
    }
    return KG_EXIT_OK;
}

int kg_cli_lab(int argc, char **argv)
{
    struct option lo[NLAB_OPTS + 1];
    kg_cli_longopts(lab_opts, NLAB_OPTS, lo);
    bool force = false, repl = !(isatty(0) && isatty(1));
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (c == 'f')
            force = true;
        else if (c == 'r')
            repl = true;
        else if (c == 'h') {
            lab_usage(stdout);
            return KG_EXIT_OK;
        } else {
            lab_usage(stderr);
            return KG_EXIT_USAGE;
        }
    }
    int na = argc - optind;
    char **a = argv + optind;
    if (na == 0) return kg_lab_list(stdout) ? KG_EXIT_INTERNAL : KG_EXIT_OK;
    bool check = !strcmp(a[0], "check");
    if (check) a++, na--;
    if (na < 1 || na > 2) {
        lab_usage(stderr);
        return KG_EXIT_USAGE;
    }
    struct kg_lesson l;
    int rc = lesson_arg(a[0], &l);
    if (rc) return rc;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", na == 2 ? a[1] : "");
    if (!dir[0]) snprintf(dir, sizeof dir, "kgate-lab-%d", l.number);
    if (check) return kg_lab_check(&l, dir, stdout);
    struct kg_err e;
    if (kg_lab_copy(&l, dir, force, stdout, &e)) {
        fprintf(stderr, "kgate lab: %s\n", e.msg);
        return KG_EXIT_INTERNAL;
    }
    char path[4200], why[128];
    snprintf(path, sizeof path, "%s/%s", dir, l.kernel);
    kg_lab_brief(&l, path, stdout);
    if (!kg_lab_can_run(&l, why, sizeof why))
        printf("note: this lesson %s; read the kernel here, run it on a machine with one\n", why);
    fflush(stdout);
#ifdef KG_HAVE_TUI
    return kg_tui_lab(path, repl, l.number);
#else
    (void)repl;
    printf("this build has no inspector (configured with --disable-tui): kgate check %s\n", path);
    return KG_EXIT_OK;
#endif
}
