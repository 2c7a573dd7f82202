/* repl.c: the inspector's entry point and its line REPL. On a terminal the REPL reads with
 * readline (readline.c: history in ~/.kgate_history, tab completion); otherwise it reads plain
 * lines and prints plain text with no escape codes, so it can be scripted and tested. While a
 * command runs, Ctrl-C stops it (the session's runs check in->interrupted) instead of kgate;
 * at the prompt SIGINT does what it did before. */
#include <readline/readline.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/inspector.h"
#include "tui/tui.h"

/* The signal handler takes no user pointer: the one REPL's flag. */
static volatile sig_atomic_t stop_flag;

/* ---- Ctrl-C during a command ---------------------------------------------------------------- */

static void on_sigint(int sig)
{
    if (stop_flag) { /* a second Ctrl-C before the command stopped: leave, as at the prompt */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_flag = 1;
}

/* Catches SIGINT for one command (old keeps its disposition: readline's or the default at the
 * prompt); false when it stays as it was, as an ignored SIGINT does (a background job, nohup). */
static bool sigint_catch(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    stop_flag = 0;
    return sigaction(SIGINT, NULL, old) == 0 && old->sa_handler != SIG_IGN && sigaction(SIGINT, &sa, NULL) == 0;
}

static void sigint_release(bool caught, const struct sigaction *old)
{
    fflush(stdout);
    if (caught) sigaction(SIGINT, old, NULL);
    stop_flag = 0;
}

/* ---- the line REPL ------------------------------------------------------------------------- */

static char *read_line(bool tty)
{
    if (tty) return readline("kgate> ");
    size_t cap = 0;
    char *line = NULL;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    if (n && line[n - 1] == '\n') line[n - 1] = 0;
    return line;
}

/* Whether line is a `load` command. */
static bool is_load(const char *line)
{
    line += strspn(line, " \t");
    return !strncmp(line, "load", 4) && (!line[4] || line[4] == ' ' || line[4] == '\t');
}

/* The REPL's exit status: 0 when every command did its job, 2 when a load failed (the FILE
 * argument or a `load`: as kgate check says of a file it cannot load), else 1 when another
 * command failed (unknown, bad arguments, no kernel loaded, interrupted). A gate that fails is
 * a command that worked. */
static int repl(struct kg_insp *in, const char *path)
{
    bool tty = isatty(0) && isatty(1);
    bool failed = false, load_failed = false;
    in->interrupted = &stop_flag;
    if (tty) kg_insp_readline_init(in);
    struct sigaction old;
    bool caught;
    if (path) {
        caught = sigint_catch(&old);
        /* a lab lesson may start from a file with no contract yet (the student writes it): its
         * first load is the lab's, not a command of the student's */
        load_failed = kg_insp_load(in, path, stdout) != 0 && !in->lab_lesson;
        sigint_release(caught, &old);
    } else if (tty)
        printf("kgate inspector: load FILE to start (help lists the commands)\n");
    while (!in->quit) {
        char *line = read_line(tty);
        if (!line) break;
        if (tty) kg_insp_remember(line);
        caught = sigint_catch(&old);
        if (kg_insp_exec(in, line, stdout)) {
            failed = true;
            load_failed |= is_load(line);
        }
        sigint_release(caught, &old);
        free(line);
    }
    if (tty) kg_insp_history_save();
    return load_failed ? KG_EXIT_USAGE : failed ? KG_EXIT_FAIL : KG_EXIT_OK;
}

int kg_tui_main(const char *path, bool line_repl)
{
    return kg_tui_lab(path, line_repl, 0);
}

int kg_tui_lab(const char *path, bool line_repl, int lesson)
{
    struct kg_insp in;
    kg_insp_init(&in);
    in.lab_lesson = lesson;
    int rc = line_repl ? 0 : kg_tui_fullscreen(&in, path);
    if (!line_repl && rc < 0) {
        const char *term = getenv("TERM");
        fprintf(stderr, "kgate: cannot use the terminal '%s' full screen; here is the line REPL\n", term ? term : "");
    }
    if (line_repl || rc < 0) rc = repl(&in, path);
    kg_insp_free(&in);
    kg_insp_readline_free();
    return rc;
}
