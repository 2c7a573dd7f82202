/* tui.c: the full-screen inspector: panes for the gate list, the detail of a verdict or of
 * the last command, the heatmap (or replay map, or sweep plot) and a readline command line,
 * driven through readline's callback interface so history and completion work inside
 * ncurses. Only keys, signals and the main loop live here; panes.c draws, commands.c does
 * the work, heatmap.c bins. */
#include <curses.h>
#include <locale.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "tui/screen.h"

/* Readline's callbacks and the signal handler take no user pointer: the one screen. */
static struct kg_screen *scr;
static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t stop_requested; /* the running command should stop (in->interrupted) */
static volatile sig_atomic_t busy;           /* a command is running */

/* ---- readline in a curses window ------------------------------------------------------------ */

static int rl_getc_hook(FILE *f)
{
    (void)f;
    scr->ch_avail = false;
    return scr->ch;
}

static int rl_avail_hook(void)
{
    return scr->ch_avail;
}

static void rl_redisplay_hook(void)
{
    if (scr) kg_tui_draw(scr);
}

static void rl_line_hook(char *line)
{
    if (!line) {
        scr->eof = true;
        return;
    }
    /* into the history now: readline starts the next line (and its history position) as
     * soon as this returns */
    HIST_ENTRY *last = history_length ? history_get(history_base + history_length - 1) : NULL;
    if (line[0] && (!last || strcmp(last->line, line))) add_history(line);
    free(scr->pending);
    scr->pending = line;
}

static void rl_matches_hook(char **matches, int n, int max)
{
    (void)max;
    size_t len = 0;
    scr->hint[0] = 0;
    for (int i = 1; i <= n; i++) kg_appendf(scr->hint, sizeof scr->hint, &len, "%s ", matches[i]);
    scr->hint_error = false;
    scr->hint_matches = scr->hint_fresh = true;
}

static void feed(struct kg_screen *sc, int c)
{
    sc->ch = c;
    sc->ch_avail = true;
    rl_callback_read_char();
}

static void readline_setup(struct kg_screen *sc)
{
    kg_insp_readline_init(sc->in);
    sc->rl_null = fopen("/dev/null", "w");
    rl_outstream = sc->rl_null;
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
    rl_change_environment = 0;
    rl_prep_term_function = NULL;
    rl_deprep_term_function = NULL;
    rl_getc_function = rl_getc_hook;
    rl_input_available_hook = rl_avail_hook;
    rl_redisplay_function = rl_redisplay_hook;
    rl_completion_display_matches_hook = rl_matches_hook;
    rl_variable_bind("bell-style", "none");
    rl_callback_handler_install(KG_TUI_PROMPT, rl_line_hook);
}

/* ---- running a command -------------------------------------------------------------------- */

static void progress_hook(struct kg_insp *in, const char *gate, const char *what)
{
    struct kg_screen *sc = in->ui;
    snprintf(sc->hint, sizeof sc->hint, "%s: %s ...   (Ctrl-C stops it)", gate, what);
    sc->hint_error = sc->hint_matches = false;
    kg_tui_draw(sc);
}

static void first_line(const char *text, char *buf, size_t n)
{
    const char *nl = strchr(text, '\n');
    size_t len = nl ? (size_t)(nl - text) : strlen(text);
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), text);
}

static void execute(struct kg_screen *sc, const char *line)
{
    struct kg_insp *in = sc->in;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    enum kg_detail_mode prev = in->detail;
    char prev_title[128];
    memcpy(prev_title, in->detail_title, sizeof prev_title);
    in->detail = KG_DETAIL_TEXT;
    snprintf(sc->hint, sizeof sc->hint, "running: %s   (Ctrl-C stops it)", line);
    sc->hint_matches = false;
    kg_tui_draw(sc);
    stop_requested = 0;
    busy = 1;
    int rc = kg_insp_exec(in, line, f);
    busy = 0;
    if (!got_signal) stop_requested = 0;
    fclose(f);
    sc->hint[0] = 0;
    sc->hint_error = false;
    bool one_line = !strchr(buf, '\n') || !strchr(buf, '\n')[1];
    if (rc != 0 && one_line && strncmp(line, "load", 4)) {
        /* a short error goes to the message line; the detail pane keeps what it showed */
        in->detail = prev;
        memcpy(in->detail_title, prev_title, sizeof prev_title);
        first_line(buf, sc->hint, sizeof sc->hint);
        sc->hint_error = true;
        free(buf);
        return;
    }
    if (!buf[0] && rc == 0) {
        in->detail = prev;
        memcpy(in->detail_title, prev_title, sizeof prev_title);
        free(buf);
        return;
    }
    free(sc->text);
    sc->text = buf;
    sc->scroll = 0;
}

/* ---- keys ---------------------------------------------------------------------------------- */

/* A page is the pane less one line: the last line shown stays in view, so none is skipped. */
static void scroll_detail(struct kg_screen *sc, int dir)
{
    int page = sc->detail_rows - 1 > 1 ? sc->detail_rows - 1 : 1;
    int last = sc->detail_lines - sc->detail_rows;
    sc->scroll += dir * page;
    if (sc->scroll > last) sc->scroll = last;
    if (sc->scroll < 0) sc->scroll = 0;
}

/* Up/Down (j/k) on an empty command line: the gate above or below the selected one. */
static void select_key(struct kg_screen *sc, int dir)
{
    struct kg_insp *in = sc->in;
    int i = in->selected < 0 ? 0 : in->selected + dir;
    if (i < 0) i = 0;
    if (i >= in->ngates) i = in->ngates - 1;
    if (i != in->selected || in->detail != KG_DETAIL_GATE) sc->scroll = 0;
    kg_insp_select(in, i);
}

static void cmd_key(struct kg_screen *sc, int c)
{
    struct kg_hm_view *v;
    if (rl_end == 0 && (c == KEY_UP || c == KEY_DOWN || c == 'k' || c == 'j')) {
        select_key(sc, c == KEY_UP || c == 'k' ? -1 : 1);
        return;
    }
    switch (c) {
    case KEY_UP: rl_get_previous_history(1, 0); break;
    case KEY_DOWN: rl_get_next_history(1, 0); break;
    case KEY_LEFT: rl_backward_char(1, 0); break;
    case KEY_RIGHT: rl_forward_char(1, 0); break;
    case KEY_HOME: rl_beg_of_line(1, 0); break;
    case KEY_END: rl_end_of_line(1, 0); break;
    case KEY_DC: rl_delete(1, 0); break;
    case KEY_BACKSPACE: feed(sc, 127); break;
    case KEY_ENTER: feed(sc, '\r'); break;
    case '\t':
        if (rl_end == 0 && kg_insp_map_src(sc->in, &v)) {
            sc->focus = KG_FOCUS_MAP;
            sc->hint[0] = 0;
            break;
        }
        feed(sc, c);
        break;
    default:
        if (c >= 0 && c < 256) feed(sc, c);
    }
}

static void map_key(struct kg_screen *sc, int c)
{
    struct kg_hm_view *v;
    const struct kg_hm_src *src = kg_insp_map_src(sc->in, &v);
    if (!src || !sc->grid_valid) {
        sc->focus = KG_FOCUS_CMD;
        return;
    }
    switch (c) {
    case KEY_UP: kg_hm_move(src, v, &sc->grid, -1, 0); break;
    case KEY_DOWN: kg_hm_move(src, v, &sc->grid, 1, 0); break;
    case KEY_LEFT: kg_hm_move(src, v, &sc->grid, 0, -1); break;
    case KEY_RIGHT: kg_hm_move(src, v, &sc->grid, 0, 1); break;
    case '+':
    case '=': kg_hm_zoom(v, &sc->grid, 1); break;
    case '-':
    case '_': kg_hm_zoom(v, &sc->grid, -1); break;
    case 'w': kg_hm_goto_worst(src, v, false); break;
    case '\t':
    case 27:
    case '\r':
    case '\n':
    case KEY_ENTER: sc->focus = KG_FOCUS_CMD; break;
    default:
        if (c >= ' ' && c < 127) {
            sc->focus = KG_FOCUS_CMD;
            cmd_key(sc, c);
        }
    }
}

static void handle_key(struct kg_screen *sc, int c)
{
    if (c == KEY_RESIZE) return; /* the redraw that follows uses the new LINES and COLS */
    if (c == 12) {
        clearok(curscr, TRUE);
        return;
    }
    if (c == KEY_PPAGE || c == KEY_NPAGE) {
        scroll_detail(sc, c == KEY_PPAGE ? -1 : 1);
        return;
    }
    if (sc->focus == KG_FOCUS_MAP)
        map_key(sc, c);
    else
        cmd_key(sc, c);
}

/* A key, and then a list of completions goes once the line it was for has changed. */
static void key(struct kg_screen *sc, int c)
{
    char *before = rl_line_buffer ? strdup(rl_line_buffer) : NULL;
    sc->hint_fresh = false;
    handle_key(sc, c);
    if (sc->hint_matches && !sc->hint_fresh && before && rl_line_buffer && strcmp(before, rl_line_buffer)) {
        sc->hint[0] = 0;
        sc->hint_matches = false;
    }
    free(before);
}

/* ---- signals and the main loop -------------------------------------------------------------- */

/* Ctrl-C while a command runs stops the command (at the next case) and the screen stays; at
 * the prompt, and for SIGTERM and SIGHUP, the screen ends. */
static void on_signal(int sig)
{
    if (sig == SIGINT && busy && !stop_requested) {
        stop_requested = 1;
        return;
    }
    if (got_signal || (sig == SIGINT && busy)) {
        /* a second signal while a command runs: restore the terminal and go now */
        endwin();
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    got_signal = sig;
    stop_requested = 1;
}

static void catch_signals(bool on)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on ? on_signal : SIG_DFL;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* newterm, not initscr: initscr exits the process when the terminal is unknown. */
static bool start_curses(struct kg_screen *sc)
{
    setlocale(LC_CTYPE, ""); /* line drawing in UTF-8; numbers keep the C locale's format */
    sc->term = newterm(NULL, stdout, stdin);
    if (!sc->term) return false;
    set_term(sc->term);
    cbreak();
    noecho();
    nonl();
    intrflush(stdscr, FALSE);
    keypad(stdscr, TRUE);
    set_escdelay(25);
    timeout(100);
    kg_tui_init_colors(sc);
    return true;
}

static void welcome(struct kg_screen *sc, const char *path)
{
    struct kg_insp *in = sc->in;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    if (path) {
        snprintf(in->detail_title, sizeof in->detail_title, "load %s", path);
        kg_insp_load(in, path, f);
        if (in->lab_lesson) { /* the brief printed before the screen opened is gone: show it here */
            fputc('\n', f);
            kg_insp_exec(in, "lesson", f);
        }
    } else {
        fprintf(f, "kgate inspector: load FILE (or load builtin:softmax_rows) to start.\n");
        kg_insp_exec(in, "help", f);
    }
    fclose(f);
    sc->text = buf;
}

static void loop(struct kg_screen *sc)
{
    while (!sc->in->quit && !sc->eof && !got_signal) {
        int c = getch();
        if (c == ERR) continue;
        key(sc, c);
        if (sc->pending) {
            char *line = sc->pending;
            sc->pending = NULL;
            execute(sc, line);
            free(line);
        }
        kg_tui_draw(sc);
    }
}

/* Runs the full screen until `quit`; -1 (before loading anything) when the terminal cannot
 * be opened, so the caller can fall back to the line REPL. */
int kg_tui_fullscreen(struct kg_insp *in, const char *path)
{
    struct kg_screen sc = {.in = in};
    if (!start_curses(&sc)) return -1;
    scr = &sc;
    in->fullscreen = true;
    in->ui = &sc;
    in->on_progress = progress_hook;
    in->interrupted = &stop_requested;
    catch_signals(true);
    readline_setup(&sc);
    welcome(&sc, path);
    kg_tui_draw(&sc);
    loop(&sc);
    rl_callback_handler_remove();
    kg_insp_history_save();
    endwin();
    delscreen(sc.term);
    catch_signals(false);
    in->fullscreen = false;
    in->on_progress = NULL;
    in->ui = NULL;
    if (sc.rl_null) fclose(sc.rl_null);
    rl_outstream = NULL;
    free(sc.text);
    free(sc.pending);
    scr = NULL;
    if (got_signal) {
        fprintf(stderr, "kgate: stopped by signal %d\n", (int)got_signal);
        return 128 + got_signal;
    }
    return 0;
}
