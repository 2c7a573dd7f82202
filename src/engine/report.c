/* report.c: the text table and the JSON report. */
#include "engine/report.h"

#include <math.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/session.h"

static const char *status_color(enum kg_status s)
{
    switch (s) {
    case KG_PASS: return "\033[32m";
    case KG_FAIL: return "\033[1;31m";
    case KG_ERROR: return "\033[35m";
    case KG_REFUSED: return "\033[33m";
    default: return "\033[2m";
    }
}

static void num_json(json_t *o, const char *key, double v)
{
    /* JSON has no NaN or Inf: write those as strings so nothing is lost */
    if (isfinite(v))
        json_object_set_new(o, key, json_real(v));
    else
        json_object_set_new(o, key, json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"));
}

json_t *kg_verdict_json(const struct kg_verdict *v)
{
    json_t *ev = json_object();
    if (v->ev.valid) {
        json_object_set_new(ev, "output", json_string(v->ev.output));
        json_object_set_new(ev, "index", json_string(v->ev.index));
        json_object_set_new(ev, "flat_index", json_integer(v->ev.flat));
        num_json(ev, "got", v->ev.got);
        num_json(ev, "expected", v->ev.expected);
        num_json(ev, "error", v->ev.err);
        num_json(ev, "ref_error", v->ev.ref_err);
        num_json(ev, "threshold", v->ev.threshold);
        json_object_set_new(ev, "case", json_string(v->ev.case_id));
    }
    if (v->ratio != 0) num_json(ev, "ratio", v->ratio);
    if (v->detail[0]) json_object_set_new(ev, "detail", json_string(v->detail));
    if (v->extra) json_object_update(ev, v->extra);
    return ev;
}

json_t *kg_report_json(const struct kg_session *s, const struct kg_verdict *v, int n, const struct kg_baseline *b)
{
    json_t *gates = json_array(), *causes = json_array();
    int same[KG_REPORT_MAX];
    if (n > KG_REPORT_MAX) n = KG_REPORT_MAX;
    kg_cause_groups(v, n, same);
    for (int i = 0; i < n; i++) {
        json_t *g =
            json_pack("{s:s,s:s,s:b,s:s,s:o,s:f,s:i}", "id", v[i].gate->id, "status", kg_status_name(v[i].status),
                      "tolerance_free", v[i].gate->tolerance_free, "summary", v[i].summary, "evidence",
                      kg_verdict_json(&v[i]), "seconds", v[i].seconds, "cases", v[i].ncases);
        if (v[i].replay[0]) json_object_set_new(g, "replay", json_string(v[i].replay));
        if (kg_verdict_failed(&v[i])) {
            json_object_set_new(g, "cause", json_string(kg_verdict_cause_id(&v[i])));
            if (v[i].cause_text[0]) json_object_set_new(g, "cause_text", json_string(v[i].cause_text));
            if (same[i] >= 0)
                json_object_set_new(g, "same_cause_as", json_string(v[same[i]].gate->id));
            else
                json_array_append_new(causes, json_pack("{s:s,s:s,s:s}", "id", kg_verdict_cause_id(&v[i]), "gate",
                                                        v[i].gate->id, "text", kg_verdict_cause_line(&v[i])));
        }
        json_array_append_new(gates, g);
    }
    json_t *doc = json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:o,s:o}", "kernel", s->c->name, "file", s->c->path, "runner",
                            s->be->name, "verdict", kg_overall_name(kg_overall(v, n)), "seed", (json_int_t)s->o.seed,
                            "compiler", s->last_load.compiler, "causes", causes, "gates", gates);
    char hash[32];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)s->c->hash);
    json_object_set_new(doc, "file_hash", json_string(hash));
    json_object_set_new(doc, "timing",
                        json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i,s:f,s:f,s:i}", "compile", s->t_compile,
                                  "inputs", s->t_inputs, "oracle", s->t_oracle, "runs", s->t_run, "compare",
                                  kg_compare_seconds() - s->compare0 + s->t_compare, "standard", s->t_standard, "decoy",
                                  s->t_decoy, "total", s->t_total, "kernel_runs", s->nruns, "memory_wait", s->t_memwait,
                                  "device_wait", s->t_devwait, "device_waits", s->dev_waits));
    if (s->host_peak) /* bytes: the most the check's processes held (base/memwatch.h), what the ledger reserved */
        json_object_set_new(doc, "memory",
                            json_pack("{s:f,s:I,s:I,s:I}", "tensor_bytes", s->host_bytes, "host_base",
                                      (json_int_t)s->host_base, "host_peak", (json_int_t)s->host_peak, "host_reserved",
                                      (json_int_t)s->host_reserve));
    bool known = false; /* device bytes, per worker role, where any is known */
    for (int r = 0; r < KG_DEV_ROLES; r++) known |= s->dev_peak[r] > 0;
    if (known) {
        static const char *const role[KG_DEV_ROLES] = {"oracle", "kernel", "standard"}; /* enum kg_dev_role */
        json_t *m = json_object_get(doc, "memory"), *peak = json_object(), *held = json_object();
        if (!m) json_object_set_new(doc, "memory", m = json_object());
        for (int r = 0; r < KG_DEV_ROLES; r++) {
            json_object_set_new(peak, role[r], json_integer((json_int_t)s->dev_peak[r]));
            json_object_set_new(held, role[r], json_integer((json_int_t)s->dev_held[r]));
        }
        json_object_set_new(m, "device_peak", peak);
        json_object_set_new(m, "device_held", held);
    }
    const struct kg_memo_stats *ms = &s->memo_stats;
    json_object_set_new(doc, "memo",
                        json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "inputs_made", ms->inputs_made,
                                  "inputs_reused", ms->inputs_reused, "inputs_again", ms->inputs_again, "inputs_kept",
                                  ms->inputs_kept, "inputs_in_place", ms->inputs_in_place, "oracle_made",
                                  ms->oracle_made, "oracle_reused", ms->oracle_reused, "oracle_again", ms->oracle_again,
                                  "oracle_direct", ms->oracle_direct));
    if (b && b->asked) {
        json_t *bl = json_object();
        json_object_set_new(bl, b->name, json_string(b->result == 1 ? "pass" : b->result == 0 ? "fail" : "error"));
        json_object_set_new(bl, "detail", json_string(b->why));
        json_object_set_new(bl, "beside", json_boolean(b->beside));
        json_object_set_new(doc, "baseline", bl);
    }
    return doc;
}

/* One line of a gate's detail under the verdict, indented, wrapped at a word before column
 * DETAIL_WIDTH: texts written as one long line stay readable in a terminal and in a log. */
#define DETAIL_INDENT 19
#define DETAIL_WIDTH  (DETAIL_INDENT + 88)
static void print_wrapped(FILE *f, const char *p, int len, const char *dim, const char *reset)
{
    const int room = DETAIL_WIDTH - DETAIL_INDENT;
    do {
        int take = len;
        if (take > room) {
            take = room;
            while (take > room / 2 && p[take] != ' ') take--;
            if (p[take] != ' ') take = room; /* one word longer than the room: cut it */
        }
        fprintf(f, "%s%*s%.*s%s\n", dim, DETAIL_INDENT, "", take, p, reset);
        while (take < len && p[take] == ' ') take++;
        p += take;
        len -= take;
    } while (len > 0);
}

void kg_report_text(FILE *f, const struct kg_session *s, const struct kg_verdict *v, int n, const struct kg_baseline *b,
                    bool color, bool verbose)
{
    const char *reset = color ? "\033[0m" : "", *dim = color ? "\033[2m" : "", *bold = color ? "\033[1m" : "";
    fprintf(f, "%s%s%s  %s  (%s runner, %s, seed %llu)\n", bold, s->c->name, reset, s->c->path, s->be->name,
            s->last_load.compiler, (unsigned long long)s->o.seed);
    int count[5] = {0}, same[KG_REPORT_MAX];
    if (n > KG_REPORT_MAX) n = KG_REPORT_MAX;
    kg_cause_groups(v, n, same);
    for (int i = 0; i < n; i++) {
        count[v[i].status]++;
        if (kg_verdict_failed(&v[i]) && same[i] >= 0) {
            /* one defect, one report: its evidence is the owning gate's (this one's under -v) */
            fprintf(f, "  %-16s %s%-7s%s (same cause as %s) %s%s%s\n", v[i].gate->id,
                    color ? status_color(v[i].status) : "", kg_status_name(v[i].status), reset, v[same[i]].gate->id,
                    dim, v[i].summary, reset);
            if (!verbose) continue;
        } else {
            fprintf(f, "  %-16s %s%-7s%s %s\n", v[i].gate->id, color ? status_color(v[i].status) : "",
                    kg_status_name(v[i].status), reset, v[i].summary);
        }
        if (kg_verdict_failed(&v[i]) && same[i] < 0) {
            char line[KG_SUMMARY_MAX + 64];
            int len =
                snprintf(line, sizeof line, "cause: %s: %s", kg_verdict_cause_id(&v[i]), kg_verdict_cause_line(&v[i]));
            print_wrapped(f, line, len < (int)sizeof line ? len : (int)sizeof line - 1, bold, reset);
        }
        bool show = v[i].status == KG_FAIL || v[i].status == KG_ERROR || verbose;
        if (!show) continue;
        if (v[i].extra && json_object_get(v[i].extra, "lines")) {
            /* the gate's own evidence lines (injected values next to the outputs they broke...) */
            size_t q;
            json_t *line;
            json_array_foreach(json_object_get(v[i].extra, "lines"), q, line)
            {
                const char *t = json_string_value(line);
                if (t && (same[i] >= 0 || strcmp(t, v[i].cause_text)))
                    fprintf(f, "%s                   %s%s\n", dim, t, reset);
            }
        }
        if (v[i].ev.valid && v[i].status != KG_PASS) {
            fprintf(f, "%s                   at %s%s%s", dim, v[i].ev.output, v[i].ev.index[0] == '[' ? "" : ", ",
                    v[i].ev.index);
            if (v[i].ev.case_id[0]) fprintf(f, "  [%s]", v[i].ev.case_id);
            fprintf(f, "%s\n", reset);
        }
        if (v[i].detail[0] && (v[i].status != KG_PASS || verbose)) {
            const char *p = v[i].detail;
            while (*p) {
                const char *nl = strchr(p, '\n');
                int len = nl ? (int)(nl - p) : (int)strlen(p);
                print_wrapped(f, p, len, dim, reset);
                p += len + (nl ? 1 : 0);
            }
        }
        if (v[i].replay[0] && v[i].status != KG_PASS) fprintf(f, "                   replay: %s\n", v[i].replay);
    }
    enum kg_status o = kg_overall(v, n);
    fprintf(f, "verdict: %s%s%s (", color ? status_color(o) : "", kg_overall_name(o), reset);
    const char *sep = "";
    for (int st = 0; st < 5; st++)
        if (count[st]) {
            fprintf(f, "%s%d %s", sep, count[st], kg_status_name((enum kg_status)st));
            sep = ", ";
        }
    fprintf(f, ") in %.2f s [compile %.2f s, inputs %.2f s, oracle %.2f s, runs %.2f s (%d), compare %.2f s]\n",
            s->t_total, s->t_compile, s->t_inputs, s->t_oracle, s->t_run, s->nruns,
            kg_compare_seconds() - s->compare0 + s->t_compare);
    if (s->nstalls) { /* a pass that waited: said even where the gate's details are not shown */
        char words[400];
        kg_session_stall_words(s, s->nstalls, words, sizeof words);
        fprintf(f, "note: %s\n", words);
    }
    if (b && b->asked)
        fprintf(f, "standard test (%s, atol=rtol=%g): %s: %s\n", b->name, b->tol,
                b->result == 1   ? "pass"
                : b->result == 0 ? "FAIL"
                                 : "error",
                b->why);
}
