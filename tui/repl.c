/* repl.c: the inspector's entry point and its line REPL. On a terminal the REPL reads with
 * readline (readline.c: history in ~/.kgate_history, tab completion); otherwise it reads plain
 * lines and prints plain text with no escape codes, so it can be scripted and tested. */
#include <readline/readline.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/inspector.h"
#include "tui/tui.h"

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

static int repl(struct kg_insp *in, const char *path)
{
    bool tty = isatty(0) && isatty(1);
    if (tty) kg_insp_readline_init(in);
    if (path)
        kg_insp_load(in, path, stdout);
    else if (tty)
        printf("kgate inspector: load FILE to start (help lists the commands)\n");
    while (!in->quit) {
        char *line = read_line(tty);
        if (!line) break;
        if (tty) kg_insp_remember(line);
        kg_insp_exec(in, line, stdout);
        fflush(stdout);
        free(line);
    }
    if (tty) kg_insp_history_save();
    return 0;
}

int kg_tui_main(const char *path, bool line_repl)
{
    struct kg_insp in;
    kg_insp_init(&in);
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
