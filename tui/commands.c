/* commands.c: the inspector's command language. Each command calls the engine (sessions,
 * gates, inspect.h) and writes its result, or a clear error, as plain text; the REPL prints
 * that text and the full screen shows it in its panes. The command table below is the one
 * place commands are listed (`help` and tab completion are generated from it); this file
 * holds the dispatcher and the commands about the kernel and its gates, show.c those about
 * the current case, views.c those that look inside one run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "contract/builtin.h"
#include "tui/inspector.h"
#include "engine/report.h"

#define MAX_ARGS 16

struct cmd {
    const char *name, *args, *help;
    int (*fn)(struct kg_insp *in, int argc, char **argv, FILE *out);
    bool needs_kernel;
};

static const struct cmd cmds[];

/* ---- gates by id, and the session's progress ----------------------------------------------- */

static int gate_index(const char *id)
{
    for (int i = 0; kg_gates[i]; i++)
        if (!strcmp(kg_gates[i]->id, id)) return i;
    return -1;
}

static void progress(void *ud, const char *gate, const char *what)
{
    struct kg_insp *in = ud;
    in->running = strcmp(what, "running") ? -1 : gate_index(gate);
    if (in->on_progress) in->on_progress(in, gate, what);
}

static bool stop_asked(void *ud)
{
    const struct kg_insp *in = ud;
    return in->interrupted && *in->interrupted;
}

/* ---- load ------------------------------------------------------------------------------------ */

static void describe_kernel(const struct kg_insp *in, FILE *out)
{
    const struct kg_session *s = in->s;
    const struct kg_contract *c = kg_session_contract(s);
    const char *cc = kg_session_last_load(s)->compiler;
    fprintf(out, "loaded %s from %s (%s runner, %s%s)\n", c->name, c->path, kg_session_runner(s),
            cc[0] ? "compiled by " : "not compiled", cc);
    fprintf(out, "  op %s, entry %s, %d args\n", c->has_op ? c->op_text : c->oracle_func, c->entry, c->nargs);
    const char *why = kg_session_cannot_run(s);
    if (why) fprintf(out, "  %s (show, explain and the contract work; run needs the runner)\n", why);
}

int kg_insp_load(struct kg_insp *in, const char *path, FILE *out)
{
    char buf[4096];
    const char *real = path;
    struct kg_err e;
    if (!strncmp(path, "builtin:", 8)) {
        if (kg_builtin_path(path + 8, KG_BUILTIN_AUTO, buf, sizeof buf, &e)) goto fail;
        real = buf;
    }
    struct kg_session_opts o;
    kg_session_opts_default(&o);
    o.progress = progress;
    o.progress_ud = in;
    o.interrupted = stop_asked;
    o.interrupted_ud = in;
    o.open_unrunnable = true; /* a .cu without a GPU still shows its contract and cases */
    o.keep_runs = true;       /* `replay N M` diffs the determinism gate's runs */
    struct kg_session *s;
    if (kg_session_open(&s, real, &o, &e) != KG_EXIT_OK) goto fail;
    kg_insp_drop_kernel(in);
    in->s = s;
    in->load_error[0] = 0;
    kg_strlcpy(in->path, path, sizeof in->path);
    describe_kernel(in, out);
    fprintf(out, "next: run all   (or: gates, show case, help)\n");
    in->detail = KG_DETAIL_TEXT;
    return 0;
fail:
    kg_strlcpy(in->load_error, e.msg, sizeof in->load_error);
    fprintf(out, "%s\n", e.msg);
    if (in->s) fprintf(out, "(still loaded: %s)\n", kg_session_contract(in->s)->path);
    in->detail = KG_DETAIL_TEXT;
    snprintf(in->detail_title, sizeof in->detail_title, "load failed");
    return -1;
}

static int cmd_load(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    if (argc != 2) {
        fprintf(out, "usage: load FILE   (a .c or .cu kernel file, or builtin:NAME; help lists the builtins)\n");
        return -1;
    }
    return kg_insp_load(in, argv[1], out);
}

/* ---- gates ----------------------------------------------------------------------------------- */

const char *kg_insp_gate_status(const struct kg_insp *in, int i)
{
    if (in->running == i) return "running";
    return in->ran[i] ? kg_status_name(in->v[i].status) : "-";
}

static int cmd_gates(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    (void)argc;
    (void)argv;
    int next = -1;
    for (int i = 0; i < in->ngates; i++) {
        const struct kg_gate *g = kg_gates[i];
        fprintf(out, "  %-16s %-3s %-7s %s\n", g->id, g->tolerance_free ? "tf" : "cal", kg_insp_gate_status(in, i),
                in->ran[i] ? in->v[i].summary : g->title);
        if (!in->ran[i] && next < 0) next = i;
    }
    fprintf(out, "tf: tolerance-free, cal: calibrated threshold; ");
    if (next >= 0)
        fprintf(out, "next not run: %s (next, or run all)\n", kg_gates[next]->id);
    else
        fprintf(out, "every gate has run\n");
    return 0;
}

/* The run of the determinism gate that first differed from run 1, from its evidence. */
static int first_differing_run(const struct kg_verdict *v)
{
    json_t *runs = v->extra ? json_object_get(v->extra, "runs") : NULL;
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r)
    {
        if (json_integer_value(json_object_get(r, "differing")) > 0)
            return (int)json_integer_value(json_object_get(r, "run"));
    }
    return 2;
}

void kg_insp_next_step(const struct kg_insp *in, int i, char *buf, size_t n)
{
    const struct kg_verdict *v = &in->v[i];
    buf[0] = 0;
    if (!in->ran[i] || (v->status != KG_FAIL && v->status != KG_ERROR)) return;
    if (!strcmp(v->gate->id, "determinism") && v->status == KG_FAIL && kg_records(in->s, NULL) >= 2)
        snprintf(buf, n, "replay 1 %d   (where the runs differ)", first_differing_run(v));
    else if (v->cause == KG_CAUSE_OOB_WRITE && v->extra && json_object_get(v->extra, "changed"))
        snprintf(buf, n, "show guards   (which guard bytes changed, and to what)");
    else if (v->ev.valid && kg_insp_is_output(kg_session_contract(in->s), v->ev.output) && v->status == KG_FAIL)
        snprintf(buf, n, "heatmap %s   (every element's error in this case)", v->ev.output);
    else
        snprintf(buf, n, "explain %s   (what it checks and the usual causes)", v->gate->id);
}

static void verdict_evidence(const struct kg_verdict *v, FILE *out)
{
    const struct kg_evidence *ev = &v->ev;
    char a[40], b[40];
    if (!ev->valid) return;
    fprintf(out, "evidence: %s%s%s got %s, expected %s", ev->output, ev->index[0] == '[' ? "" : " ", ev->index,
            ev->unwritten ? "unwritten" : kg_hm_num(ev->got, 9, a, sizeof a), kg_hm_num(ev->expected, 9, b, sizeof b));
    if (ev->err != 0 || ev->threshold > 0) fprintf(out, ", error %.3g", ev->err);
    if (ev->threshold > 0) fprintf(out, " (threshold %.3g, reference error %.3g)", ev->threshold, ev->ref_err);
    fprintf(out, "\n");
    if (ev->case_id[0]) fprintf(out, "  case: %s\n", ev->case_id);
}

/* with_next: the `next:` line too (only the selected gate's is shown: its case is the heatmap's) */
static void verdict_text(const struct kg_insp *in, int i, bool with_next, FILE *out)
{
    const struct kg_gate *g = kg_gates[i];
    if (!in->ran[i]) {
        fprintf(out, "%s: not run yet (run %s)\n  %s\n", g->id, g->id, g->title);
        return;
    }
    const struct kg_verdict *v = &in->v[i];
    char same[KG_NAME_MAX + 32] = "";
    if ((v->status == KG_FAIL || v->status == KG_ERROR) && v->same_as >= 0 && v->same_as < in->ngates)
        snprintf(same, sizeof same, " (same cause as %s)", kg_gates[v->same_as]->id);
    fprintf(out, "%s: %s%s   (%s; %d case%s, %.2f s)\n", g->id, kg_status_name(v->status), same,
            g->tolerance_free ? "tolerance-free" : "calibrated", v->ncases, v->ncases == 1 ? "" : "s", v->seconds);
    fprintf(out, "  %s\n", v->summary);
    if (kg_verdict_failed(v))
        fprintf(out, "cause: %s: %s   (explain %s)\n", kg_verdict_cause_id(v), kg_verdict_cause_line(v),
                kg_verdict_cause_id(v));
    const json_t *lines = v->extra ? json_object_get(v->extra, "lines") : NULL;
    size_t li;
    json_t *line;
    json_array_foreach(lines, li, line)
    {
        fprintf(out, "  %s\n", json_string_value(line));
    }
    char next[160];
    kg_insp_next_step(in, i, next, sizeof next);
    if (next[0] && with_next) fprintf(out, "next: %s\n", next);
    if (v->status != KG_PASS || v->ev.valid) verdict_evidence(v, out);
    if (v->ratio != 0 && v->status != KG_PASS) fprintf(out, "  error ratio: %.3g x the reference's\n", v->ratio);
    if (v->detail[0] && v->status != KG_PASS) fprintf(out, "%s\n", v->detail);
    if (v->replay[0] && v->status != KG_PASS) fprintf(out, "replay: %s\n", v->replay);
}

void kg_insp_verdict_text(const struct kg_insp *in, int i, FILE *out)
{
    verdict_text(in, i, true, out);
}

/* A failing gate's case becomes the heatmap's, so `heatmap OUTPUT` shows what failed. */
static void adopt_case_of(struct kg_insp *in, int i)
{
    const struct kg_verdict *v = &in->v[i];
    struct kg_case k;
    struct kg_err e;
    if (!in->ran[i] || v->status != KG_FAIL || !v->ev.valid || !v->ev.case_id[0]) return;
    if (kg_case_from_id(kg_session_contract(in->s), v->ev.case_id, &k, &e)) return;
    in->view_case = k;
    in->have_view_case = true;
    snprintf(in->view_origin, sizeof in->view_origin, "the case %s failed", v->gate->id);
    if (in->have_insp) kg_inspection_free(&in->insp);
    in->have_insp = false;
}

void kg_insp_select(struct kg_insp *in, int i)
{
    in->selected = i;
    in->detail = KG_DETAIL_GATE;
    adopt_case_of(in, i);
}

/* An interrupted gate decided nothing: it stays "not run" (its old verdict is gone). */
static void run_gate(struct kg_insp *in, int i, FILE *out)
{
    if (in->ran[i]) kg_verdict_clear(&in->v[i]);
    in->ran[i] = false;
    kg_session_run_gate(in->s, kg_gates[i], &in->v[i]);
    in->running = -1;
    if (in->v[i].wstatus == KG_WS_INTERRUPTED) {
        kg_verdict_clear(&in->v[i]);
        fprintf(out, "  %-16s %-7s no verdict: stopped by Ctrl-C (run %s again)\n", kg_gates[i]->id, "-",
                kg_gates[i]->id);
    } else {
        in->ran[i] = true;
        fprintf(out, "  %-16s %-7s %s\n", kg_gates[i]->id, kg_status_name(in->v[i].status), in->v[i].summary);
    }
    fflush(out);
}

/* One defect, one report: the verdicts run so far grouped by cause (same_as indexes in->v). */
static void group_ran(struct kg_insp *in)
{
    struct kg_verdict tmp[KG_MAX_GATES];
    int idx[KG_MAX_GATES], n = 0;
    for (int i = 0; i < in->ngates; i++) {
        in->v[i].same_as = -1;
        if (in->ran[i]) idx[n] = i, tmp[n++] = in->v[i];
    }
    kg_group_causes(tmp, n);
    for (int q = 0; q < n; q++) in->v[idx[q]].same_as = tmp[q].same_as >= 0 ? idx[tmp[q].same_as] : -1;
}

static void overall_line(const struct kg_insp *in, FILE *out)
{
    struct kg_verdict tmp[KG_MAX_GATES];
    int n = 0, count[5] = {0};
    for (int i = 0; i < in->ngates; i++)
        if (in->ran[i]) {
            tmp[n++] = in->v[i];
            count[in->v[i].status]++;
        }
    if (!n) { /* nothing checked is not a pass */
        fprintf(out, "verdict so far: none (0 of %d gates run)\n", in->ngates);
        return;
    }
    fprintf(out, "verdict so far: %s (", kg_overall_name(kg_overall(tmp, n)));
    const char *sep = "";
    for (int st = 0; st < 5; st++)
        if (count[st]) {
            fprintf(out, "%s%d %s", sep, count[st], kg_status_name((enum kg_status)st));
            sep = ", ";
        }
    fprintf(out, "; %d of %d gates run)\n", n, in->ngates);
}

/* Runs gates[from..to) in order, then shows the first failure of the batch. */
static int run_batch(struct kg_insp *in, const int *which, int n, FILE *out)
{
    int first_bad = -1, last = -1;
    struct kg_err e;
    if (kg_inspect_current_fits(in->s, -1, &e)) {
        fprintf(out, "run refused, no gate was run: %s\n", e.msg);
        return -1;
    }
    for (int q = 0; q < n && !stop_asked(in); q++) {
        run_gate(in, which[q], out);
        if (!in->ran[which[q]]) break;
        last = which[q];
        enum kg_status st = in->v[last].status;
        if (first_bad < 0 && (st == KG_FAIL || st == KG_ERROR)) first_bad = last;
    }
    group_ran(in);
    overall_line(in, out);
    for (int q = 0; q < n; q++) {
        int i = which[q];
        if (!in->ran[i] || (in->v[i].status != KG_FAIL && in->v[i].status != KG_ERROR)) continue;
        fprintf(out, "\n");
        verdict_text(in, i, i == first_bad, out);
    }
    if (first_bad >= 0 || last >= 0) kg_insp_select(in, first_bad >= 0 ? first_bad : last);
    return 0;
}

static int cmd_run(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    if (argc != 2) {
        fprintf(out, "usage: run GATE|all   (gates lists the gates)\n");
        return -1;
    }
    int which[KG_MAX_GATES], n = 0;
    if (!strcmp(argv[1], "all")) {
        for (int i = 0; i < in->ngates; i++) which[n++] = i;
    } else if ((which[0] = gate_index(argv[1])) >= 0) {
        n = 1;
    } else {
        fprintf(out, "no gate '%s' (gates lists them)\n", argv[1]);
        return -1;
    }
    return run_batch(in, which, n, out);
}

static int cmd_next(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    (void)argc;
    (void)argv;
    for (int i = 0; i < in->ngates; i++)
        if (!in->ran[i]) return run_batch(in, &i, 1, out);
    fprintf(out, "every gate has run (run GATE runs one again)\n");
    return 0;
}

static int cmd_explain(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    int i = argc >= 2 ? gate_index(argv[1]) : in->selected;
    enum kg_cause cause = argc >= 2 && i < 0 ? kg_cause_find(argv[1]) : KG_CAUSE_NONE;
    if (cause != KG_CAUSE_NONE && cause != KG_CAUSE_GATE) {
        const struct kg_cause_def *d = kg_cause_def(cause);
        fprintf(out, "%s (cause): %s\n%s\n", d->id, d->title, d->explain);
        return 0;
    }
    if (argc >= 2 && i < 0) {
        fprintf(out, "no gate or cause '%s' (gates lists the gates; a failure's cause: line names its cause)\n",
                argv[1]);
        return -1;
    }
    if (i < 0) {
        fprintf(out, "usage: explain GATE   (gates lists them)\n");
        return -1;
    }
    const struct kg_gate *g = kg_gates[i];
    fprintf(out, "%s: %s (%s%s)\n", g->id, g->title, g->tolerance_free ? "tolerance-free" : "calibrated",
            g->needs_gpu ? ", GPU only" : "");
    kg_insp_prose(in, g->explain, out);
    if (in->s && in->ran[i]) {
        fprintf(out, "\nhere: ");
        kg_insp_verdict_text(in, i, out);
        in->selected = i;
        adopt_case_of(in, i);
    }
    return 0;
}

/* ---- heatmap ------------------------------------------------------------------------------- */

static int cmd_save(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    if (argc != 2) {
        fprintf(out, "usage: save FILE.json\n");
        return -1;
    }
    struct kg_verdict tmp[KG_MAX_GATES];
    int n = 0;
    for (int i = 0; i < in->ngates; i++)
        if (in->ran[i]) tmp[n++] = in->v[i];
    if (!n) {
        fprintf(out, "nothing to save: no gate has run yet (run all)\n");
        return -1;
    }
    json_t *doc = kg_report_json(in->s, tmp, n, NULL);
    int bad = json_dump_file(doc, argv[1], JSON_INDENT(2) | JSON_ENSURE_ASCII);
    json_decref(doc);
    if (bad) {
        fprintf(out, "cannot write %s: %s\n", argv[1], strerror(errno));
        return -1;
    }
    fprintf(out, "saved %d verdict%s of %s to %s (verdict %s)\n", n, n == 1 ? "" : "s",
            kg_session_contract(in->s)->name, argv[1], kg_overall_name(kg_overall(tmp, n)));
    return 0;
}

static int cmd_help(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    (void)argc;
    (void)argv;
    fprintf(out, "commands (Tab completes, %s recall history):\n", in->fullscreen ? "Ctrl-P/Ctrl-N" : "Up/Down");
    for (const struct cmd *c = cmds; c->name; c++) {
        char left[40];
        snprintf(left, sizeof left, "%s %s", c->name, c->args);
        fprintf(out, "  %-26s %s\n", left, c->help);
    }
    fprintf(out, "  %-26s %s\n", "GATE", "a gate id alone selects the gate: its verdict");
    fprintf(out, "builtins:");
    for (const struct kg_builtin *b = kg_builtins; b->name; b++) fprintf(out, " builtin:%s", b->file);
    fprintf(out, "\nstart: load FILE, run all, then type the 'next:' line a failing gate shows.\n"
                 "Ctrl-C stops a running command (and at the prompt, leaves).\n");
    if (in->fullscreen)
        kg_insp_prose(in,
                      "keys: Up/Down or j/k on an empty line select a gate (its verdict shows here; with\n"
                      "text on the line they recall history); Tab on an empty line moves to the heatmap\n"
                      "(arrows, + -, w: worst, Tab back); PgUp/PgDn scroll this pane; Ctrl-L redraws.",
                      out);
    return 0;
}

static int cmd_quit(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    (void)argc;
    (void)argv;
    (void)out;
    in->quit = true;
    return 0;
}

static const struct cmd cmds[] = {
    {"load", "FILE", "load a kernel (.c, .cu, or builtin:NAME)", cmd_load, false},
    {"run", "GATE|all", "run one gate, or all twelve in order", cmd_run, true},
    {"next", "", "run the next gate not yet run", cmd_next, true},
    {"gates", "", "the gates and their status", cmd_gates, false},
    {"explain", "GATE|CAUSE", "what a gate checks (its verdict here), or a cause", cmd_explain, false},
    {"heatmap", "[OUTPUT] [I,J]", "error of every element of one run", kg_insp_cmd_heatmap, true},
    {"replay", "N M", "where determinism runs N and M differ", kg_insp_cmd_replay, true},
    {"sweep", "SYM LIST|a..b*2", "error/threshold for each value", kg_insp_cmd_sweep, true},
    {"show", "case|inputs|guards", "the case; its inputs [NAME] [INDEX]; bounds' bytes", kg_insp_cmd_show, true},
    {"set", "SYM=VALUE", "pin a shape symbol", kg_insp_cmd_set, true},
    {"dtype", "f32|f16|bf16", "pin the instance dtype", kg_insp_cmd_dtype, true},
    {"seed", "N", "the base seed of the inputs", kg_insp_cmd_seed, true},
    {"dist", "NAME|auto", "pin the input distribution", kg_insp_cmd_dist, true},
    {"resources", "", "registers, shared memory, occupancy (GPU)", kg_insp_cmd_resources, true},
    {"save", "FILE.json", "write the report of the gates run so far", cmd_save, true},
    {"hint", "", "the lab lesson's next hint (kgate lab N)", kg_insp_cmd_hint, false},
    {"lesson", "", "the lab lesson's brief again", kg_insp_cmd_lesson, false},
    {"help", "", "this list", cmd_help, false},
    {"quit", "", "leave (also Ctrl-D)", cmd_quit, false},
    {NULL, NULL, NULL, NULL, false},
};

/* ---- dispatch ------------------------------------------------------------------------------ */

static int split(char *line, char **argv, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && n < max; t = strtok_r(NULL, " \t\r\n", &save)) argv[n++] = t;
    return n;
}

/* A gate id typed alone selects the gate, as the arrow keys do, and shows its verdict. */
static int select_by_id(struct kg_insp *in, int i, int argc, FILE *out)
{
    if (argc > 1) {
        fprintf(out, "a gate id alone selects the gate; it takes no arguments (run %s runs it)\n", kg_gates[i]->id);
        return -1;
    }
    kg_insp_select(in, i);
    snprintf(in->detail_title, sizeof in->detail_title, "gate %s", kg_gates[i]->id);
    kg_insp_verdict_text(in, i, out);
    return 0;
}

int kg_insp_exec(struct kg_insp *in, const char *line, FILE *out)
{
    char buf[4096];
    char *argv[MAX_ARGS];
    kg_strlcpy(buf, line, sizeof buf);
    int argc = split(buf, argv, MAX_ARGS);
    if (!argc || argv[0][0] == '#') return 0;
    for (const struct cmd *c = cmds; c->name; c++) {
        if (strcmp(c->name, argv[0])) continue;
        if (c->needs_kernel && !in->s) {
            fprintf(out, "no kernel loaded: load FILE first (or load builtin:softmax_rows)\n");
            if (in->load_error[0]) fprintf(out, "the last load failed: %s\n", in->load_error);
            return -1;
        }
        snprintf(in->detail_title, sizeof in->detail_title, "%s", line);
        int rc = c->fn(in, argc, argv, out);
        if (stop_asked(in)) {
            fprintf(out, "interrupted: '%s' stopped (Ctrl-C); what had finished is kept\n", line);
            rc = -1;
        }
        return rc;
    }
    int g = gate_index(argv[0]);
    if (g >= 0) return select_by_id(in, g, argc, out);
    fprintf(out, "unknown command '%s' (help lists them)\n", argv[0]);
    return -1;
}

/* ---- completion ---------------------------------------------------------------------------- */

static bool complete_arg(const struct kg_insp *in, const char *cmd, int argi, void (*add)(void *, const char *),
                         void *ud)
{
    const struct kg_contract *c = in->s ? kg_session_contract(in->s) : NULL;
    char w[KG_NAME_MAX + 2];
    if ((!strcmp(cmd, "run") || !strcmp(cmd, "explain")) && argi == 1) {
        for (int i = 0; kg_gates[i]; i++) add(ud, kg_gates[i]->id);
        if (!strcmp(cmd, "run")) add(ud, "all");
        for (int c2 = KG_CAUSE_GATE + 1; !strcmp(cmd, "explain") && c2 < KG_NCAUSES; c2++)
            add(ud, kg_cause_def((enum kg_cause)c2)->id);
    } else if (!strcmp(cmd, "show") && argi == 1) {
        add(ud, "case");
        add(ud, "inputs");
        add(ud, "guards");
    } else if (!strcmp(cmd, "dist") && argi == 1) {
        for (int d = 0; d < KG_DIST_COUNT; d++) add(ud, kg_dist_name((enum kg_dist)d));
        add(ud, "auto");
    } else if (!strcmp(cmd, "dtype") && argi == 1) {
        for (int i = 0; c && i < c->ndtypes; i++) add(ud, kg_dtype_name(c->dtypes[i]));
        if (!c || !c->ndtypes) add(ud, "f32"), add(ud, "f16"), add(ud, "bf16");
    } else if ((!strcmp(cmd, "set") || !strcmp(cmd, "sweep")) && argi == 1 && c) {
        for (int i = 0; i < c->nsyms; i++) {
            snprintf(w, sizeof w, "%s%s", c->sym[i], strcmp(cmd, "set") ? "" : "=");
            add(ud, w);
        }
    } else if (!strcmp(cmd, "heatmap") && argi == 1 && c) {
        for (int i = 0; i < c->nargs; i++)
            if (kg_arg_is_output(&c->args[i])) add(ud, c->args[i].name);
    }
    return true;
}

bool kg_insp_complete(const struct kg_insp *in, const char *cmd, int argi, const char *text,
                      void (*add)(void *ud, const char *w), void *ud)
{
    if (argi == 0) {
        for (const struct cmd *c = cmds; c->name; c++) add(ud, c->name);
        for (int i = 0; kg_gates[i]; i++) add(ud, kg_gates[i]->id);
        return true;
    }
    if (!strcmp(cmd, "load") && argi == 1 && text[0] &&
        !strncmp(text, "builtin:", strlen(text) < 8 ? strlen(text) : 8)) {
        char w[128];
        for (const struct kg_builtin *b = kg_builtins; b->name; b++) {
            snprintf(w, sizeof w, "builtin:%s", b->file);
            add(ud, w);
        }
        return true;
    }
    if ((!strcmp(cmd, "load") || !strcmp(cmd, "save")) && argi == 1) return false;
    return complete_arg(in, cmd, argi, add, ud);
}
