/* readline.c: what the line REPL and the full-screen inspector share of readline: tab
 * completion of commands, gate ids, symbols and file names (the words come from commands.c),
 * and the history in ~/.kgate_history. */
#include <readline/history.h>
#include <readline/readline.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/inspector.h"

#define HISTORY_FILE ".kgate_history"
#define HISTORY_MAX  1000
#define MAX_MATCHES  256

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
    char p[KG_PATH_MAX];
    if (history_path(p, sizeof p)) read_history(p);
}

void kg_insp_history_save(void)
{
    char p[KG_PATH_MAX];
    if (history_path(p, sizeof p)) write_history(p);
}

void kg_insp_remember(const char *line)
{
    HIST_ENTRY *last = history_length ? history_get(history_base + history_length - 1) : NULL;
    if (line[0] && (!last || strcmp(last->line, line))) add_history(line);
}

void kg_insp_readline_free(void)
{
    for (int i = 0; i < match_list.n; i++) free(match_list.w[i]);
    match_list.n = 0;
}
