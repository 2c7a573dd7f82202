/* heatmap.h: the heatmap's model, in plain C so that the REPL and the ncurses screen draw the
 * same thing: a 2-D slice of one output binned into a grid of cells (each cell shows its worst
 * element), a glyph ramp over log10 of the element error, a cursor and a zoom. A second kind
 * shows where two recorded runs differ bit for bit. Nothing here includes ncurses.h. */
#ifndef KG_TUI_HEATMAP_H
#define KG_TUI_HEATMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/inspect.h"

/* The density ramp, index 0 (no error) to 9 (100x the threshold or more). */
#define KG_HM_RAMP       " .:-=+*#%@"
#define KG_HM_FAIL_LEVEL 7 /* levels from here on are above the threshold */

enum kg_hm_kind { KG_HM_ERROR, KG_HM_DIFF };

/* What a cell shows, from least to most alarming. */
enum kg_hm_class {
    KG_HC_EMPTY,    /* outside the tensor */
    KG_HC_SAME,     /* DIFF: every element bit-identical */
    KG_HC_NAN_OK,   /* ERROR: NaN where the oracle has NaN ('n') */
    KG_HC_INF_OK,   /* ERROR: Inf where the oracle has the same Inf ('i') */
    KG_HC_RAMP,     /* ERROR: a level of the ramp (0 = exact) */
    KG_HC_DIFF,     /* DIFF: some elements differ (ramp by share) */
    KG_HC_BAD,      /* ERROR: non-finite where the oracle is finite ('!') */
    KG_HC_LOST_INF, /* ERROR: the oracle has +-Inf, the kernel not ('I') */
    KG_HC_LOST_NAN, /* ERROR: the oracle has NaN, the kernel not ('N') */
};

/* One output to draw. Arrays have numel entries and belong to the caller. ERROR: err, got
 * (the kernel's values), expected (fp64 oracle). DIFF: got = run a, expected = run b,
 * differs = flags. */
struct kg_hm_src {
    enum kg_hm_kind kind;
    char name[KG_NAME_MAX];
    int rank;
    int64_t dims[KG_MAX_RANK];
    int64_t numel;
    const double *err, *got, *expected;
    const uint8_t *differs;
    double threshold;
};

/* Where the user is looking; kept across redraws and resizes. */
struct kg_hm_view {
    int64_t lead[KG_MAX_RANK]; /* the slice: indices of the leading dims (rank > 2) */
    int zoom;                  /* 0: the whole slice fits the pane; each step halves a cell */
    int64_t cur;               /* cursor: flat index inside the slice */
    int64_t oy, ox;            /* first cell row / column shown */
};

struct kg_hm_cell {
    enum kg_hm_class cls;
    int level;     /* 0..9, the ramp index */
    int64_t worst; /* flat index (in the whole tensor) of the cell's worst element, -1 if empty */
    int64_t count; /* DIFF: differing elements in the cell */
};

struct kg_hm_grid {
    int rows, cols;          /* cells drawn */
    int64_t R, C;            /* the slice as a matrix (a 1-D tensor is folded row by row) */
    int64_t bh, bw;          /* elements per cell, down and across */
    int64_t base;            /* flat index of the slice's first element */
    int cur_y, cur_x;        /* the cursor's cell on screen */
    bool max_zoom;           /* one element per cell */
    struct kg_hm_cell *cell; /* rows * cols, owned */
};

/* Fills src from one output of an inspection / a replay diff. */
void kg_hm_from_inspection(struct kg_hm_src *src, const struct kg_inspect_out *o);
void kg_hm_from_diff(struct kg_hm_src *src, const struct kg_diffmap *d);

/* Checks and sets the slice (n leading indices; missing ones are 0). -1 with why filled. */
int kg_hm_set_slice(const struct kg_hm_src *src, struct kg_hm_view *v, const int64_t *lead, int n, char *why,
                    size_t nwhy);

/* Puts the cursor on the worst element: of the whole tensor (switching the slice to it), or
 * of the current slice when in_slice. */
void kg_hm_goto_worst(const struct kg_hm_src *src, struct kg_hm_view *v, bool in_slice);

/* The flat index of the tensor's worst element (-1 when empty), and whether it is exact
 * (no element differs from the oracle, or no bit from the other run). */
int64_t kg_hm_worst(const struct kg_hm_src *src, bool *exact);

/* Bins the slice into at most rows x cols cells at the view's zoom, scrolling the view so the
 * cursor is visible. Returns -1 on allocation failure. Free with kg_hm_grid_free. */
int kg_hm_layout(const struct kg_hm_src *src, struct kg_hm_view *v, int rows, int cols, struct kg_hm_grid *g);
void kg_hm_grid_free(struct kg_hm_grid *g);

/* Keys: move the cursor by cells, zoom in / out (keeping the cursor's element). */
void kg_hm_move(const struct kg_hm_src *src, struct kg_hm_view *v, const struct kg_hm_grid *g, int dy, int dx);
void kg_hm_zoom(struct kg_hm_view *v, const struct kg_hm_grid *g, int step);

/* The glyph of a cell. */
char kg_hm_glyph(const struct kg_hm_cell *c);

/* The ramp level of one element error (0 exact .. 9). */
int kg_hm_level(double err, double threshold);

/* A value for people: %.*g, with every NaN written "nan" (printf may say "-nan"). */
const char *kg_hm_num(double v, int digits, char *buf, size_t n);

/* "y[3,5]" for a flat index. */
void kg_hm_index(const struct kg_hm_src *src, int64_t flat, char *buf, size_t n);

/* One line about element flat: "y[3,5] got 1.5 expected 0.5 error 0.67 (4.2e+04x threshold)". */
void kg_hm_describe(const struct kg_hm_src *src, int64_t flat, char *buf, size_t n);

/* The legend, as short lines (at most width columns each); returns the number written. */
int kg_hm_legend(const struct kg_hm_src *src, char lines[][96], int max, int width);

/* The whole map as text (the REPL's view): a header, framed rows of glyphs labelled with
 * their first index, the legend and the worst element. */
void kg_hm_print(FILE *f, const struct kg_hm_src *src, struct kg_hm_view *v, int rows, int cols);

#endif
