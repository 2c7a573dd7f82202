/* state.c: the inspector's state: what it starts with and what it drops when the case changes
 * or another kernel loads, plus the two lookups every command file needs (is a name an output,
 * the current case). The commands themselves are in commands.c, show.c and views.c. */
#include <string.h>

#include "tui/inspector.h"

/* ---- state ------------------------------------------------------------------------------- */

void kg_insp_init(struct kg_insp *in)
{
    memset(in, 0, sizeof *in);
    for (int i = 0; kg_gates[i] && i < KG_MAX_GATES; i++) in->ngates = i + 1;
    in->running = in->selected = -1;
}

void kg_insp_drop_views(struct kg_insp *in)
{
    if (in->have_insp) kg_inspection_free(&in->insp);
    in->have_insp = false;
    for (int j = 0; j < in->ndiff; j++) kg_diffmap_free(&in->diff[j]);
    in->ndiff = 0;
    in->nsweep = 0;
    in->map = KG_MAP_NONE;
}

void kg_insp_drop_kernel(struct kg_insp *in)
{
    kg_insp_drop_views(in);
    for (int i = 0; i < in->ngates; i++)
        if (in->ran[i]) kg_verdict_clear(&in->v[i]);
    memset(in->ran, 0, sizeof in->ran);
    in->selected = in->running = -1;
    in->have_view_case = false;
    kg_session_close(in->s);
    in->s = NULL;
}

void kg_insp_free(struct kg_insp *in)
{
    kg_insp_drop_kernel(in);
}

/* ---- lookups the command files share ------------------------------------------------------- */

/* A line that continues its paragraph: text at the margin, not a list item ("- ", "* ", "1. "). */
static bool flows(const char *p, size_t len)
{
    if (!len || p[0] == ' ' || p[0] == '\t') return false;
    if (len >= 2 && (p[0] == '-' || p[0] == '*') && p[1] == ' ') return false;
    size_t d = 0;
    while (d < len && p[d] >= '0' && p[d] <= '9') d++;
    return !(d && d + 1 < len && (p[d] == '.' || p[d] == ')') && p[d + 1] == ' ');
}

void kg_insp_prose(const struct kg_insp *in, const char *text, FILE *out)
{
    if (!in->fullscreen) {
        fprintf(out, "%s\n", text);
        return;
    }
    bool open = false; /* a flowing line is being written: the next one joins it */
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        while (len && p[len - 1] == ' ') len--;
        bool f = flows(p, len);
        if (open && f)
            fputc(' ', out);
        else if (open)
            fputc('\n', out);
        fwrite(p, 1, len, out);
        open = f;
        if (!f) fputc('\n', out);
        if (!nl) break;
        p = nl + 1;
    }
    if (open) fputc('\n', out);
}

bool kg_insp_is_output(const struct kg_contract *c, const char *name)
{
    int a = kg_contract_arg(c, name);
    return a >= 0 && kg_arg_is_output(&c->args[a]);
}

int kg_insp_current_case(struct kg_insp *in, struct kg_case *k, FILE *out)
{
    struct kg_err e;
    if (kg_inspect_current_case(in->s, k, &e)) {
        fprintf(out, "%s\n", e.msg);
        return -1;
    }
    return 0;
}
