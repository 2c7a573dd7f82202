/* repl.c: the inspector's entry point and its line REPL. On a terminal the REPL reads with
 * readline (history in ~/.kgate_history, tab completion); otherwise it reads plain lines and
 * prints plain text with no escape codes, so it can be scripted and tested. The completion
 * and history set up here serve the full-screen inspector too. */
#include <stdio.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/inspector.h"
#include "tui/tui.h"

int kg_tui_fullscreen(struct kg_insp *in, const char *path); /* tui.c */

#define HISTORY_FILE ".kgate_history"
#define HISTORY_MAX 1000
#define MAX_MATCHES 256

static struct kg_insp *complete_in; /* the inspector readline completes for */

/* ---- completion ---------------------------------------------------------------------------- */

struct matches {
    const char *text;
    size_t len;
    int n;
    char *w[MAX_MATCHES];
};

static void add_match(void *ud, const char *w)
{
    struct matches *m = ud;
    if (m->n < MAX_MATCHES && !strncmp(w, m->text, m->len)) m->w[m->n++] = strdup(w);
}

static int match_index;
static struct matches match_list;

static char *next_match(const char *text, int state)
{
    (void)text;
    if (!state) match_index = 0;
    return match_index < match_list.n ? match_list.w[match_index++] : NULL;
}

/* The command word and how many words precede the one being completed (at start). */
static int words_before(int start, char *cmd, size_t n)
{
    char buf[1024];
    size_t len = (size_t)start < sizeof buf - 1 ? (size_t)start : sizeof buf - 1;
    memcpy(buf, rl_line_buffer, len);
    buf[len] = 0;
    int argi = 0;
    char *save = NULL;
    cmd[0] = 0;
    for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
        if (argi++ == 0) kg_strlcpy(cmd, t, n);
    return argi;
}

static char **complete(const char *text, int start, int end)
{
    (void)end;
    char cmd[64];
    int argi = start == 0 ? 0 : words_before(start, cmd, sizeof cmd);
    for (int i = 0; i < match_list.n; i++) free(match_list.w[i]);
    match_list = (struct matches){.text = text, .len = strlen(text)};
    rl_attempted_completion_over = 1;
    if (!kg_insp_complete(complete_in, cmd, argi, text, add_match, &match_list)) {
        rl_attempted_completion_over = 0; /* file names */
        return NULL;
    }
    if (argi == 1 && !strcmp(cmd, "set")) rl_completion_append_character = '\0';
    char **r = rl_completion_matches(text, next_match);
    match_list.n = 0; /* readline owns the strings it returned; free the rest */
    return r;
}

static char *history_path(char *buf, size_t n)
{
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    snprintf(buf, n, "%s/%s", home, HISTORY_FILE);
    return buf;
}

void kg_insp_readline_init(struct kg_insp *in)
{
    complete_in = in;
    rl_readline_name = "kgate";
    rl_attempted_completion_function = complete;
    rl_completer_word_break_characters = " \t";
    using_history();
    stifle_history(HISTORY_MAX);
    char p[4096];
    if (history_path(p, sizeof p)) read_history(p);
}

void kg_insp_history_save(void)
{
    char p[4096];
    if (history_path(p, sizeof p)) write_history(p);
}

/* Adds a line to the history unless it repeats the last one. */
static void remember(const char *line)
{
    HIST_ENTRY *last = history_length ? history_get(history_base + history_length - 1) : NULL;
    if (line[0] && (!last || strcmp(last->line, line))) add_history(line);
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

static int repl(struct kg_insp *in, const char *path)
{
    bool tty = isatty(0) && isatty(1);
    if (tty) kg_insp_readline_init(in);
    if (path) kg_insp_load(in, path, stdout);
    else if (tty) printf("kgate inspector: load FILE to start (help lists the commands)\n");
    while (!in->quit) {
        char *line = read_line(tty);
        if (!line) break;
        if (tty) remember(line);
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
    for (int i = 0; i < match_list.n; i++) free(match_list.w[i]);
    return rc;
}
