/* inspector.h: the inspector's state and its command language, shared by the line REPL
 * (repl.c) and the full-screen screen (tui.c). Commands (commands.c, show.c, views.c, over
 * the state in state.c) call the engine (session.h, inspect.h) and write plain text to a
 * FILE; the screens only decide where that text and the heatmap go. Nothing here includes
 * ncurses.h. */
#ifndef KG_TUI_INSPECTOR_H
#define KG_TUI_INSPECTOR_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "tui/heatmap.h"
#include "engine/inspect.h"
#include "gates/gate.h"

#define KG_INSP_MAX_SWEEP 128

/* What the lower pane of the full screen shows. */
enum kg_map_mode { KG_MAP_NONE, KG_MAP_ERRORS, KG_MAP_DIFF, KG_MAP_SWEEP };

/* What the detail pane shows: the last command's text, or the selected gate's verdict. */
enum kg_detail_mode { KG_DETAIL_TEXT, KG_DETAIL_GATE };

struct kg_insp {
    struct kg_session *s; /* NULL until a file loads */
    char path[4096];      /* as the user gave it */
    char load_error[2048];

    /* the gates, in kg_gates order, and what has run */
    int ngates;
    struct kg_verdict v[KG_MAX_GATES];
    bool ran[KG_MAX_GATES];
    int running;  /* index of the gate running now, or -1 */
    int selected; /* the gate the detail pane shows, or -1 */

    /* the case the heatmap runs: a failing gate's, or the current one */
    struct kg_case view_case;
    bool have_view_case;
    char view_origin[96];

    /* the heatmap of one run of view_case */
    struct kg_inspection insp;
    bool have_insp;
    int hm_out;
    struct kg_hm_src hm;
    struct kg_hm_view view;

    /* replay N M */
    struct kg_diffmap diff[KG_OP_MAX_IO];
    int ndiff, diff_out, diff_a, diff_b;
    struct kg_hm_src dsrc;
    struct kg_hm_view dview;

    /* sweep */
    struct kg_sweep_row sweep[KG_INSP_MAX_SWEEP];
    int nsweep;
    char sweep_sym[KG_NAME_MAX];

    enum kg_map_mode map;
    enum kg_detail_mode detail;
    char detail_title[128];

    /* set by the screen */
    bool fullscreen; /* the heatmap is drawn in a pane, not printed */
    bool quit;
    /* Ctrl-C asked to stop the running command: the screen's signal handler sets it, the screen
     * clears it before each command; the session asks it (kg_session_opts.interrupted) */
    volatile sig_atomic_t *interrupted;
    void (*on_progress)(struct kg_insp *in, const char *gate, const char *what);
    void *ui;

    /* kgate lab: the lesson the inspector was opened on (0: none) and the hints shown so far */
    int lab_lesson, lab_hints;
};

void kg_insp_init(struct kg_insp *in);
void kg_insp_free(struct kg_insp *in);

/* Loads a kernel file (or builtin:NAME), replacing the current one; on failure the error
 * ("FILE:LINE: ...") is written to out and kept in in->load_error. Returns 0 or -1. */
int kg_insp_load(struct kg_insp *in, const char *path, FILE *out);

/* Runs one command line, writing its result or a clear error to out. Returns 0, or -1 when
 * the command failed (the text says why). Sets in->quit on `quit`. */
int kg_insp_exec(struct kg_insp *in, const char *line, FILE *out);

/* Selects gate i: the detail pane shows its verdict, and a failing gate's case becomes the
 * heatmap's. */
void kg_insp_select(struct kg_insp *in, int i);

/* The verdict of gate i as text: status, summary, evidence, detail, replay, next command. */
void kg_insp_verdict_text(const struct kg_insp *in, int i, FILE *out);

/* The next command to type for a failing gate ("heatmap y", "replay 1 2"), or "". */
void kg_insp_next_step(const struct kg_insp *in, int i, char *buf, size_t n);

/* The sweep's bar: log10(err / threshold) from 1e-4 to 1e2 in width columns, '|' at 1x. */
void kg_insp_sweep_bar(double margin, char *buf, int width);

/* Words for completion: the candidates for word number argi (0: the command) after the
 * command cmd; calls add(ud, word) for each. Returns false when file names fit instead. */
bool kg_insp_complete(const struct kg_insp *in, const char *cmd, int argi, const char *text,
                      void (*add)(void *ud, const char *w), void *ud);

/* The one-line status of gate i for the gate list ("pass", "fail", "-" not run). */
const char *kg_insp_gate_status(const struct kg_insp *in, int i);

/* The heatmap's current source, or NULL when the lower pane shows no map. */
const struct kg_hm_src *kg_insp_map_src(const struct kg_insp *in, struct kg_hm_view **view);

/* Readline setup shared by both screens: completion and the history file. */
/* readline.c: completion for in, and the history (remember adds a line unless it repeats the
 * last one). */
void kg_insp_readline_init(struct kg_insp *in);
void kg_insp_history_save(void);
void kg_insp_remember(const char *line);
void kg_insp_readline_free(void);

/* tui.c: the full-screen inspector; -1 when the terminal cannot do it. */
int kg_tui_fullscreen(struct kg_insp *in, const char *path);

/* ---- inside the command language: what its files share, not for the screens --------------- */

/* The commands that commands.c's table lists from the other files. Each takes its words
 * (argv[0] is its name), writes its result or a clear error to out, and returns 0 or -1. */
/* show.c: the current case, its pins and its resources. */
int kg_insp_cmd_show(struct kg_insp *in, int argc, char **argv, FILE *out);
int kg_insp_cmd_set(struct kg_insp *in, int argc, char **argv, FILE *out);
int kg_insp_cmd_dtype(struct kg_insp *in, int argc, char **argv, FILE *out);
int kg_insp_cmd_seed(struct kg_insp *in, int argc, char **argv, FILE *out);
int kg_insp_cmd_dist(struct kg_insp *in, int argc, char **argv, FILE *out);
int kg_insp_cmd_resources(struct kg_insp *in, int argc, char **argv, FILE *out);
/* views.c: the heatmap, the replay map and the sweep of one run. */
int kg_insp_cmd_heatmap(struct kg_insp *in, int argc, char **argv, FILE *out);
int kg_insp_cmd_replay(struct kg_insp *in, int argc, char **argv, FILE *out);
int kg_insp_cmd_sweep(struct kg_insp *in, int argc, char **argv, FILE *out);

/* lab_hint.c: the lesson's brief and its next hint (kgate lab). */
int kg_insp_cmd_lesson(struct kg_insp *in, int argc, char **argv, FILE *out);
int kg_insp_cmd_hint(struct kg_insp *in, int argc, char **argv, FILE *out);

/* state.c: drops the heatmap, the replay map and the sweep (their case is no longer current). */
void kg_insp_drop_views(struct kg_insp *in);

/* Drops the views, the verdicts and the session (a new kernel replaces it). */
void kg_insp_drop_kernel(struct kg_insp *in);

/* Writes prose that is stored wrapped at ~100 columns (a gate's explain text): as it is for
 * the line REPL; for the full screen each paragraph as one line, which the pane wraps once at
 * its own width. Blank lines, indented lines and list items are kept as they are. */
void kg_insp_prose(const struct kg_insp *in, const char *text, FILE *out);

/* Whether name is an output argument of c. */
bool kg_insp_is_output(const struct kg_contract *c, const char *name);

/* The current case into k; on failure the reason goes to out and -1 is returned. */
int kg_insp_current_case(struct kg_insp *in, struct kg_case *k, FILE *out);

#endif
