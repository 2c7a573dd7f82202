/* screen.h: the full-screen inspector's own state, shared by tui.c (curses and readline set
 * up, keys, the main loop) and panes.c (drawing the panes from it and from struct kg_insp).
 * Only these two files include it: it is the one header of the inspector with curses.h. */
#ifndef KG_TUI_SCREEN_H
#define KG_TUI_SCREEN_H

#include <curses.h>
#include <stdbool.h>
#include <stdio.h>

#include "tui/inspector.h"

#define KG_TUI_PROMPT "kgate> "

/* Where keys go: the readline command line, or the heatmap's cursor. */
enum kg_focus { KG_FOCUS_CMD, KG_FOCUS_MAP };

struct kg_screen {
    struct kg_insp *in;
    bool color;
    enum kg_focus focus;
    int scroll;       /* first line of the detail pane */
    int detail_lines; /* lines the detail text took at the last draw */
    int detail_rows;  /* lines of text the detail pane showed at the last draw */
    bool detail_next; /* the detail text has a `next:` line (the gate list then shows none) */
    char *text;       /* the last command's output */
    char hint[512];
    bool hint_error;
    bool hint_matches; /* the hint is readline's list of completions */
    bool hint_fresh;   /* ... set by the key being handled now */
    char *pending;     /* a line readline accepted, to run */
    bool eof;
    int ch; /* the key readline reads next */
    bool ch_avail;
    struct kg_hm_grid grid; /* geometry of the last map drawn (cells freed) */
    bool grid_valid;
    FILE *rl_null;
    SCREEN *term;
};

/* The colour pairs, or none when the terminal has no colours or NO_COLOR is set. */
void kg_tui_init_colors(struct kg_screen *sc);

/* Draws every pane and the command line, then refreshes; a terminal under the minimum size
 * gets one line that says so. */
void kg_tui_draw(struct kg_screen *sc);

#endif
