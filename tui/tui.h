/* tui.h: the inspector's entry point, called by main.c. `kgate FILE` opens the full-screen
 * ncurses inspector when standard input and output are terminals; `kgate --repl [FILE]` and
 * any other standard input get the plain line REPL with the same command language. */
#ifndef KG_TUI_H
#define KG_TUI_H

#include <stdbool.h>

/* Runs the inspector on path (NULL: nothing loaded yet) and returns the exit status: 0 on
 * `quit` or end of input. A file that fails to load is reported and the inspector goes on. */
int kg_tui_main(const char *path, bool repl);

/* The same for `kgate lab N`: the inspector knows its lesson (`hint`, `lesson`). */
int kg_tui_lab(const char *path, bool repl, int lesson);

#endif
