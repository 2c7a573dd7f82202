/* views.c: the commands that look inside one run: `heatmap` (every element's error, in the
 * case a failing gate ran or the current one), `replay N M` (where two recorded runs of the
 * determinism gate differ) and `sweep` (error/threshold over the values of one symbol). The
 * REPL gets each printed; the full screen draws the map they leave (kg_insp_map_src). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tui/inspector.h"

#define REPL_MAP_ROWS 16
#define REPL_MAP_COLS 64
#define SWEEP_BAR     24

static int view_case(struct kg_insp *in, struct kg_case *k, FILE *out)
{
    if (in->have_view_case) {
        *k = in->view_case;
        return 0;
    }
    return kg_insp_current_case(in, k, out);
}

static int ensure_inspection(struct kg_insp *in, FILE *out)
{
    struct kg_case k;
    struct kg_err e;
    if (in->have_insp) return 0;
    if (view_case(in, &k, out)) return -1;
    if (kg_inspect_run(in->s, &k, &in->insp, &e)) {
        fprintf(out, "%s\n", e.msg);
        return -1;
    }
    in->have_insp = true;
    if (in->insp.status != KG_WS_OK) {
        char id[KG_CASE_ID_MAX];
        kg_case_id(&k, id, sizeof id);
        if (in->insp.status != KG_WS_INTERRUPTED) /* the dispatcher says that one */
            fprintf(out, "the run of %s did not finish: %s: %s\n", id,
                    kg_wstatus_name((enum kg_wstatus)in->insp.status), in->insp.msg);
        kg_inspection_free(&in->insp);
        in->have_insp = false;
        return -1;
    }
    return 0;
}

static int parse_slice(const char *text, int64_t *lead, int max)
{
    int n = 0;
    const char *p = text;
    while (*p && n < max) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0) return -1;
        lead[n++] = v;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return n;
}

static int find_output(const struct kg_insp *in, const char *name, FILE *out)
{
    for (int j = 0; j < in->insp.nout; j++)
        if (!strcmp(in->insp.out[j].name, name)) return j;
    fprintf(out, "no output '%s' (outputs:", name);
    for (int j = 0; j < in->insp.nout; j++) fprintf(out, " %s", in->insp.out[j].name);
    fprintf(out, ")\n");
    return -1;
}

static const char *default_output(const struct kg_insp *in)
{
    int i = in->selected;
    if (i >= 0 && in->ran[i] && in->v[i].ev.valid && kg_insp_is_output(kg_session_contract(in->s), in->v[i].ev.output))
        return in->v[i].ev.output;
    return in->insp.nout ? in->insp.out[0].name : "";
}

static void heatmap_summary(const struct kg_insp *in, const struct kg_inspect_out *o, FILE *out)
{
    int64_t above = 0;
    for (int64_t i = 0; i < o->numel; i++)
        if (kg_hm_level(o->err[i], o->threshold) >= KG_HM_FAIL_LEVEL) above++;
    char id[KG_CASE_ID_MAX];
    kg_case_id(&in->insp.k, id, sizeof id);
    fprintf(out, "heatmap of %s: one run of %s (%s)\n", o->name, id,
            in->have_view_case ? in->view_origin : "current case");
    fprintf(out, "%s: %s; %lld of %lld elements above the threshold %.3g, %lld non-finite mismatches\n", o->name,
            o->pass ? "within the threshold" : "FAILS", (long long)above, (long long)o->numel, o->threshold,
            (long long)o->nonfinite_mismatch);
}

int kg_insp_cmd_heatmap(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    if (argc > 3) {
        fprintf(out, "usage: heatmap [OUTPUT] [I,J,...]   (the slice: leading indices of a rank > 2 output)\n");
        return -1;
    }
    if (ensure_inspection(in, out)) return -1;
    const char *name = default_output(in), *slice = NULL;
    for (int a = 1; a < argc; a++) {
        if ((argv[a][0] >= '0' && argv[a][0] <= '9') || strchr(argv[a], ','))
            slice = argv[a];
        else
            name = argv[a];
    }
    int j = find_output(in, name, out);
    if (j < 0) return -1;
    in->hm_out = j;
    kg_hm_from_inspection(&in->hm, &in->insp.out[j]);
    memset(&in->view, 0, sizeof in->view);
    if (slice) {
        int64_t lead[KG_MAX_RANK];
        int n = parse_slice(slice, lead, KG_MAX_RANK);
        char why[256];
        if (n < 0) {
            fprintf(out, "heatmap: '%s' is not a slice (leading indices like 0,1)\n", slice);
            return -1;
        }
        if (kg_hm_set_slice(&in->hm, &in->view, lead, n, why, sizeof why)) {
            fprintf(out, "heatmap: %s\n", why);
            return -1;
        }
        kg_hm_goto_worst(&in->hm, &in->view, true);
    } else {
        kg_hm_goto_worst(&in->hm, &in->view, false);
    }
    in->map = KG_MAP_ERRORS;
    heatmap_summary(in, &in->insp.out[j], out);
    if (!in->fullscreen) {
        kg_hm_print(out, &in->hm, &in->view, REPL_MAP_ROWS, REPL_MAP_COLS);
    } else {
        char d[400];
        kg_hm_describe(&in->hm, kg_hm_worst(&in->hm, NULL), d, sizeof d);
        fprintf(out, "worst: %s\nTab on an empty line: move the cursor (arrows), zoom (+ -), w: worst\n", d);
    }
    return 0;
}

/* ---- replay -------------------------------------------------------------------------------- */

static void diff_line(const struct kg_insp *in, const struct kg_diffmap *d, FILE *out)
{
    struct kg_hm_src src;
    kg_hm_from_diff(&src, d);
    if (!d->count) {
        fprintf(out, "  %s: bit-identical (0 of %lld positions differ)\n", d->name, (long long)d->numel);
        return;
    }
    char a[128], f[128];
    kg_hm_index(&src, d->largest_at, a, sizeof a);
    kg_hm_index(&src, d->first, f, sizeof f);
    char va[40], vb[40];
    fprintf(out, "  %s: %lld of %lld positions differ; largest difference %.3g at %s (%s vs %s); first at %s\n",
            d->name, (long long)d->count, (long long)d->numel, d->largest, a,
            kg_hm_num(d->a[d->largest_at], 9, va, sizeof va), kg_hm_num(d->b[d->largest_at], 9, vb, sizeof vb), f);
    (void)in;
}

int kg_insp_cmd_replay(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    char *e1 = NULL, *e2 = NULL;
    long a = argc == 3 ? strtol(argv[1], &e1, 10) : 0, b = argc == 3 ? strtol(argv[2], &e2, 10) : 0;
    if (argc != 3 || *e1 || *e2 || e1 == argv[1] || e2 == argv[2]) {
        fprintf(out, "usage: replay N M   (two runs of the determinism gate, numbered from 1)\n");
        return -1;
    }
    for (int j = 0; j < in->ndiff; j++) kg_diffmap_free(&in->diff[j]);
    in->ndiff = 0;
    struct kg_err e;
    for (int j = 0; j < KG_OP_MAX_IO; j++) {
        if (kg_inspect_replay(in->s, (int)a, (int)b, j, &in->diff[j], &e)) {
            if (j == 0) {
                fprintf(out, "%s\n", e.msg);
                return -1;
            }
            break;
        }
        in->ndiff = j + 1;
    }
    char id[KG_CASE_ID_MAX];
    const struct kg_case *rk;
    kg_records(in->s, &rk);
    kg_case_id(rk, id, sizeof id);
    fprintf(out, "replay: run %ld vs run %ld of the determinism gate (%s)\n", a, b, id);
    in->diff_out = 0;
    for (int j = 0; j < in->ndiff; j++) {
        diff_line(in, &in->diff[j], out);
        if (in->diff[j].count && !in->diff[in->diff_out].count) in->diff_out = j;
    }
    in->diff_a = (int)a;
    in->diff_b = (int)b;
    kg_hm_from_diff(&in->dsrc, &in->diff[in->diff_out]);
    memset(&in->dview, 0, sizeof in->dview);
    if (in->diff[in->diff_out].first >= 0) in->dview.cur = in->diff[in->diff_out].first;
    if (in->dsrc.rank > 2) kg_hm_goto_worst(&in->dsrc, &in->dview, false);
    in->map = KG_MAP_DIFF;
    if (!in->fullscreen) kg_hm_print(out, &in->dsrc, &in->dview, REPL_MAP_ROWS, REPL_MAP_COLS);
    return 0;
}

/* ---- sweep --------------------------------------------------------------------------------- */

void kg_insp_sweep_bar(double margin, char *buf, int width)
{
    int thr = width * 2 / 3; /* 1e-4 .. 1 takes two thirds, 1 .. 1e2 the rest */
    double per_decade = thr / 4.0;
    int fill = 0;
    if (isnan(margin))
        fill = -1;
    else if (margin > 0)
        fill = (int)ceil((log10(margin) + 4) * per_decade);
    if (fill > width) fill = width;
    for (int i = 0; i < width; i++) buf[i] = i < fill ? (i < thr ? '#' : '!') : ' ';
    if (buf[thr] == ' ') buf[thr] = '|';
    if (fill < 0) memcpy(buf, "?", 1);
    if (isinf(margin) && width > 0) buf[width - 1] = '>';
    buf[width] = 0;
}

/* One row of the table; the bar only where no pane plots it. */
static void sweep_row(const struct kg_sweep_row *r, bool bar, FILE *out)
{
    fprintf(out, "  %7lld %-5s %-7s ", (long long)r->value, kg_dtype_name(r->dtype), kg_status_name(r->status));
    if (r->status != KG_PASS && r->status != KG_FAIL) {
        fprintf(out, "%s\n", r->summary);
        return;
    }
    fprintf(out, "%-9.3g %-9.3g %-9.3g", r->margin, r->err, r->threshold);
    char b[SWEEP_BAR + 1];
    kg_insp_sweep_bar(r->margin, b, SWEEP_BAR);
    fprintf(out, bar ? " %s\n" : "\n", b);
}

int kg_insp_cmd_sweep(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    if (argc < 3) {
        fprintf(out, "usage: sweep SYMBOL LIST   (LIST: 1,7,255 or a..b*2 or a..b+s)\n");
        return -1;
    }
    char text[512] = "";
    size_t len = 0;
    for (int i = 2; i < argc; i++) kg_appendf(text, sizeof text, &len, "%s%s", i > 2 ? "," : "", argv[i]);
    int64_t values[64];
    struct kg_err e;
    int nv = kg_sweep_parse(text, values, 64, &e);
    if (nv < 0) {
        fprintf(out, "%s\n", e.msg);
        return -1;
    }
    int n = kg_inspect_sweep(in->s, argv[1], values, nv, in->sweep, KG_INSP_MAX_SWEEP, &e);
    if (n < 0) {
        fprintf(out, "%s\n", e.msg);
        return -1;
    }
    in->nsweep = n;
    kg_strlcpy(in->sweep_sym, argv[1], sizeof in->sweep_sym);
    fprintf(out, "sweep %s over %s (other symbols as the current case; seed %llu):\n", argv[1], text,
            (unsigned long long)kg_session_opts(in->s)->seed);
    fprintf(out, "  %7s %-5s %-7s %-9s %-9s %-9s%s\n", argv[1], "dtype", "status", "err/thr", "error", "threshold",
            in->fullscreen ? "" : " 1e-4    1e-2    1x    100x");
    for (int i = 0; i < n; i++) sweep_row(&in->sweep[i], !in->fullscreen, out);
    if (!in->fullscreen) fprintf(out, "bar: err/threshold on a log scale, '|' the threshold, '!' above it\n");
    in->map = KG_MAP_SWEEP;
    return 0;
}

/* ---- save, help, quit ------------------------------------------------------------------------ */
/* ---- the map the lower pane shows ---------------------------------------------------------- */

const struct kg_hm_src *kg_insp_map_src(const struct kg_insp *in, struct kg_hm_view **view)
{
    struct kg_insp *w = (struct kg_insp *)in;
    if (in->map == KG_MAP_ERRORS && in->have_insp) {
        *view = &w->view;
        return &in->hm;
    }
    if (in->map == KG_MAP_DIFF && in->ndiff) {
        *view = &w->dview;
        return &in->dsrc;
    }
    return NULL;
}
