/* report.c: `kgate report STORE`: the figures that defend an audit, in Markdown and JSON,
 * with plots drawn by gnuplot: the share of kernels with a violation, the share failing a
 * tolerance-free gate, the rate per gate, the confusion table against the standard test, a
 * calibration sweep over k (calibrated gates re-judged from the errors the store recorded;
 * tolerance-free rates do not move), the rates with and without the failures that are TF32's
 * alone, and a stratified random sample for hand audit. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/audit.h"
#include "audit/store.h"
#include "base/cache.h"
#include "gates/gate.h"
#include "base/rng.h"

static const double ks[] = {1, 2, 4, 8, 16, 64, 256};
#define NK (int)(sizeof ks / sizeof *ks)

struct gate_stat {
    const char *id;
    bool tf;
    int pass, fail, error, skip, refused;
    int fail_at_k[NK], judged_at_k;
};

/* The rates once TF32 is accepted (`--allow tf32`): records whose only causes are tf32. */
struct tf32_stat {
    int only;                    /* records failing, every failure's cause tf32 */
    int gate_fail[KG_MAX_GATES]; /* failures per gate outside those records */
};

/* What the report says, counted over the store's records; gs[] in the registry's order. */
struct report {
    json_t *recs; /* one record per id: the last of each */
    int n;
    int skipped, duplicates; /* lines that are not records; records a later one of their id replaced */
    struct gate_stat gs[KG_MAX_GATES];
    int checked, errors, any_viol, tf_viol, decoys, decoy_checked;
    int conf[2][2]; /* [kgate accepts][standard test accepts] */
    int no_baseline, viol_at_k[NK];
    struct tf32_stat tf32;
    bool plotted;
    char gnuplot_why[256];
};

/* ---- reading the store ---------------------------------------------------------------------- */

static double num(json_t *v)
{
    if (json_is_number(v)) return json_number_value(v);
    const char *s = json_string_value(v);
    if (!s) return NAN;
    return !strcmp(s, "inf") ? INFINITY : !strcmp(s, "-inf") ? -INFINITY : NAN;
}

/* Does a calibrated gate's record fail at calibration factor k? -1 when it cannot say. */
static int fails_at(json_t *gate, double k)
{
    json_t *cases = json_object_get(json_object_get(gate, "evidence"), "cases");
    if (!json_is_array(cases) || !json_array_size(cases)) return -1;
    size_t i;
    json_t *c;
    int any = 0;
    json_array_foreach(cases, i, c)
    {
        if (json_is_true(json_object_get(c, "conditioned"))) continue; /* passed on the inputs' conditioning */
        json_t *outs = json_object_get(c, "outputs");
        size_t j;
        json_t *o;
        json_array_foreach(outs, j, o)
        {
            if (json_is_true(json_object_get(o, "reference_lost"))) continue; /* judged at no k */
            any = 1;
            double err = num(json_object_get(o, "error")), ref = num(json_object_get(o, "ref_error")),
                   fl = num(json_object_get(o, "floor"));
            if (!isfinite(ref)) ref = 0;
            if (!isfinite(fl)) fl = 0;
            double thr = k * ref + fl;
            if (!(err == 0 || err <= thr)) return 1; /* NaN error fails */
        }
    }
    return any ? 0 : -1;
}

static const char *status_of(json_t *rec, const char *gate_id, json_t **gate_out)
{
    json_t *gates = json_object_get(rec, "gates");
    size_t i;
    json_t *g;
    json_array_foreach(gates, i, g)
    {
        if (!strcmp(json_string_value(json_object_get(g, "id")) ?: "", gate_id)) {
            if (gate_out) *gate_out = g;
            return json_string_value(json_object_get(g, "status"));
        }
    }
    if (gate_out) *gate_out = NULL;
    return NULL;
}

/* Every record of the store, once per id (the last record of an id counts). Lines that are not
 * records (a torn last line: an audit killed while writing it) and ids seen again are counted
 * and warned about, not fatal. */
static int read_store(const char *store, struct report *rp, struct kg_err *e)
{
    static const char who[] = "kgate report";
    int holder = kg_audit_store_holder(store);
    if (holder)
        fprintf(stderr, "%s: %s is being written by a running audit (pid %d): the figures are of its records so far\n",
                who, store, holder);
    struct audit_log l = {0};
    if (kg_audit_log_read(&l, store, -1, who, e)) {
        kg_audit_log_free(&l);
        return -1;
    }
    kg_audit_log_warn_tail(&l, store, who);
    if (l.duplicates)
        fprintf(stderr, "%s: %s: %d records replaced by a later record of their id: each id is counted once\n", who,
                store, l.duplicates);
    rp->recs = json_array();
    const char *id;
    json_t *r;
    json_object_foreach(l.byid, id, r) json_array_append(rp->recs, r);
    rp->n = (int)json_array_size(rp->recs);
    rp->skipped = l.skipped;
    rp->duplicates = l.duplicates;
    kg_audit_log_free(&l);
    return 0;
}

/* ---- counting ------------------------------------------------------------------------------- */

/* The share's denominator: the kernels a gate judged (skips and errors are not judgements). */
static int judged(const struct gate_stat *g)
{
    return g->pass + g->fail + g->refused;
}

/* Kernels failing gate g at the k-th calibration factor (a tolerance-free gate: at every k). */
static int fail_at_k(const struct gate_stat *g, int k)
{
    return g->tf ? g->fail : g->fail_at_k[k];
}

/* One gate's status in one record; true when it failed. viol_k[k] is set where the gate fails
 * at the k-th calibration factor. */
static bool count_gate(struct gate_stat *g, json_t *gate, const char *st, bool *viol_k)
{
    if (!strcmp(st, "pass")) g->pass++;
    if (!strcmp(st, "fail")) g->fail++;
    if (!strcmp(st, "error")) g->error++;
    if (!strcmp(st, "skip")) g->skip++;
    if (!strcmp(st, "refused")) g->refused++;
    bool failed = !strcmp(st, "fail");
    if (g->tf) {
        for (int k = 0; k < NK; k++) viol_k[k] |= failed;
        return failed;
    }
    bool recorded = false;
    for (int k = 0; k < NK; k++) {
        int fk = fails_at(gate, ks[k]);
        /* a failure the recorded cases do not explain (a crash, a launch error) stays a failure */
        if (fk < 0)
            fk = failed;
        else
            recorded = true;
        g->fail_at_k[k] += fk;
        viol_k[k] |= fk;
    }
    g->judged_at_k += recorded || failed || !strcmp(st, "pass");
    return failed;
}

/* One checked record: its gates, its standard-test result and its decoy check. */
static void count_record(struct report *rp, json_t *rec)
{
    bool viol = false, tfv = false, viol_k[NK] = {0};
    for (int g = 0; g < kg_ngates; g++) {
        json_t *gate;
        const char *st = status_of(rec, rp->gs[g].id, &gate);
        if (!st) continue;
        bool failed = count_gate(&rp->gs[g], gate, st, viol_k);
        viol |= failed;
        tfv |= failed && rp->gs[g].tf;
    }
    rp->any_viol += viol;
    rp->tf_viol += tfv;
    for (int k = 0; k < NK; k++) rp->viol_at_k[k] += viol_k[k];
    const char *verdict = json_string_value(json_object_get(rec, "verdict"));
    const char *bl = json_string_value(json_object_get(json_object_get(rec, "baseline"), "kernelbench"));
    if (bl && strcmp(bl, "error")) {
        bool kg_ok = verdict && !strcmp(verdict, "pass"), kb_ok = !strcmp(bl, "pass");
        rp->conf[kg_ok][kb_ok]++;
    } else {
        rp->no_baseline++;
    }
    json_t *d = json_object_get(rec, "decoy");
    if (json_is_true(json_object_get(d, "checked"))) {
        rp->decoy_checked++;
        rp->decoys += json_is_true(json_object_get(d, "decoy"));
    }
}

static void count(struct report *rp)
{
    for (int g = 0; g < kg_ngates; g++) {
        memset(&rp->gs[g], 0, sizeof rp->gs[g]);
        rp->gs[g].id = kg_gates[g]->id;
        rp->gs[g].tf = kg_gates[g]->tolerance_free;
    }
    size_t ri;
    json_t *rec;
    json_array_foreach(rp->recs, ri, rec)
    {
        if (!json_object_get(rec, "gates")) {
            rp->errors++;
            continue;
        }
        rp->checked++;
        count_record(rp, rec);
    }
}

/* A record whose failures are all TF32's: at least one gate failed, each failing gate's cause
 * is tf32 (a failure without a cause is not), and so is every entry of the record's causes
 * list where it has one. */
static bool tf32_only(json_t *rec)
{
    json_t *causes = json_object_get(rec, "causes"), *c, *g;
    size_t i;
    json_array_foreach(causes, i,
                       c) if (strcmp(json_string_value(json_object_get(c, "id")) ?: "", "tf32")) return false;
    int nfail = 0;
    json_array_foreach(json_object_get(rec, "gates"), i, g)
    {
        if (strcmp(json_string_value(json_object_get(g, "status")) ?: "", "fail")) continue;
        nfail++;
        if (strcmp(json_string_value(json_object_get(g, "cause")) ?: "", "tf32")) return false;
    }
    return nfail > 0;
}

/* The per-gate failures and the kernels with a violation once tf32-only records pass. */
static void count_tf32(struct report *rp)
{
    memset(&rp->tf32, 0, sizeof rp->tf32);
    size_t ri;
    json_t *rec;
    json_array_foreach(rp->recs, ri, rec)
    {
        if (!json_object_get(rec, "gates")) continue;
        if (tf32_only(rec)) {
            rp->tf32.only++;
            continue;
        }
        for (int g = 0; g < kg_ngates; g++) {
            const char *st = status_of(rec, rp->gs[g].id, NULL);
            rp->tf32.gate_fail[g] += st && !strcmp(st, "fail");
        }
    }
}

/* ---- plots ---------------------------------------------------------------------------------- */

/* A gnuplot that is not installed (the shell's "not found") or that exits early closes the pipe:
 * the write must fail with EPIPE, not kill kgate report with SIGPIPE (seen on the H200). */
static int plot(const char *gnuplot, const char *script, char *why, size_t n)
{
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ign, &old);
    FILE *p = popen(gnuplot, "w");
    if (!p) {
        sigaction(SIGPIPE, &old, NULL);
        snprintf(why, n, "cannot run %s", gnuplot);
        return -1;
    }
    fputs(script, p);
    int rc = pclose(p);
    sigaction(SIGPIPE, &old, NULL);
    if (rc != 0) {
        snprintf(why, n, "%s failed (exit %d): is gnuplot installed? (Debian: gnuplot-nox)", gnuplot, rc);
        return -1;
    }
    return 0;
}

/* gates.svg: the fail rate of each gate, as a histogram. */
static void plot_gates(const struct report *rp, const char *dir, char *script, size_t n, size_t *sl)
{
    kg_appendf(script, n, sl,
               "set terminal svg size 900,420 font 'sans,11'\nset output '%s/gates.svg'\n"
               "set title 'Share of checked kernels failing each gate (%d kernels)'\nset style data histograms\n"
               "set style fill solid 0.8\nset boxwidth 0.8\nset yrange [0:*]\nset ylabel 'fail rate'\n"
               "set xtics rotate by -35\nset key off\nplot '-' using 2:xtic(1) lc rgb '#c0392b'\n",
               dir, rp->checked);
    for (int g = 0; g < kg_ngates; g++) {
        const struct gate_stat *s = &rp->gs[g];
        int den = judged(s);
        kg_appendf(script, n, sl, "%s%s %g\n", s->id, s->tf ? "*" : "", den ? (double)s->fail / den : 0);
    }
}

/* calibration.svg: each gate's fail rate against k, and any gate's. */
static void plot_sweep(const struct report *rp, const char *dir, char *script, size_t n, size_t *sl)
{
    kg_appendf(script, n, sl,
               "e\nset output '%s/calibration.svg'\nset title 'Fail rate vs calibration factor k (threshold = k x ref "
               "error + floor)'\n"
               "set logscale x 2\nset xrange [0.8:320]\nset xlabel 'k'\nset ylabel 'fail rate'\nset key outside right\n"
               "unset xtics\nset xtics (1,2,4,8,16,64,256)\nset style data linespoints\nplot ",
               dir);
    for (int g = 0; g < kg_ngates; g++)
        kg_appendf(script, n, sl, "%s'-' title '%s%s'", g ? ", " : "", rp->gs[g].id, rp->gs[g].tf ? " (tf)" : "");
    kg_appendf(script, n, sl, ", '-' title 'any gate' lw 3\n");
    for (int g = 0; g < kg_ngates; g++) {
        int den = judged(&rp->gs[g]);
        for (int k = 0; k < NK; k++) {
            double rate = den ? (double)fail_at_k(&rp->gs[g], k) / den : 0;
            kg_appendf(script, n, sl, "%g %g\n", ks[k], rate);
        }
        kg_appendf(script, n, sl, "e\n");
    }
    for (int k = 0; k < NK; k++)
        kg_appendf(script, n, sl, "%g %g\n", ks[k], rp->checked ? (double)rp->viol_at_k[k] / rp->checked : 0);
    kg_appendf(script, n, sl, "e\n");
}

/* Both plots in one gnuplot run; rp->plotted, or rp->gnuplot_why says why not. */
static void plots(struct report *rp, const struct report_opts *o)
{
    size_t sl = 0;
    char script[16384];
    script[0] = 0;
    plot_gates(rp, o->out_dir, script, sizeof script, &sl);
    plot_sweep(rp, o->out_dir, script, sizeof script, &sl);
    rp->gnuplot_why[0] = 0;
    rp->plotted = plot(o->gnuplot ? o->gnuplot : "gnuplot", script, rp->gnuplot_why, sizeof rp->gnuplot_why) == 0;
}

/* ---- report.md ------------------------------------------------------------------------------ */

static void md_figures(FILE *md, const struct report *rp, const char *store)
{
    double pct = rp->checked ? 100.0 / rp->checked : 0;
    fprintf(md, "# kgate audit: %s\n\n", store);
    fprintf(md, "%d kernels in the store; %d checked, %d could not be checked (load or compile errors, timeouts).\n\n",
            rp->n, rp->checked, rp->errors);
    if (rp->skipped || rp->duplicates)
        fprintf(md,
                "Also in the store: lines that are not records: %d (skipped: torn, or not JSON objects with an id); "
                "records replaced by a later record of the same id: %d (each id counts once, by its last "
                "record).\n\n",
                rp->skipped, rp->duplicates);
    fprintf(md, "| figure | kernels | share of checked |\n|---|---|---|\n");
    fprintf(md, "| at least one violation | %d | %.1f%% |\n", rp->any_viol, rp->any_viol * pct);
    fprintf(md, "| failing a tolerance-free gate | %d | %.1f%% |\n", rp->tf_viol, rp->tf_viol * pct);
    if (rp->decoy_checked)
        fprintf(md, "| decoys (own kernels never launched) | %d | %.1f%% of %d profiled |\n", rp->decoys,
                100.0 * rp->decoys / rp->decoy_checked, rp->decoy_checked);
    fprintf(md, "\n## Rate per gate\n\n| gate | tolerance-free | fail | pass | refused | error | skip | fail rate "
                "|\n|---|---|---|---|---|---|---|---|\n");
    for (int g = 0; g < kg_ngates; g++) {
        const struct gate_stat *s = &rp->gs[g];
        int den = judged(s);
        fprintf(md, "| %s | %s | %d | %d | %d | %d | %d | %.1f%% |\n", s->id, s->tf ? "yes" : "no", s->fail, s->pass,
                s->refused, s->error, s->skip, den ? 100.0 * s->fail / den : 0);
    }
    if (rp->plotted) fprintf(md, "\n![fail rate per gate](gates.svg)\n");
}

static void md_confusion(FILE *md, const struct report *rp)
{
    const int(*conf)[2] = rp->conf;
    fprintf(md, "\n## kgate against the standard test (KernelBench allclose, atol = rtol = 1e-2)\n\n");
    fprintf(md, "| | standard test accepts | standard test rejects |\n|---|---|---|\n");
    fprintf(md, "| kgate accepts | %d | %d |\n| kgate rejects | %d | %d |\n", conf[1][1], conf[1][0], conf[0][1],
            conf[0][0]);
    fprintf(md, "\nAccepted by the standard test but rejected by kgate: **%d**; the reverse: **%d**%s.\n", conf[0][1],
            conf[1][0], rp->no_baseline ? " (kernels without a standard-test result are left out)" : "");
}

static void md_sweep(FILE *md, const struct report *rp)
{
    double pct = rp->checked ? 100.0 / rp->checked : 0;
    fprintf(md, "\n## Calibration sweep\n\nCalibrated gates re-judged from the recorded errors at threshold = k x ref "
                "error + floor; "
                "tolerance-free gates do not depend on k.\n\n| gate |");
    for (int k = 0; k < NK; k++) fprintf(md, " k=%g |", ks[k]);
    fprintf(md, "\n|---|");
    for (int k = 0; k < NK; k++) fprintf(md, "---|");
    fprintf(md, "\n");
    for (int g = 0; g < kg_ngates; g++) {
        const struct gate_stat *s = &rp->gs[g];
        int den = judged(s);
        fprintf(md, "| %s%s |", s->id, s->tf ? " (tf)" : "");
        for (int k = 0; k < NK; k++) fprintf(md, " %.1f%% |", den ? 100.0 * fail_at_k(s, k) / den : 0);
        fprintf(md, "\n");
    }
    fprintf(md, "| **any gate** |");
    for (int k = 0; k < NK; k++) fprintf(md, " %.1f%% |", rp->viol_at_k[k] * pct);
    fprintf(md, "\n");
    if (rp->plotted)
        fprintf(md, "\n![calibration sweep](calibration.svg)\n");
    else
        fprintf(md, "\n(plots not drawn: %s)\n", rp->gnuplot_why);
}

static void md_tf32(FILE *md, const struct report *rp)
{
    const struct tf32_stat *t = &rp->tf32;
    double pct = rp->checked ? 100.0 / rp->checked : 0;
    fprintf(md,
            "\n## With and without TF32\n\nKernels whose only cause is `tf32` (fp32 products computed in TF32, "
            "PyTorch's default for cuDNN convolutions): **%d**. The rates once TF32 is accepted "
            "(`--allow tf32`) leave them out of the failures, not out of the kernels.\n\n",
            t->only);
    fprintf(md, "| gate | failing | without tf32-only |\n|---|---|---|\n");
    for (int g = 0; g < kg_ngates; g++) {
        const struct gate_stat *s = &rp->gs[g];
        int den = judged(s);
        fprintf(md, "| %s | %d (%.1f%%) | %d (%.1f%%) |\n", s->id, s->fail, den ? 100.0 * s->fail / den : 0,
                t->gate_fail[g], den ? 100.0 * t->gate_fail[g] / den : 0);
    }
    fprintf(md, "| **any gate** | %d (%.1f%%) | %d (%.1f%%) |\n", rp->any_viol, rp->any_viol * pct,
            rp->any_viol - t->only, (rp->any_viol - t->only) * pct);
}

static json_t *tf32_json(const struct report *rp)
{
    json_t *gates = json_object();
    for (int g = 0; g < kg_ngates; g++) json_object_set_new(gates, rp->gs[g].id, json_integer(rp->tf32.gate_fail[g]));
    return json_pack("{s:i,s:i,s:o}", "tf32_only", rp->tf32.only, "with_violation", rp->any_viol - rp->tf32.only,
                     "fail", gates);
}

/* Up to o->sample of gate g's failing records, drawn with a seeded Fisher-Yates shuffle; listed
 * in md and returned as a JSON array. */
static json_t *sample_gate(FILE *md, const struct report *rp, const struct report_opts *o, int g)
{
    const char *gid = rp->gs[g].id;
    int nf = 0, *idx = calloc((size_t)(rp->n ? rp->n : 1), sizeof *idx);
    size_t ri;
    json_t *rec;
    json_array_foreach(rp->recs, ri, rec)
    {
        const char *st = status_of(rec, gid, NULL);
        if (st && !strcmp(st, "fail")) idx[nf++] = (int)ri;
    }
    for (int i = nf - 1; i > 0; i--) {
        int j = (int)kg_rng_below(o->seed, (uint64_t)g, (uint64_t)i, (uint64_t)i + 1);
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    json_t *list = json_array();
    if (nf) fprintf(md, "\n### %s (%d failing)\n\n", gid, nf);
    for (int i = 0; i < nf && i < o->sample; i++) {
        json_t *r = json_array_get(rp->recs, (size_t)idx[i]), *gate;
        status_of(r, gid, &gate);
        const char *id = json_string_value(json_object_get(r, "id")) ?: "?";
        const char *summary = json_string_value(json_object_get(gate, "summary")) ?: "";
        const char *replay = json_string_value(json_object_get(gate, "replay")) ?: "";
        fprintf(md, "- `%s`: %s\n  `%s`\n", id, summary, replay);
        json_array_append_new(list, json_pack("{s:s,s:s,s:s}", "id", id, "summary", summary, "replay", replay));
    }
    free(idx);
    return list;
}

/* The stratified random sample for hand audit, as {gate: [...]}. */
static json_t *md_sample(FILE *md, const struct report *rp, const struct report_opts *o)
{
    fprintf(md,
            "\n## Sample for hand audit\n\nUp to %d failing kernels per gate, drawn with seed %llu; each with the "
            "command that replays it.\n",
            o->sample, (unsigned long long)o->seed);
    json_t *sample = json_object();
    for (int g = 0; g < kg_ngates; g++) json_object_set_new(sample, rp->gs[g].id, sample_gate(md, rp, o, g));
    return sample;
}

/* The pairs with no report, and why: an audit that could not check 5% of a corpus must say
 * which 5% (build errors, a malformed problem, GPU candidates on a host without one). The
 * table shows the first 100; the JSON array holds them all. */
static json_t *md_unchecked(FILE *md, const struct report *rp)
{
    json_t *unchecked = json_array();
    if (rp->errors) fprintf(md, "\n## Not checked (%d)\n\n| kernel | why |\n|---|---|\n", rp->errors);
    size_t ri;
    json_t *rec;
    json_array_foreach(rp->recs, ri, rec)
    {
        if (json_object_get(rec, "gates")) continue;
        const char *id = json_string_value(json_object_get(rec, "id")) ?: "?";
        const char *why = json_string_value(json_object_get(rec, "error")) ?: "no report";
        json_array_append_new(unchecked, json_pack("{s:s,s:s}", "id", id, "error", why));
        if (json_array_size(unchecked) > 100) continue;
        fprintf(md, "| `%s` | ", id);
        for (const char *c = why; *c && c - why < 400; c++) fputc(*c == '|' ? '/' : *c == '\n' ? ' ' : *c, md);
        fprintf(md, " |\n");
    }
    if (json_array_size(unchecked) > 100)
        fprintf(md, "\n(and %zu more: the store's records say why)\n", json_array_size(unchecked) - 100);
    return unchecked;
}

/* report.md; *sample and *unchecked get the JSON of the last two sections. */
/* Where the time went, summed over the store's records (store.c's table, as kgate audit prints it);
 * the wall time and the idle slots are the audit's, not the store's, so neither is shown. */
static void md_time(FILE *md, const struct report *rp)
{
    double spent[KG_AUDIT_NSPENT] = {0};
    int n = 0;
    const char *id;
    json_t *rec;
    size_t i;
    if (json_is_array(rp->recs)) {
        json_array_foreach(rp->recs, i, rec)
        {
            n += json_object_get(rec, "timing") != NULL;
            kg_audit_spent_add(spent, rec);
        }
    } else {
        json_object_foreach(rp->recs, id, rec)
        {
            n += json_object_get(rec, "timing") != NULL;
            kg_audit_spent_add(spent, rec);
        }
    }
    fputs("\n## Cost\n\n", md);
    kg_audit_spent_print(md, spent, n, 0, 0, true);
}

static int write_md(const struct report *rp, const struct report_opts *o, json_t **sample, json_t **unchecked,
                    struct kg_err *e)
{
    char path[KG_PATH_MAX];
    snprintf(path, sizeof path, "%s/report.md", o->out_dir);
    FILE *md = fopen(path, "w");
    if (!md) return kg_errf(e, "cannot write %s", path);
    md_figures(md, rp, o->store);
    md_confusion(md, rp);
    md_sweep(md, rp);
    md_tf32(md, rp);
    *sample = md_sample(md, rp, o);
    *unchecked = md_unchecked(md, rp);
    md_time(md, rp);
    fclose(md);
    return 0;
}

/* ---- report.json ---------------------------------------------------------------------------- */

static json_t *gates_json(const struct report *rp)
{
    json_t *gates = json_array();
    for (int g = 0; g < kg_ngates; g++) {
        const struct gate_stat *s = &rp->gs[g];
        json_t *sweep = json_array();
        for (int k = 0; k < NK; k++) json_array_append_new(sweep, json_integer(fail_at_k(s, k)));
        json_array_append_new(gates, json_pack("{s:s,s:b,s:i,s:i,s:i,s:i,s:i,s:o}", "id", s->id, "tolerance_free",
                                               s->tf, "fail", s->fail, "pass", s->pass, "refused", s->refused, "error",
                                               s->error, "skip", s->skip, "fail_at_k", sweep));
    }
    return gates;
}

/* report.json; takes the references to sample and unchecked. */
static int write_json(const struct report *rp, const struct report_opts *o, json_t *sample, json_t *unchecked,
                      struct kg_err *e)
{
    json_t *kv = json_array(), *vk = json_array();
    for (int k = 0; k < NK; k++) {
        json_array_append_new(kv, json_real(ks[k]));
        json_array_append_new(vk, json_integer(rp->viol_at_k[k]));
    }
    const int(*conf)[2] = rp->conf;
    json_t *doc =
        json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:o,s:{s:i,s:i,s:i,s:i},s:o,s:o,s:o,s:{s:i,s:i}}", "store", o->store,
                  "kernels", rp->n, "checked", rp->checked, "unchecked", rp->errors, "with_violation", rp->any_viol,
                  "failing_tolerance_free", rp->tf_viol, "gates", gates_json(rp), "confusion", "both_accept",
                  conf[1][1], "kgate_rejects_standard_accepts", conf[0][1], "kgate_accepts_standard_rejects",
                  conf[1][0], "both_reject", conf[0][0], "k", kv, "with_violation_at_k", vk, "sample", sample, "decoys",
                  "profiled", rp->decoy_checked, "decoy", rp->decoys);
    json_object_set_new(doc, "not_checked", unchecked);
    json_object_set_new(doc, "without_tf32_only", tf32_json(rp));
    json_object_set_new(doc, "skipped_lines", json_integer(rp->skipped));
    json_object_set_new(doc, "duplicate_records", json_integer(rp->duplicates));
    char path[KG_PATH_MAX];
    snprintf(path, sizeof path, "%s/report.json", o->out_dir);
    int bad = json_dump_file(doc, path, JSON_INDENT(2));
    json_decref(doc);
    if (bad) return kg_errf(e, "cannot write %s", path);
    return 0;
}

/* ---- the report ----------------------------------------------------------------------------- */

static int report(struct report *rp, const struct report_opts *o, struct kg_err *e)
{
    if (read_store(o->store, rp, e)) return -1;
    if (kg_mkdirs(o->out_dir)) return kg_errf(e, "cannot create %s", o->out_dir);
    count(rp);
    count_tf32(rp);
    plots(rp, o);
    json_t *sample = NULL, *unchecked = NULL;
    if (write_md(rp, o, &sample, &unchecked, e)) return -1;
    if (write_json(rp, o, sample, unchecked, e)) return -1;
    double pct = rp->checked ? 100.0 / rp->checked : 0;
    printf("%d kernels: %d checked, %d with a violation (%.1f%%; %d of them TF32's alone), %d failing a "
           "tolerance-free gate; standard test accepts %d that kgate rejects. Report: %s/report.md%s\n",
           rp->n, rp->checked, rp->any_viol, rp->any_viol * pct, rp->tf32.only, rp->tf_viol, rp->conf[0][1], o->out_dir,
           rp->plotted ? " (+ gates.svg, calibration.svg)" : "");
    if (!rp->plotted) fprintf(stderr, "kgate report: plots not drawn: %s\n", rp->gnuplot_why);
    return 0;
}

int kg_audit_report(const struct report_opts *o, struct kg_err *e)
{
    struct report rp = {0};
    int rc = report(&rp, o, e);
    json_decref(rp.recs);
    return rc;
}
