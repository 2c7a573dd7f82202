/* lab_hint.c: the inspector's side of `kgate lab`: `lesson` shows the brief of the lesson the
 * inspector was opened on, `hint` one more of its graded hints each time (what to run, what to
 * look at, what the cause is). */
#include "tui/inspector.h"
#include "tui/lab.h"

static int lesson_of(const struct kg_insp *in, struct kg_lesson *l, FILE *out)
{
    struct kg_err e;
    if (in->lab_lesson <= 0) {
        fprintf(out, "no lesson: this inspector was not opened by kgate lab N (kgate lab lists the lessons)\n");
        return -1;
    }
    if (kg_lab_lesson(in->lab_lesson, l, &e)) {
        fprintf(out, "%s\n", e.msg);
        return -1;
    }
    return 0;
}

int kg_insp_cmd_lesson(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    struct kg_lesson l;
    if (lesson_of(in, &l, out)) return -1;
    kg_lab_brief(&l, in->path[0] ? in->path : l.kernel, out);
    return 0;
}

int kg_insp_cmd_hint(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    static const char *const what[KG_LAB_HINTS] = {"what to run", "what to look at", "what the cause is"};
    struct kg_lesson l;
    if (lesson_of(in, &l, out)) return -1;
    int k = in->lab_hints < KG_LAB_HINTS ? in->lab_hints++ : KG_LAB_HINTS - 1;
    fprintf(out, "hint %d of %d (%s): %s\n", k + 1, KG_LAB_HINTS, what[k], l.hints[k]);
    if (k == KG_LAB_HINTS - 1)
        fprintf(out, "that was the last hint; kgate lab check %d DIR says when it is done\n", l.number);
    return 0;
}
