/* audit_report.c: `kgate report STORE`: the figures that defend an audit, in Markdown and JSON,
 * with plots drawn by gnuplot: the share of kernels with a violation, the share failing a
 * tolerance-free gate, the rate per gate, the confusion table against the standard test, a
 * calibration sweep over k (calibrated gates re-judged from the errors the store recorded;
 * tolerance-free rates do not move), and a stratified random sample for hand audit. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/audit.h"
#include "base/cache.h"
#include "gates/gate.h"
#include "base/rng.h"

#define NGATES 12
static const double ks[] = {1, 2, 4, 8, 16, 64, 256};
#define NK (int)(sizeof ks / sizeof *ks)

struct gate_stat {
    const char *id;
    bool tf;
    int pass, fail, error, skip, refused;
    int fail_at_k[NK], judged_at_k;
};

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
        json_t *outs = json_object_get(c, "outputs");
        size_t j;
        json_t *o;
        json_array_foreach(outs, j, o)
        {
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

static int plot(const char *gnuplot, const char *script, char *why, size_t n)
{
    FILE *p = popen(gnuplot, "w");
    if (!p) {
        snprintf(why, n, "cannot run %s", gnuplot);
        return -1;
    }
    fputs(script, p);
    int rc = pclose(p);
    if (rc != 0) {
        snprintf(why, n, "%s failed (exit %d): is gnuplot installed? (Debian: gnuplot-nox)", gnuplot, rc);
        return -1;
    }
    return 0;
}

int kg_audit_report(const struct report_opts *o, struct kg_err *e)
{
    FILE *f = fopen(o->store, "r");
    if (!f) return kg_errf(e, "%s: cannot open: %s", o->store, strerror(errno));
    json_t *recs = json_array();
    char *line = NULL;
    size_t lc = 0;
    int torn = 0;
    while (getline(&line, &lc, f) > 0) {
        if (line[strspn(line, " \t\r\n")] == 0) continue;
        json_t *r = json_loads(line, 0, NULL);
        if (r)
            json_array_append_new(recs, r);
        else
            torn++;
    }
    free(line);
    fclose(f);
    if (kg_mkdirs(o->out_dir)) {
        json_decref(recs);
        return kg_errf(e, "cannot create %s", o->out_dir);
    }
    struct gate_stat gs[NGATES];
    for (int g = 0; g < NGATES; g++) {
        memset(&gs[g], 0, sizeof gs[g]);
        gs[g].id = kg_gates[g]->id;
        gs[g].tf = kg_gates[g]->tolerance_free;
    }
    int n = (int)json_array_size(recs), checked = 0, errors = 0, any_viol = 0, tf_viol = 0, decoys = 0, decoy_checked = 0;
    int conf[2][2] = {{0}}; /* [kgate accepts][standard test accepts] */
    int no_baseline = 0, viol_at_k[NK] = {0};
    size_t ri;
    json_t *rec;
    json_array_foreach(recs, ri, rec)
    {
        const char *verdict = json_string_value(json_object_get(rec, "verdict"));
        if (!json_object_get(rec, "gates")) {
            errors++;
            continue;
        }
        checked++;
        bool viol = false, tfv = false, viol_k[NK] = {0};
        for (int g = 0; g < NGATES; g++) {
            json_t *gate;
            const char *st = status_of(rec, gs[g].id, &gate);
            if (!st) continue;
            if (!strcmp(st, "pass")) gs[g].pass++;
            if (!strcmp(st, "fail")) gs[g].fail++;
            if (!strcmp(st, "error")) gs[g].error++;
            if (!strcmp(st, "skip")) gs[g].skip++;
            if (!strcmp(st, "refused")) gs[g].refused++;
            bool failed = !strcmp(st, "fail");
            viol |= failed;
            tfv |= failed && gs[g].tf;
            if (gs[g].tf) {
                for (int k = 0; k < NK; k++) viol_k[k] |= failed;
                continue;
            }
            bool judged = false;
            for (int k = 0; k < NK; k++) {
                int fk = fails_at(gate, ks[k]);
                /* a failure the recorded cases do not explain (a crash, a launch error) stays a failure */
                if (fk < 0) fk = failed;
                else judged = true;
                gs[g].fail_at_k[k] += fk;
                viol_k[k] |= fk;
            }
            gs[g].judged_at_k += judged || failed || !strcmp(st, "pass");
        }
        any_viol += viol;
        tf_viol += tfv;
        for (int k = 0; k < NK; k++) viol_at_k[k] += viol_k[k];
        const char *bl = json_string_value(json_object_get(json_object_get(rec, "baseline"), "kernelbench"));
        if (bl && strcmp(bl, "error")) {
            bool kg_ok = verdict && !strcmp(verdict, "pass"), kb_ok = !strcmp(bl, "pass");
            conf[kg_ok][kb_ok]++;
        } else {
            no_baseline++;
        }
        json_t *d = json_object_get(rec, "decoy");
        if (json_is_true(json_object_get(d, "checked"))) {
            decoy_checked++;
            decoys += json_is_true(json_object_get(d, "decoy"));
        }
    }
    /* ---- plots ---- */
    char gnuplot_why[256] = "";
    const char *gp = o->gnuplot ? o->gnuplot : "gnuplot";
    size_t sl = 0;
    char script[16384];
    script[0] = 0;
    kg_appendf(script, sizeof script, &sl,
               "set terminal svg size 900,420 font 'sans,11'\nset output '%s/gates.svg'\n"
               "set title 'Share of checked kernels failing each gate (%d kernels)'\nset style data histograms\n"
               "set style fill solid 0.8\nset boxwidth 0.8\nset yrange [0:*]\nset ylabel 'fail rate'\n"
               "set xtics rotate by -35\nset key off\nplot '-' using 2:xtic(1) lc rgb '#c0392b'\n",
               o->out_dir, checked);
    for (int g = 0; g < NGATES; g++) {
        int den = gs[g].pass + gs[g].fail + gs[g].refused;
        kg_appendf(script, sizeof script, &sl, "%s%s %g\n", gs[g].id, gs[g].tf ? "*" : "", den ? (double)gs[g].fail / den : 0);
    }
    kg_appendf(script, sizeof script, &sl,
               "e\nset output '%s/calibration.svg'\nset title 'Fail rate vs calibration factor k (threshold = k x ref error + floor)'\n"
               "set logscale x 2\nset xrange [0.8:320]\nset xlabel 'k'\nset ylabel 'fail rate'\nset key outside right\n"
               "unset xtics\nset xtics (1,2,4,8,16,64,256)\nset style data linespoints\nplot ",
               o->out_dir);
    int series = 0;
    for (int g = 0; g < NGATES; g++) kg_appendf(script, sizeof script, &sl, "%s'-' title '%s%s'", series++ ? ", " : "", gs[g].id, gs[g].tf ? " (tf)" : "");
    kg_appendf(script, sizeof script, &sl, ", '-' title 'any gate' lw 3\n");
    for (int g = 0; g < NGATES; g++) {
        int den = gs[g].pass + gs[g].fail + gs[g].refused;
        for (int k = 0; k < NK; k++) {
            double rate = den ? (double)(gs[g].tf ? gs[g].fail : gs[g].fail_at_k[k]) / den : 0;
            kg_appendf(script, sizeof script, &sl, "%g %g\n", ks[k], rate);
        }
        kg_appendf(script, sizeof script, &sl, "e\n");
    }
    for (int k = 0; k < NK; k++) kg_appendf(script, sizeof script, &sl, "%g %g\n", ks[k], checked ? (double)viol_at_k[k] / checked : 0);
    kg_appendf(script, sizeof script, &sl, "e\n");
    bool plotted = plot(gp, script, gnuplot_why, sizeof gnuplot_why) == 0;
    /* ---- markdown ---- */
    char path[2400];
    snprintf(path, sizeof path, "%s/report.md", o->out_dir);
    FILE *md = fopen(path, "w");
    if (!md) {
        json_decref(recs);
        return kg_errf(e, "cannot write %s", path);
    }
    double pct = checked ? 100.0 / checked : 0;
    fprintf(md, "# kgate audit: %s\n\n", o->store);
    fprintf(md, "%d kernels in the store; %d checked, %d could not be checked (load or compile errors, timeouts)%s.\n\n", n,
            checked, errors, torn ? "; torn lines skipped" : "");
    fprintf(md, "| figure | kernels | share of checked |\n|---|---|---|\n");
    fprintf(md, "| at least one violation | %d | %.1f%% |\n", any_viol, any_viol * pct);
    fprintf(md, "| failing a tolerance-free gate | %d | %.1f%% |\n", tf_viol, tf_viol * pct);
    if (decoy_checked) fprintf(md, "| decoys (own kernels never launched) | %d | %.1f%% of %d profiled |\n", decoys, 100.0 * decoys / decoy_checked, decoy_checked);
    fprintf(md, "\n## Rate per gate\n\n| gate | tolerance-free | fail | pass | refused | error | skip | fail rate |\n|---|---|---|---|---|---|---|---|\n");
    for (int g = 0; g < NGATES; g++) {
        int den = gs[g].pass + gs[g].fail + gs[g].refused;
        fprintf(md, "| %s | %s | %d | %d | %d | %d | %d | %.1f%% |\n", gs[g].id, gs[g].tf ? "yes" : "no", gs[g].fail,
                gs[g].pass, gs[g].refused, gs[g].error, gs[g].skip, den ? 100.0 * gs[g].fail / den : 0);
    }
    if (plotted) fprintf(md, "\n![fail rate per gate](gates.svg)\n");
    fprintf(md, "\n## kgate against the standard test (KernelBench allclose, atol = rtol = 1e-2)\n\n");
    fprintf(md, "| | standard test accepts | standard test rejects |\n|---|---|---|\n");
    fprintf(md, "| kgate accepts | %d | %d |\n| kgate rejects | %d | %d |\n", conf[1][1], conf[1][0], conf[0][1], conf[0][0]);
    fprintf(md, "\nAccepted by the standard test but rejected by kgate: **%d**; the reverse: **%d**%s.\n", conf[0][1],
            conf[1][0], no_baseline ? " (kernels without a standard-test result are left out)" : "");
    fprintf(md, "\n## Calibration sweep\n\nCalibrated gates re-judged from the recorded errors at threshold = k x ref error + floor; "
                "tolerance-free gates do not depend on k.\n\n| gate |");
    for (int k = 0; k < NK; k++) fprintf(md, " k=%g |", ks[k]);
    fprintf(md, "\n|---|");
    for (int k = 0; k < NK; k++) fprintf(md, "---|");
    fprintf(md, "\n");
    for (int g = 0; g < NGATES; g++) {
        int den = gs[g].pass + gs[g].fail + gs[g].refused;
        fprintf(md, "| %s%s |", gs[g].id, gs[g].tf ? " (tf)" : "");
        for (int k = 0; k < NK; k++)
            fprintf(md, " %.1f%% |", den ? 100.0 * (gs[g].tf ? gs[g].fail : gs[g].fail_at_k[k]) / den : 0);
        fprintf(md, "\n");
    }
    fprintf(md, "| **any gate** |");
    for (int k = 0; k < NK; k++) fprintf(md, " %.1f%% |", viol_at_k[k] * pct);
    fprintf(md, "\n");
    if (plotted)
        fprintf(md, "\n![calibration sweep](calibration.svg)\n");
    else
        fprintf(md, "\n(plots not drawn: %s)\n", gnuplot_why);
    /* stratified random sample for hand audit */
    fprintf(md, "\n## Sample for hand audit\n\nUp to %d failing kernels per gate, drawn with seed %llu; each with the command that replays it.\n",
            o->sample, (unsigned long long)o->seed);
    json_t *sample = json_object();
    for (int g = 0; g < NGATES; g++) {
        int nf = 0, *idx = calloc((size_t)(n ? n : 1), sizeof *idx);
        json_array_foreach(recs, ri, rec)
        {
            const char *st = status_of(rec, gs[g].id, NULL);
            if (st && !strcmp(st, "fail")) idx[nf++] = (int)ri;
        }
        for (int i = nf - 1; i > 0; i--) { /* seeded Fisher-Yates */
            int j = (int)kg_rng_below(o->seed, (uint64_t)g, (uint64_t)i, (uint64_t)i + 1);
            int t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
        }
        json_t *list = json_array();
        if (nf) fprintf(md, "\n### %s (%d failing)\n\n", gs[g].id, nf);
        for (int i = 0; i < nf && i < o->sample; i++) {
            json_t *r = json_array_get(recs, (size_t)idx[i]), *gate;
            status_of(r, gs[g].id, &gate);
            const char *id = json_string_value(json_object_get(r, "id")) ?: "?";
            const char *summary = json_string_value(json_object_get(gate, "summary")) ?: "";
            const char *replay = json_string_value(json_object_get(gate, "replay")) ?: "";
            fprintf(md, "- `%s`: %s\n  `%s`\n", id, summary, replay);
            json_array_append_new(list, json_pack("{s:s,s:s,s:s}", "id", id, "summary", summary, "replay", replay));
        }
        json_object_set_new(sample, gs[g].id, list);
        free(idx);
    }
    /* the pairs with no report, and why: an audit that could not check 5% of a corpus must say
     * which 5% (build errors, a malformed problem, GPU candidates on a host without one) */
    json_t *unchecked = json_array();
    if (errors) fprintf(md, "\n## Not checked (%d)\n\n| kernel | why |\n|---|---|\n", errors);
    json_array_foreach(recs, ri, rec)
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
    fclose(md);
    /* ---- json ---- */
    json_t *gates = json_array();
    for (int g = 0; g < NGATES; g++) {
        json_t *sweep = json_array();
        for (int k = 0; k < NK; k++) json_array_append_new(sweep, json_integer(gs[g].tf ? gs[g].fail : gs[g].fail_at_k[k]));
        json_array_append_new(gates, json_pack("{s:s,s:b,s:i,s:i,s:i,s:i,s:i,s:o}", "id", gs[g].id, "tolerance_free", gs[g].tf,
                                               "fail", gs[g].fail, "pass", gs[g].pass, "refused", gs[g].refused, "error",
                                               gs[g].error, "skip", gs[g].skip, "fail_at_k", sweep));
    }
    json_t *kv = json_array(), *vk = json_array();
    for (int k = 0; k < NK; k++) {
        json_array_append_new(kv, json_real(ks[k]));
        json_array_append_new(vk, json_integer(viol_at_k[k]));
    }
    json_t *doc = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:o,s:{s:i,s:i,s:i,s:i},s:o,s:o,s:o,s:{s:i,s:i}}", "store",
                            o->store, "kernels", n, "checked", checked, "unchecked", errors, "with_violation", any_viol,
                            "failing_tolerance_free", tf_viol, "gates", gates, "confusion", "both_accept", conf[1][1],
                            "kgate_rejects_standard_accepts", conf[0][1], "kgate_accepts_standard_rejects", conf[1][0],
                            "both_reject", conf[0][0], "k", kv, "with_violation_at_k", vk, "sample", sample, "decoys",
                            "profiled", decoy_checked, "decoy", decoys);
    json_object_set_new(doc, "not_checked", unchecked);
    snprintf(path, sizeof path, "%s/report.json", o->out_dir);
    int bad = json_dump_file(doc, path, JSON_INDENT(2));
    json_decref(doc);
    json_decref(recs);
    if (bad) return kg_errf(e, "cannot write %s", path);
    printf("%d kernels: %d checked, %d with a violation (%.1f%%), %d failing a tolerance-free gate; "
           "standard test accepts %d that kgate rejects. Report: %s/report.md%s\n",
           n, checked, any_viol, any_viol * pct, tf_viol, conf[0][1], o->out_dir, plotted ? " (+ gates.svg, calibration.svg)" : "");
    if (!plotted) fprintf(stderr, "kgate report: plots not drawn: %s\n", gnuplot_why);
    return 0;
}
