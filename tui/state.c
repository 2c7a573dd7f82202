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
