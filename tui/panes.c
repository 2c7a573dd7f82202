/* panes.c: drawing the full-screen inspector: the title, the gate list, the detail of a
 * verdict or of the last command, the heatmap (or replay map, or sweep plot) with its legend,
 * and the command line, laid out for the terminal's size. A draw reads struct kg_insp; it
 * changes only the scrolls (the map's cursor stays in view, the detail pane ends on its last
 * line) and notes what it drew (the grid, the detail's line counts) for the keys in tui.c. */
#include <curses.h>
#include <math.h>
#include <readline/readline.h>
#include <stdlib.h>
#include <string.h>

#include "tui/screen.h"

#define MIN_W 50
#define MIN_H 12

enum paint { P_PASS = 1, P_FAIL, P_ERROR, P_WARN, P_RUN, P_COLD, P_TITLE, P_OK };

struct rect {
    int y, x, h, w;
};

struct layout {
    bool small;
    struct rect title, gates, legend, detail, map, hint, cmd;
};

/* ---- colours -------------------------------------------------------------------------------- */

void kg_tui_init_colors(struct kg_screen *sc)
{
    sc->color = has_colors() && !getenv("NO_COLOR");
    if (!sc->color) return;
    start_color();
    use_default_colors();
    init_pair(P_PASS, COLOR_GREEN, -1);
    init_pair(P_FAIL, COLOR_RED, -1);
    init_pair(P_ERROR, COLOR_MAGENTA, -1);
    init_pair(P_WARN, COLOR_YELLOW, -1);
    init_pair(P_RUN, COLOR_CYAN, -1);
    init_pair(P_COLD, COLOR_BLUE, -1);
    init_pair(P_TITLE, COLOR_WHITE, COLOR_BLUE);
    init_pair(P_OK, COLOR_GREEN, -1);
}

/* A paint with its monochrome fallback (bold for alarms, dim for quiet things). */
static attr_t paint(const struct kg_screen *sc, enum paint p)
{
    if (sc->color) {
        attr_t bold = p == P_FAIL || p == P_ERROR ? A_BOLD : 0;
        return COLOR_PAIR(p) | bold;
    }
    switch (p) {
    case P_FAIL:
    case P_ERROR: return A_BOLD;
    case P_TITLE: return A_REVERSE;
    case P_COLD: return A_DIM;
    case P_RUN: return A_UNDERLINE;
    default: return A_NORMAL;
    }
}

static attr_t status_paint(const struct kg_screen *sc, const char *st)
{
    if (!strcmp(st, "pass")) return paint(sc, P_PASS);
    if (!strcmp(st, "fail")) return paint(sc, P_FAIL);
    if (!strcmp(st, "error")) return paint(sc, P_ERROR);
    if (!strcmp(st, "refused")) return paint(sc, P_WARN);
    if (!strcmp(st, "running")) return paint(sc, P_RUN);
    return paint(sc, P_COLD);
}

static attr_t cell_paint(const struct kg_screen *sc, const struct kg_hm_cell *c)
{
    switch (c->cls) {
    case KG_HC_EMPTY: return A_NORMAL;
    case KG_HC_SAME: return paint(sc, P_COLD);
    case KG_HC_NAN_OK:
    case KG_HC_INF_OK: return paint(sc, P_RUN);
    case KG_HC_BAD:
    case KG_HC_LOST_INF:
    case KG_HC_LOST_NAN: return paint(sc, P_ERROR) | A_BOLD;
    case KG_HC_DIFF: return paint(sc, c->level >= 6 ? P_FAIL : P_WARN);
    case KG_HC_RAMP: break;
    }
    if (c->level >= 8) return paint(sc, P_FAIL) | A_BOLD;
    if (c->level >= KG_HM_FAIL_LEVEL) return sc->color ? paint(sc, P_WARN) | A_BOLD : A_BOLD;
    if (c->level == KG_HM_FAIL_LEVEL - 1) return paint(sc, P_OK);
    return c->level ? paint(sc, P_COLD) : A_NORMAL;
}

/* ---- layout and small drawing helpers ------------------------------------------------------ */

static void compute_layout(const struct kg_insp *in, struct layout *L)
{
    int H = LINES, W = COLS;
    memset(L, 0, sizeof *L);
    L->small = H < MIN_H || W < MIN_W;
    int body = H - 3, lw = W >= 100 ? 26 : 24;
    int gh = in->ngates + 2 < body ? in->ngates + 2 : body;
    L->title = (struct rect){0, 0, 1, W};
    L->gates = (struct rect){1, 0, gh, lw};
    L->legend = (struct rect){1 + gh, 0, body - gh, lw};
    int dh = body / 2;
    L->detail = (struct rect){1, lw + 1, dh, W - lw - 1};
    L->map = (struct rect){1 + dh, lw + 1, body - dh, W - lw - 1};
    L->hint = (struct rect){H - 2, 0, 1, W};
    L->cmd = (struct rect){H - 1, 0, 1, W};
}

/* Prints s clipped to width columns at (y, x). */
static void put_clip(int y, int x, int width, const char *s, attr_t a)
{
    if (width <= 0) return;
    attron(a);
    mvaddnstr(y, x, s, width);
    attroff(a);
}

static void header(const struct rect *r, const char *text, attr_t a)
{
    attron(a);
    mvhline(r->y, r->x, ' ', r->w);
    attroff(a);
    put_clip(r->y, r->x, r->w, text, a);
}

/* ---- panes ----------------------------------------------------------------------------------- */

static void draw_title(const struct kg_screen *sc, const struct layout *L)
{
    const struct kg_insp *in = sc->in;
    char t[512];
    int count[5] = {0}, run = 0;
    for (int i = 0; i < in->ngates; i++)
        if (in->ran[i]) count[in->v[i].status]++, run++;
    if (!in->s) {
        snprintf(t, sizeof t, " kgate inspector | no kernel loaded | load FILE, help, quit");
    } else {
        const struct kg_session *s = in->s;
        size_t len = 0;
        t[0] = 0;
        kg_appendf(t, sizeof t, &len, " kgate | %s (%s) | seed %llu | %d/%d run", kg_session_contract(s)->name,
                   kg_session_runner(s), (unsigned long long)kg_session_opts(s)->seed, run, in->ngates);
        const char *sep = ": ";
        for (int st = 0; st < 5; st++)
            if (count[st]) {
                kg_appendf(t, sizeof t, &len, "%s%d %s", sep, count[st], kg_status_name((enum kg_status)st));
                sep = ", ";
            }
    }
    header(&L->title, t, paint(sc, P_TITLE) | A_BOLD);
}

static void draw_gates(const struct kg_screen *sc, const struct layout *L)
{
    const struct kg_insp *in = sc->in;
    const struct rect *r = &L->gates;
    header(r, " GATES", A_REVERSE);
    int next = -1;
    for (int i = 0; i < in->ngates && i + 1 < r->h; i++) {
        const char *st = in->s ? kg_insp_gate_status(in, i) : "-";
        bool sel = i == in->selected;
        mvaddch(r->y + 1 + i, r->x, sel ? '>' : ' ');
        put_clip(r->y + 1 + i, r->x + 1, 15, kg_gates[i]->id, sel ? A_BOLD : A_NORMAL);
        put_clip(r->y + 1 + i, r->x + 17, r->w - 17, st, status_paint(sc, st));
        if (next < 0 && in->s && !in->ran[i]) next = i;
    }
    if (next >= 0 && in->ngates + 1 < r->h && !sc->detail_next) { /* one `next:` on the screen */
        char t[64];
        snprintf(t, sizeof t, " next: %s", kg_gates[next]->id);
        put_clip(r->y + 1 + in->ngates, r->x, r->w, t, paint(sc, P_COLD));
    }
}

static void draw_legend(const struct kg_screen *sc, const struct layout *L)
{
    const struct rect *r = &L->legend;
    struct kg_hm_view *v;
    const struct kg_hm_src *src = kg_insp_map_src(sc->in, &v);
    if (!src || r->h < 2) return;
    char lines[10][96];
    int n = kg_hm_legend(src, lines, 10, r->w - 1);
    for (int i = 0; i < n && i < r->h; i++) put_clip(r->y + i, r->x + 1, r->w - 1, lines[i], paint(sc, P_COLD));
}

/* How far the continuation of a line too long for the pane is indented: two columns past
 * the line's own indent, so that it reads as the same line (or list item) going on. */
static int hang(const char *p, int len, int width)
{
    int i = 0;
    while (i < len && p[i] == ' ') i++;
    return i + 2 < width / 2 ? i + 2 : width / 2;
}

/* Splits text into display lines of at most width columns (breaking at spaces where it can)
 * and calls line() for each; returns the number of lines. Each line of text is wrapped once,
 * here: prose comes as one line a paragraph (kg_insp_prose). */
static int wrap(const char *text, int width, void (*line)(void *ud, int k, const char *s, int n), void *ud)
{
    int k = 0;
    if (width < 8) width = 8;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        int cont = 0, indent = hang(p, len, width);
        do {
            int room = width - cont, take = len;
            if (take > room) {
                take = room;
                for (int b = room; b > room / 2; b--)
                    if (p[b] == ' ') {
                        take = b;
                        break;
                    }
            }
            char buf[1024];
            snprintf(buf, sizeof buf, "%*s%.*s", cont, "", take, p);
            line(ud, k++, buf, (int)strlen(buf));
            while (take < len && p[take] == ' ') take++;
            p += take;
            len -= take;
            cont = indent;
        } while (len > 0);
        p = nl ? nl + 1 : p;
        if (!nl) break;
    }
    return k;
}

struct detail_ctx {
    const struct kg_screen *sc;
    const struct rect *r;
    int first;
    bool draw;
};

static void detail_line(void *ud, int k, const char *s, int n)
{
    struct detail_ctx *d = ud;
    int row = k - d->first;
    if (!d->draw) return;
    if (row < 0 || row >= d->r->h - 1) return;
    attr_t a = A_NORMAL;
    if (!strncmp(s, "next:", 5))
        a = A_BOLD | paint(d->sc, P_RUN);
    else if (strstr(s, ": fail ") && k == 0)
        a = paint(d->sc, P_FAIL);
    put_clip(d->r->y + 1 + row, d->r->x + 1, d->r->w - 1, s, a);
    (void)n;
}

/* The detail pane's text: the selected gate's verdict, or the last command's output. */
static char *detail_text(const struct kg_screen *sc, char *title, size_t n)
{
    const struct kg_insp *in = sc->in;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    if (in->detail == KG_DETAIL_GATE && in->selected >= 0) { /* a gate has run only in a session */
        snprintf(title, n, " DETAIL: gate %s", kg_gates[in->selected]->id);
        kg_insp_verdict_text(in, in->selected, f);
    } else {
        snprintf(title, n, " DETAIL: %s", in->detail_title[0] ? in->detail_title : "welcome");
        fputs(sc->text ? sc->text : "", f);
    }
    fclose(f);
    return buf;
}

static void draw_detail(struct kg_screen *sc, const struct layout *L)
{
    char title[256];
    char *text = detail_text(sc, title, sizeof title);
    if (!text) return;
    /* count first: a resize or a shorter text may leave the scroll past the last full page */
    struct detail_ctx d = {sc, &L->detail, 0, false};
    int total = wrap(text, L->detail.w - 2, detail_line, &d), rows = L->detail.h - 1;
    if (sc->scroll > total - rows) sc->scroll = total - rows;
    if (sc->scroll < 0) sc->scroll = 0;
    d.first = sc->scroll;
    d.draw = true;
    wrap(text, L->detail.w - 2, detail_line, &d);
    sc->detail_next = !strncmp(text, "next:", 5) || strstr(text, "\nnext:");
    free(text);
    sc->detail_lines = total;
    sc->detail_rows = rows;
    if (total > rows) {
        size_t len = strlen(title);
        snprintf(title + len, sizeof title - len, "  [%d-%d of %d, PgUp/PgDn]", sc->scroll + 1,
                 sc->scroll + L->detail.h - 1 < total ? sc->scroll + L->detail.h - 1 : total, total);
    }
    header(&L->detail, title, A_REVERSE);
}

static void map_title(const struct kg_screen *sc, const struct kg_hm_src *src, const struct kg_hm_grid *g, char *t,
                      size_t n)
{
    const struct kg_insp *in = sc->in;
    if (src->kind == KG_HM_DIFF)
        snprintf(t, n, " REPLAY run %d vs %d: %s, %lld differ", in->diff_a, in->diff_b, src->name,
                 (long long)in->diff[in->diff_out].count);
    else
        snprintf(t, n, " HEATMAP %s", src->name);
    size_t len = strlen(t);
    kg_appendf(t, n, &len, " [");
    for (int i = 0; i < src->rank; i++) kg_appendf(t, n, &len, "%s%lld", i ? "," : "", (long long)src->dims[i]);
    kg_appendf(t, n, &len, "]  1 cell = %lldx%lld%s", (long long)g->bh, (long long)g->bw,
               g->max_zoom ? "" : " (+ zooms)");
}

/* The digits of the longest index label: a row's first index (flat, for a vector folded into
 * rows), or a column's. */
static int label_digits(const struct kg_hm_src *src)
{
    int64_t top = src->rank >= 2 ? src->dims[src->rank - 2] : src->numel;
    if (src->rank >= 2 && src->dims[src->rank - 1] > top) top = src->dims[src->rank - 1];
    char b[24];
    return snprintf(b, sizeof b, "%lld", (long long)(top > 1 ? top - 1 : 0));
}

/* The column axis above the cells: the index of a column's first element, every ten cells (or
 * further apart when the labels are long). For a folded vector it is the offset in the row. */
static void draw_axis(const struct kg_screen *sc, int y, int x0, const struct kg_hm_grid *g, const struct kg_hm_view *v,
                      int digits)
{
    int tick = digits + 1 > 10 ? (digits + 5) / 5 * 5 : 10;
    for (int x = 0; x < g->cols; x += tick) {
        char b[24];
        int n = snprintf(b, sizeof b, "%lld", (long long)((v->ox + x) * g->bw));
        put_clip(y, x0 + x, g->cols - x < n ? g->cols - x : n, b, paint(sc, P_COLD));
    }
}

static void draw_grid(struct kg_screen *sc, const struct rect *r, const struct kg_hm_src *src, struct kg_hm_view *v)
{
    struct kg_hm_grid g;
    int digits = label_digits(src), x0 = r->x + 2 + digits; /* a gutter of row labels, a space */
    if (kg_hm_layout(src, v, r->h - 3, r->w - 2 - digits, &g)) return;
    char t[256], d[400];
    map_title(sc, src, &g, t, sizeof t);
    header(r, t, A_REVERSE);
    int64_t n = g.R * g.C;
    int64_t at = g.base + (v->cur < n ? v->cur : 0);
    const struct kg_hm_cell *cc = g.cur_y >= 0 && g.cur_x >= 0 ? &g.cell[g.cur_y * g.cols + g.cur_x] : NULL;
    kg_hm_describe(src, cc && cc->worst >= 0 && !g.max_zoom ? cc->worst : at, d, sizeof d);
    put_clip(r->y + 1, r->x + 1, r->w - 1, d, A_BOLD);
    draw_axis(sc, r->y + 2, x0, &g, v, digits);
    for (int y = 0; y < g.rows; y++) {
        char b[24];
        int64_t row = (v->oy + y) * g.bh;
        snprintf(b, sizeof b, "%*lld", digits, (long long)(src->rank >= 2 ? row : row * g.C));
        put_clip(r->y + 3 + y, r->x + 1, digits, b, paint(sc, P_COLD));
        for (int x = 0; x < g.cols; x++) {
            const struct kg_hm_cell *c = &g.cell[y * g.cols + x];
            attr_t a = cell_paint(sc, c);
            if (y == g.cur_y && x == g.cur_x) a |= sc->focus == KG_FOCUS_MAP ? A_REVERSE : A_UNDERLINE;
            attron(a);
            mvaddch(r->y + 3 + y, x0 + x, (chtype)(unsigned char)kg_hm_glyph(c));
            attroff(a);
        }
    }
    kg_hm_grid_free(&g);
    sc->grid = g;
    sc->grid_valid = true;
}

static void draw_sweep(const struct kg_screen *sc, const struct rect *r)
{
    const struct kg_insp *in = sc->in;
    char t[256];
    snprintf(t, sizeof t, " SWEEP %s: error/threshold, log scale 1e-4..1e2, | = threshold", in->sweep_sym);
    header(r, t, A_REVERSE);
    int bw = r->w - 28;
    if (bw > 60) bw = 60;
    if (bw < 8) bw = 8;
    for (int i = 0; i < in->nsweep && i + 1 < r->h; i++) {
        const struct kg_sweep_row *row = &in->sweep[i];
        char bar[64], line[256];
        kg_insp_sweep_bar(row->status == KG_PASS || row->status == KG_FAIL ? row->margin : NAN, bar, bw);
        snprintf(line, sizeof line, "%7lld %-4s %s %s", (long long)row->value, kg_dtype_name(row->dtype), bar,
                 kg_status_name(row->status));
        put_clip(r->y + 1 + i, r->x + 1, r->w - 1, line, status_paint(sc, kg_status_name(row->status)));
    }
}

static void draw_map(struct kg_screen *sc, const struct layout *L)
{
    const struct rect *r = &L->map;
    struct kg_hm_view *v;
    const struct kg_hm_src *src = kg_insp_map_src(sc->in, &v);
    sc->grid_valid = false;
    if (src && r->h >= 4) {
        draw_grid(sc, r, src, v);
        return;
    }
    if (sc->in->map == KG_MAP_SWEEP) {
        draw_sweep(sc, r);
        return;
    }
    header(r, " HEATMAP", A_REVERSE);
    static const char *const empty[] = {"no map yet:", "  heatmap [OUTPUT]  every element's error, one run",
                                        "  replay N M        where determinism runs differ",
                                        "  sweep SYM LIST    error/threshold per value"};
    for (int i = 0; i < 4 && i + 1 < r->h; i++) put_clip(r->y + 1 + i, r->x + 1, r->w - 1, empty[i], paint(sc, P_COLD));
}

static void draw_cmd(const struct kg_screen *sc, const struct layout *L)
{
    const char *prompt = rl_display_prompt ? rl_display_prompt : KG_TUI_PROMPT;
    int plen = (int)strlen(prompt), avail = L->cmd.w - plen - 1;
    int start = rl_point > avail ? rl_point - avail : 0;
    move(L->cmd.y, 0);
    clrtoeol();
    put_clip(L->cmd.y, 0, L->cmd.w, prompt, sc->focus == KG_FOCUS_CMD ? A_BOLD : A_DIM);
    if (rl_line_buffer) put_clip(L->cmd.y, plen, avail, rl_line_buffer + start, A_NORMAL);
    const char *h = sc->hint[0] ? sc->hint
                    : sc->focus == KG_FOCUS_MAP
                        ? "arrows move  + - zoom  w worst  Tab: back to the command line"
                        : "Tab: complete (on an empty line: the heatmap)  PgUp/PgDn: detail  help  quit";
    move(L->hint.y, 0);
    clrtoeol();
    put_clip(L->hint.y, 0, L->hint.w, h, sc->hint_error ? paint(sc, P_FAIL) : paint(sc, P_COLD));
    if (sc->focus == KG_FOCUS_CMD) {
        curs_set(1);
        move(L->cmd.y, plen + rl_point - start);
    } else {
        curs_set(0);
    }
}

void kg_tui_draw(struct kg_screen *sc)
{
    struct layout L;
    compute_layout(sc->in, &L);
    erase();
    if (L.small) {
        mvprintw(0, 0, "kgate: the terminal is %dx%d; the inspector needs %dx%d", COLS, LINES, MIN_W, MIN_H);
        refresh();
        return;
    }
    draw_title(sc, &L);
    draw_detail(sc, &L); /* first: whether it shows a `next:` line decides the gate list's */
    draw_gates(sc, &L);
    mvvline(1, L.gates.w, ACS_VLINE, LINES - 3);
    draw_map(sc, &L);
    draw_legend(sc, &L);
    draw_cmd(sc, &L);
    refresh();
}
