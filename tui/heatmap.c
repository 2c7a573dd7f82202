/* heatmap.c: binning an output's element errors (or a replay's differing bits) into the cells
 * of a pane, worst element first, and the text rendering the REPL prints. The ncurses screen
 * (panes.c) draws the same grid; only the glyph's colour is added there. */
#include "tui/heatmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t ceil_div(int64_t a, int64_t b)
{
    return b > 0 ? (a + b - 1) / b : a;
}

void kg_hm_from_inspection(struct kg_hm_src *src, const struct kg_inspect_out *o)
{
    memset(src, 0, sizeof *src);
    src->kind = KG_HM_ERROR;
    kg_strlcpy(src->name, o->name, sizeof src->name);
    src->rank = o->rank;
    memcpy(src->dims, o->dims, sizeof src->dims);
    src->numel = o->numel;
    src->err = o->err;
    src->got = o->got;
    src->expected = o->expected;
    src->threshold = o->threshold;
}

void kg_hm_from_diff(struct kg_hm_src *src, const struct kg_diffmap *d)
{
    memset(src, 0, sizeof *src);
    src->kind = KG_HM_DIFF;
    kg_strlcpy(src->name, d->name, sizeof src->name);
    src->rank = d->rank;
    memcpy(src->dims, d->dims, sizeof src->dims);
    src->numel = d->numel;
    src->got = d->a;
    src->expected = d->b;
    src->differs = d->differs;
}

/* ---- slices -------------------------------------------------------------------------------- */

static int64_t slice_numel(const struct kg_hm_src *src)
{
    if (src->rank >= 2) return src->dims[src->rank - 2] * src->dims[src->rank - 1];
    return src->numel;
}

static int64_t slice_base(const struct kg_hm_src *src, const struct kg_hm_view *v)
{
    int64_t base = 0, stride = slice_numel(src);
    for (int i = src->rank - 3; i >= 0; i--) {
        base += v->lead[i] * stride;
        stride *= src->dims[i];
    }
    return base;
}

int kg_hm_set_slice(const struct kg_hm_src *src, struct kg_hm_view *v, const int64_t *lead, int n, char *why,
                    size_t nwhy)
{
    int nlead = src->rank > 2 ? src->rank - 2 : 0;
    if (n > nlead) {
        snprintf(why, nwhy, "%s has rank %d: a slice takes %d leading indices, not %d", src->name, src->rank, nlead, n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (lead[i] < 0 || lead[i] >= src->dims[i]) {
            snprintf(why, nwhy, "slice index %d is %lld, outside 0..%lld", i, (long long)lead[i],
                     (long long)src->dims[i] - 1);
            return -1;
        }
    memset(v->lead, 0, sizeof v->lead);
    for (int i = 0; i < n; i++) v->lead[i] = lead[i];
    v->cur = 0;
    v->oy = v->ox = 0;
    return 0;
}

/* ---- what one element and one cell show --------------------------------------------------- */

int kg_hm_level(double err, double threshold)
{
    if (err == 0) return 0;
    if (!(threshold > 0)) return 9; /* exact ops: any error fails */
    if (!(err < INFINITY)) return 9;
    int d = (int)floor(log10(err / threshold));
    int level = d + KG_HM_FAIL_LEVEL;
    if (level < 1) level = 1;
    if (level > 9) level = 9;
    if (err <= threshold && level >= KG_HM_FAIL_LEVEL) level = KG_HM_FAIL_LEVEL - 1;
    return level;
}

static enum kg_hm_class elem_class(const struct kg_hm_src *src, int64_t i, int *level)
{
    *level = 0;
    if (src->kind == KG_HM_DIFF) return src->differs[i] ? KG_HC_DIFF : KG_HC_SAME;
    double e = src->err[i], x = src->expected[i], g = src->got[i];
    if (!(e < INFINITY) && !(isfinite(g) && isfinite(x))) {
        if (isnan(x)) return KG_HC_LOST_NAN;
        if (isinf(x)) return KG_HC_LOST_INF;
        return KG_HC_BAD;
    }
    if (e == 0 && isnan(x)) return KG_HC_NAN_OK;
    if (e == 0 && isinf(x)) return KG_HC_INF_OK;
    *level = kg_hm_level(e, src->threshold);
    return KG_HC_RAMP;
}

/* Orders elements by how alarming they are: non-finite mismatches, then the ramp, then
 * matching non-finite values, then exact ones. */
static int severity(enum kg_hm_class c, int level)
{
    switch (c) {
    case KG_HC_EMPTY: return -1;
    case KG_HC_SAME: return 0;
    case KG_HC_NAN_OK:
    case KG_HC_INF_OK: return 1;
    case KG_HC_RAMP: return level ? 1 + level : 0;
    case KG_HC_DIFF: return 11;
    case KG_HC_BAD: return 12;
    case KG_HC_LOST_INF: return 13;
    case KG_HC_LOST_NAN: return 14;
    }
    return 0;
}

/* The magnitude used to break ties between elements of equal severity. */
static double magnitude(const struct kg_hm_src *src, int64_t i)
{
    if (src->kind == KG_HM_ERROR) return isnan(src->err[i]) ? INFINITY : src->err[i];
    if (!src->differs[i]) return 0;
    double d = fabs(src->got[i] - src->expected[i]);
    return isnan(d) ? INFINITY : d;
}

struct acc {
    int sev;
    double mag;
    int64_t worst, n, count;
    enum kg_hm_class cls;
    int level;
};

static void acc_add(const struct kg_hm_src *src, struct acc *a, int64_t i)
{
    int level;
    enum kg_hm_class c = elem_class(src, i, &level);
    int sev = severity(c, level);
    double mag = magnitude(src, i);
    a->n++;
    if (c == KG_HC_DIFF) a->count++;
    if (a->worst >= 0 && (sev < a->sev || (sev == a->sev && !(mag > a->mag)))) return;
    a->sev = sev;
    a->mag = mag;
    a->worst = i;
    a->cls = c;
    a->level = level;
}

static void acc_cell(const struct kg_hm_src *src, const struct acc *a, struct kg_hm_cell *cell)
{
    cell->cls = a->worst < 0 ? KG_HC_EMPTY : a->cls;
    cell->worst = a->worst;
    cell->count = a->count;
    cell->level = a->level;
    if (cell->cls == KG_HC_DIFF) {
        int l = 2 + (int)((double)a->count * 8 / (double)a->n);
        cell->level = l > 9 ? 9 : l;
    }
    (void)src;
}

char kg_hm_glyph(const struct kg_hm_cell *c)
{
    switch (c->cls) {
    case KG_HC_EMPTY: return ' ';
    case KG_HC_SAME: return '.';
    case KG_HC_NAN_OK: return 'n';
    case KG_HC_INF_OK: return 'i';
    case KG_HC_RAMP:
    case KG_HC_DIFF: return KG_HM_RAMP[c->level];
    case KG_HC_BAD: return '!';
    case KG_HC_LOST_INF: return 'I';
    case KG_HC_LOST_NAN: return 'N';
    }
    return '?';
}

/* ---- layout --------------------------------------------------------------------------------- */

/* The slice as an R x C matrix and the cell size at the view's zoom. */
static void geometry(const struct kg_hm_src *src, const struct kg_hm_view *v, int rows, int cols, struct kg_hm_grid *g)
{
    int64_t scale = (int64_t)1 << (v->zoom < 62 ? v->zoom : 62);
    g->base = slice_base(src, v);
    if (src->rank >= 2) {
        g->R = src->dims[src->rank - 2];
        g->C = src->dims[src->rank - 1];
        g->bh = ceil_div(ceil_div(g->R, rows), scale);
        g->bw = ceil_div(ceil_div(g->C, cols), scale);
    } else {
        /* a vector is folded into rows of cols cells */
        int64_t n = src->numel;
        int64_t p = ceil_div(ceil_div(n, (int64_t)rows * cols), scale);
        g->bh = 1;
        g->bw = p < 1 ? 1 : p;
        g->C = n < cols * g->bw ? n : cols * g->bw;
        g->R = ceil_div(n, g->C ? g->C : 1);
    }
    if (g->bh < 1) g->bh = 1;
    if (g->bw < 1) g->bw = 1;
    if (g->C < 1) g->C = 1;
    if (g->R < 1) g->R = 1;
    g->max_zoom = g->bh == 1 && g->bw == 1;
}

static void scroll(int64_t cur, int64_t *origin, int shown, int64_t total)
{
    if (cur < *origin) *origin = cur;
    if (cur >= *origin + shown) *origin = cur - shown + 1;
    if (*origin > total - shown) *origin = total - shown;
    if (*origin < 0) *origin = 0;
}

int kg_hm_layout(const struct kg_hm_src *src, struct kg_hm_view *v, int rows, int cols, struct kg_hm_grid *g)
{
    memset(g, 0, sizeof *g);
    if (rows < 1) rows = 1;
    if (cols < 1) cols = 1;
    geometry(src, v, rows, cols, g);
    int64_t gr = ceil_div(g->R, g->bh), gc = ceil_div(g->C, g->bw), n = slice_numel(src);
    g->rows = (int)(gr < rows ? gr : rows);
    g->cols = (int)(gc < cols ? gc : cols);
    if (v->cur < 0 || v->cur >= n) v->cur = 0;
    int64_t cy = v->cur / g->C / g->bh, cx = v->cur % g->C / g->bw;
    scroll(cy, &v->oy, g->rows, gr);
    scroll(cx, &v->ox, g->cols, gc);
    g->cur_y = (int)(cy - v->oy);
    g->cur_x = (int)(cx - v->ox);
    g->cell = calloc((size_t)g->rows * (size_t)g->cols, sizeof *g->cell);
    if (!g->cell) return -1;
    for (int y = 0; y < g->rows; y++)
        for (int x = 0; x < g->cols; x++) {
            struct acc a = {.worst = -1};
            int64_t r0 = (v->oy + y) * g->bh, c0 = (v->ox + x) * g->bw;
            for (int64_t r = r0; r < r0 + g->bh && r < g->R; r++)
                for (int64_t c = c0; c < c0 + g->bw && c < g->C; c++) {
                    int64_t i = r * g->C + c;
                    if (i < n) acc_add(src, &a, g->base + i);
                }
            acc_cell(src, &a, &g->cell[y * g->cols + x]);
        }
    return 0;
}

void kg_hm_grid_free(struct kg_hm_grid *g)
{
    free(g->cell);
    g->cell = NULL;
}

void kg_hm_move(const struct kg_hm_src *src, struct kg_hm_view *v, const struct kg_hm_grid *g, int dy, int dx)
{
    int64_t n = slice_numel(src);
    int64_t r = v->cur / g->C, c = v->cur % g->C;
    int64_t gr = ceil_div(g->R, g->bh), gc = ceil_div(g->C, g->bw);
    int64_t cy = r / g->bh + dy, cx = c / g->bw + dx;
    if (cy < 0) cy = 0;
    if (cy >= gr) cy = gr - 1;
    if (cx < 0) cx = 0;
    if (cx >= gc) cx = gc - 1;
    /* keep the offset inside the cell, so zooming back in returns to the same element */
    int64_t nr = cy * g->bh + r % g->bh, nc = cx * g->bw + c % g->bw;
    if (nr >= g->R) nr = g->R - 1;
    if (nc >= g->C) nc = g->C - 1;
    int64_t cur = nr * g->C + nc;
    if (cur >= n) cur = n - 1;
    if (cur >= 0) v->cur = cur;
}

void kg_hm_zoom(struct kg_hm_view *v, const struct kg_hm_grid *g, int step)
{
    if (step > 0 && !g->max_zoom) v->zoom++;
    if (step < 0 && v->zoom > 0) v->zoom--;
}

/* ---- the worst element and words about elements ------------------------------------------ */

static int64_t worst_of(const struct kg_hm_src *src, int64_t from, int64_t n)
{
    struct acc a = {.worst = -1};
    for (int64_t i = from; i < from + n && i < src->numel; i++) acc_add(src, &a, i);
    return a.worst;
}

int64_t kg_hm_worst(const struct kg_hm_src *src, bool *exact)
{
    struct acc a = {.worst = -1};
    for (int64_t i = 0; i < src->numel; i++) acc_add(src, &a, i);
    if (exact) *exact = a.sev <= 0;
    return a.worst;
}

void kg_hm_goto_worst(const struct kg_hm_src *src, struct kg_hm_view *v, bool in_slice)
{
    int64_t per = slice_numel(src);
    if (per < 1) per = 1;
    int64_t w = in_slice ? worst_of(src, slice_base(src, v), per) : worst_of(src, 0, src->numel);
    if (w < 0) return;
    int64_t outer = w / per;
    for (int i = src->rank - 3; i >= 0; i--) {
        v->lead[i] = outer % src->dims[i];
        outer /= src->dims[i];
    }
    v->cur = w % per;
}

void kg_hm_index(const struct kg_hm_src *src, int64_t flat, char *buf, size_t n)
{
    struct kg_tensor t = {.rank = src->rank};
    memcpy(t.dims, src->dims, sizeof t.dims);
    char idx[96];
    kg_tensor_index_str(&t, flat, idx, sizeof idx);
    snprintf(buf, n, "%s%s", src->name, idx);
}

const char *kg_hm_num(double v, int digits, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "nan");
    else
        snprintf(buf, n, "%.*g", digits, v);
    return buf;
}

void kg_hm_describe(const struct kg_hm_src *src, int64_t flat, char *buf, size_t n)
{
    char idx[160], a[40], b[40];
    kg_hm_index(src, flat, idx, sizeof idx);
    if (flat < 0 || flat >= src->numel) {
        snprintf(buf, n, "%s: outside the tensor", idx);
        return;
    }
    kg_hm_num(src->got[flat], src->kind == KG_HM_DIFF ? 9 : 6, a, sizeof a);
    kg_hm_num(src->expected[flat], src->kind == KG_HM_DIFF ? 9 : 6, b, sizeof b);
    if (src->kind == KG_HM_DIFF) {
        if (src->differs[flat])
            snprintf(buf, n, "%s: %s vs %s, differ by %.3g", idx, a, b, fabs(src->got[flat] - src->expected[flat]));
        else
            snprintf(buf, n, "%s: %s in both runs", idx, a);
        return;
    }
    int level;
    enum kg_hm_class c = elem_class(src, flat, &level);
    const char *what = c == KG_HC_LOST_NAN   ? "NaN lost"
                       : c == KG_HC_LOST_INF ? "Inf lost"
                       : c == KG_HC_BAD      ? "non-finite, the oracle is finite"
                       : src->err[flat] == 0 ? "exact"
                                             : NULL;
    if (what)
        snprintf(buf, n, "%s got %s, expected %s: %s", idx, a, b, what);
    else if (src->threshold > 0)
        snprintf(buf, n, "%s got %s, expected %s, error %.2e = %.3gx threshold", idx, a, b, src->err[flat],
                 src->err[flat] / src->threshold);
    else
        snprintf(buf, n, "%s got %s, expected %s, error %.2e", idx, a, b, src->err[flat]);
}

/* ---- legend and text ------------------------------------------------------------------------ */

static int put(char lines[][96], int k, int max, const char *s)
{
    if (k < max) kg_strlcpy(lines[k], s, 96);
    return k + 1;
}

static int legend_narrow(const struct kg_hm_src *src, char lines[][96], int max)
{
    int k = 0;
    char head[96];
    if (src->kind == KG_HM_DIFF) {
        k = put(lines, k, max, "'.' same bits");
        k = put(lines, k, max, ":-=+*#%@ differ");
        k = put(lines, k, max, "(share of the cell)");
        return k < max ? k : max;
    }
    if (src->threshold > 0) {
        snprintf(head, sizeof head, "err/thr, thr %.1e", src->threshold);
        k = put(lines, k, max, head);
        k = put(lines, k, max, "' ' 0   .:-=+ <0.1x");
        k = put(lines, k, max, "*  0.1..1x  (pass)");
        k = put(lines, k, max, "# >1x % >10x @ >100x");
    } else {
        k = put(lines, k, max, "threshold 0: exact");
        k = put(lines, k, max, "' ' equal  @ differs");
    }
    k = put(lines, k, max, "N NaN lost I Inf lost");
    k = put(lines, k, max, "! spurious non-finite");
    k = put(lines, k, max, "n i NaN/Inf as oracle");
    return k < max ? k : max;
}

static int legend_wide(const struct kg_hm_src *src, char lines[][96], int max)
{
    int k = 0;
    char head[96];
    if (src->kind == KG_HM_DIFF) {
        k = put(lines, k, max, "legend: '.' bit-identical in both runs; :-=+*#%@ some elements differ");
        k = put(lines, k, max, "        (the glyph grows with the share of the cell's elements that differ)");
        return k < max ? k : max;
    }
    if (src->threshold > 0) {
        snprintf(head, sizeof head,
                 "legend: log10(error / threshold), threshold %.2e, a decade per glyph:", src->threshold);
        k = put(lines, k, max, head);
        k = put(lines, k, max, "  ' ' exact  . <1e-5x  : <1e-4x  - <1e-3x  = <0.01x  + <0.1x  * <=1x (pass)");
        k = put(lines, k, max, "  # >1x  % >10x  @ >100x (fail)");
    } else {
        k = put(lines, k, max, "legend: threshold 0 (exact op): ' ' equal, @ any difference (fail)");
    }
    k = put(lines, k, max, "  N NaN expected, not produced  I Inf expected, not produced");
    k = put(lines, k, max, "  ! non-finite where the oracle is finite  n i NaN/Inf as the oracle");
    return k < max ? k : max;
}

int kg_hm_legend(const struct kg_hm_src *src, char lines[][96], int max, int width)
{
    return width >= 78 ? legend_wide(src, lines, max) : legend_narrow(src, lines, max);
}

static void shape_str(const struct kg_hm_src *src, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    kg_appendf(buf, n, &len, "[");
    for (int i = 0; i < src->rank; i++) kg_appendf(buf, n, &len, "%s%lld", i ? "," : "", (long long)src->dims[i]);
    kg_appendf(buf, n, &len, "]");
}

static void print_header(FILE *f, const struct kg_hm_src *src, const struct kg_hm_view *v, const struct kg_hm_grid *g)
{
    char shape[160];
    shape_str(src, shape, sizeof shape);
    fprintf(f, "%s %s", src->name, shape);
    if (src->rank > 2) {
        fprintf(f, ", slice %s[", src->name);
        for (int i = 0; i < src->rank - 2; i++) fprintf(f, "%lld,", (long long)v->lead[i]);
        fprintf(f, ":,:]");
    }
    fprintf(f, ": 1 cell = %lldx%lld element%s%s\n", (long long)g->bh, (long long)g->bw, g->bh * g->bw > 1 ? "s" : "",
            g->bh * g->bw > 1 ? " (the worst shown)" : "");
    if (src->rank >= 2)
        fprintf(f, "      columns %lld..%lld\n", (long long)(v->ox * g->bw),
                (long long)((v->ox + g->cols) * g->bw < g->C ? (v->ox + g->cols) * g->bw - 1 : g->C - 1));
}

void kg_hm_print(FILE *f, const struct kg_hm_src *src, struct kg_hm_view *v, int rows, int cols)
{
    if (src->numel == 0) {
        fprintf(f, "%s is empty at this shape: no element to show\n", src->name);
        return;
    }
    struct kg_hm_grid g;
    if (kg_hm_layout(src, v, rows, cols, &g)) {
        fprintf(f, "error: out of memory for the heatmap\n");
        return;
    }
    print_header(f, src, v, &g);
    fprintf(f, "      +");
    for (int x = 0; x < g.cols; x++) fputc('-', f);
    fprintf(f, "+\n");
    for (int y = 0; y < g.rows; y++) {
        fprintf(f, "%5lld |", (long long)((v->oy + y) * g.bh * (src->rank >= 2 ? 1 : g.C)));
        for (int x = 0; x < g.cols; x++) fputc(kg_hm_glyph(&g.cell[y * g.cols + x]), f);
        fprintf(f, "|\n");
    }
    fprintf(f, "      +");
    for (int x = 0; x < g.cols; x++) fputc('-', f);
    fprintf(f, "+\n");
    if (src->rank < 2) fprintf(f, "      (rows are labelled with their first flat index)\n");
    char lines[8][96];
    int k = kg_hm_legend(src, lines, 8, 80);
    for (int i = 0; i < k; i++) fprintf(f, "%s\n", lines[i]);
    kg_hm_grid_free(&g);
    bool exact;
    int64_t w = kg_hm_worst(src, &exact);
    char d[400];
    if (w >= 0 && src->kind == KG_HM_ERROR && exact) {
        fprintf(f, "worst: none, every element of %s equals the oracle's\n", src->name);
    } else if (w >= 0 && src->kind == KG_HM_ERROR) {
        kg_hm_describe(src, w, d, sizeof d);
        fprintf(f, "worst: %s\n", d);
    }
}
