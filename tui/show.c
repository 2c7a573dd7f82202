/* show.c: the commands about the current case: `show case`, the pins `set`, `dtype`, `seed`
 * and `dist` (after which the views follow the new case), and `resources`, which prints what
 * the runner reported about registers, shared memory and occupancy, N/A where it reported
 * nothing. Each writes plain text to a FILE, as every command does. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/occupancy.h"
#include "tui/inspector.h"

/* ---- the case ---------------------------------------------------------------------------- */

static const char *io_name(const struct kg_arg *a)
{
    static const char *const io[] = {"in", "out", "inout", "scratch"};
    static const char *const kind[] = {"tensor", "int", "long", "float", "double"};
    return a->kind == KG_ARG_TENSOR ? io[a->io] : kind[a->kind];
}

static void print_args(const struct kg_case *k, FILE *out)
{
    const struct kg_contract *c = k->c;
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        fprintf(out, "  %-10s %-7s ", a->name, io_name(a));
        if (a->kind != KG_ARG_TENSOR) {
            fprintf(out, "%.17g\n", k->scalar[i]);
            continue;
        }
        fprintf(out, "%s[", kg_dtype_name(k->adtype[i]));
        for (int d = 0; d < k->shape[i].rank; d++) fprintf(out, "%s%lld", d ? "," : "", (long long)k->shape[i].dims[d]);
        fprintf(out, "]  (%lld elements)\n", (long long)k->numel[i]);
    }
}

/* `show guards`: the guard bytes the bounds gate saw changed (offset from the buffer, value). */
static int show_guards(const struct kg_insp *in, FILE *out)
{
    for (int i = 0; i < in->ngates; i++) {
        if (strcmp(kg_gates[i]->id, "bounds")) continue;
        const json_t *ch = in->ran[i] && in->v[i].extra ? json_object_get(in->v[i].extra, "changed") : NULL;
        if (!ch || !json_array_size(ch)) {
            fprintf(out, "no changed guard bytes recorded (%s)\n", in->ran[i] ? in->v[i].summary : "run bounds first");
            return in->ran[i] ? 0 : -1;
        }
        fprintf(out, "%s\nchanged guard bytes (offset from the buffer's first byte; negative: before it):\n",
                in->v[i].summary);
        size_t q;
        json_t *b;
        json_array_foreach(ch, q, b)
        {
            fprintf(out, "  %s%+lld: 0x%02llx (the guard was 0x%02llx)\n", in->v[i].ev.output,
                    (long long)json_integer_value(json_object_get(b, "offset")),
                    (long long)json_integer_value(json_object_get(b, "value")),
                    (long long)json_integer_value(json_object_get(b, "guard")));
        }
        return 0;
    }
    return -1;
}

static void print_value(double v, FILE *out)
{
    if (isnan(v))
        fprintf(out, "NaN");
    else if (isinf(v))
        fprintf(out, v > 0 ? "+Inf" : "-Inf");
    else
        fprintf(out, "%.9g", v);
}

/* `show inputs [NAME] [INDEX]`: the inputs of the current case (the failing gate's, once one
 * is selected) around a flat or I,J index (default: the selected verdict's element). */
static int show_inputs(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    struct kg_case k;
    if (in->have_view_case)
        k = in->view_case;
    else if (kg_insp_current_case(in, &k, out))
        return -1;
    const struct kg_contract *c = k.c;
    const char *name = NULL, *index = NULL;
    for (int a = 2; a < argc; a++) {
        if (kg_contract_arg(c, argv[a]) >= 0)
            name = argv[a];
        else
            index = argv[a];
    }
    struct kg_inputs inp;
    struct kg_err e;
    if (kg_session_inputs(in->s, &k, &inp, &e)) {
        fprintf(out, "%s\n", e.msg);
        return -1;
    }
    char id[KG_CASE_ID_MAX];
    kg_case_id(&k, id, sizeof id);
    fprintf(out, "inputs of %s\n", id);
    int64_t at =
        in->selected >= 0 && in->ran[in->selected] && in->v[in->selected].ev.valid ? in->v[in->selected].ev.flat : 0;
    int shown = 0;
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        if (a->kind != KG_ARG_TENSOR || !kg_arg_is_input(a) || (name && strcmp(a->name, name))) continue;
        const struct kg_tensor *t = &inp.t[i];
        int64_t flat = at < 0 ? 0 : at;
        if (index) {
            /* I,J,... in the tensor's dims, or one flat number */
            flat = 0;
            char *dup = strdup(index), *save = NULL;
            int d = 0;
            for (char *p = strtok_r(dup, ",[]", &save); p; p = strtok_r(NULL, ",[]", &save), d++)
                flat = (d && d < t->rank ? flat * t->dims[d] : flat) + atoll(p);
            free(dup);
        }
        if (flat >= t->numel) flat = t->numel - 1;
        fprintf(out, "%s %s[", a->name, kg_dtype_name(t->dtype));
        for (int d = 0; d < t->rank; d++) fprintf(out, "%s%lld", d ? "," : "", (long long)t->dims[d]);
        fprintf(out, "]:\n");
        for (int64_t q = flat - 4 < 0 ? 0 : flat - 4; q < t->numel && q <= flat + 4; q++) {
            char ix[KG_INDEX_MAX];
            kg_tensor_index_str(t, q, ix, sizeof ix);
            fprintf(out, "  %s%s%s = ", q == flat ? ">" : " ", a->name, ix);
            print_value(kg_load(t->dtype, t->data, q), out);
            for (int sp = 0; sp < inp.nspecial; sp++)
                if (inp.special[sp].arg == i && inp.special[sp].index == q) fprintf(out, "   <- injected");
            fprintf(out, "\n");
        }
        for (int sp = 0, n = 0; sp < inp.nspecial; sp++)
            if (inp.special[sp].arg == i) {
                char ix[KG_INDEX_MAX];
                kg_tensor_index_str(t, inp.special[sp].index, ix, sizeof ix);
                fprintf(out, "%s%s%s = ", n++ ? ", " : "  injected: ", a->name, ix);
                print_value(inp.special[sp].value, out);
                if (sp == inp.nspecial - 1 || n == 8) {
                    fprintf(out, "\n");
                    break;
                }
            }
        shown++;
    }
    kg_inputs_free(&inp);
    if (!shown) {
        fprintf(out, "no input named '%s' (show case lists them)\n", name ? name : "");
        return -1;
    }
    return 0;
}

int kg_insp_cmd_show(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    if (argc >= 2 && !strcmp(argv[1], "inputs")) return show_inputs(in, argc, argv, out);
    if (argc == 2 && !strcmp(argv[1], "guards")) return show_guards(in, out);
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "case"))) {
        fprintf(out, "usage: show case | show inputs [NAME] [INDEX] | show guards\n");
        return -1;
    }
    struct kg_case k;
    if (kg_insp_current_case(in, &k, out)) return -1;
    char id[KG_CASE_ID_MAX];
    kg_case_id(&k, id, sizeof id);
    fprintf(out, "current case: %s\n", id);
    print_args(&k, out);
    if (k.c->has_launch)
        fprintf(out, "launch: grid (%lld,%lld,%lld) block (%lld,%lld,%lld) smem %lld B\n", (long long)k.grid[0],
                (long long)k.grid[1], (long long)k.grid[2], (long long)k.block[0], (long long)k.block[1],
                (long long)k.block[2], (long long)k.smem);
    else
        fprintf(out, "launch: none declared (a host kernel is called once)\n");
    const struct kg_session_opts *o = kg_session_opts(in->s);
    fprintf(out, "gates run at: %s shape, %s, %s inputs\n", o->pin_shape ? "this (pinned)" : "the nominal",
            o->dtype >= 0 ? "this dtype" : "every dtype instance", o->dist >= 0 ? "these" : "each gate's own");
    if (in->have_view_case) {
        kg_case_id(&in->view_case, id, sizeof id);
        fprintf(out, "heatmap case: %s (%s)\n", id, in->view_origin);
    }
    return 0;
}

/* After set / dtype / seed / dist: the heatmap follows the current case again. */
static void case_changed(struct kg_insp *in, FILE *out)
{
    in->have_view_case = false;
    kg_insp_drop_views(in);
    struct kg_case k;
    if (kg_insp_current_case(in, &k, out)) return;
    char id[KG_CASE_ID_MAX];
    kg_case_id(&k, id, sizeof id);
    fprintf(out, "current case: %s\n", id);
    fprintf(out, "gates run from now on use it; verdicts shown were made before (run them again)\n");
}

int kg_insp_cmd_set(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    char text[256] = "";
    size_t len = 0;
    for (int i = 1; i < argc; i++) kg_appendf(text, sizeof text, &len, "%s", argv[i]);
    char *eq = strchr(text, '='), *end;
    if (argc < 2 || !eq) {
        fprintf(out, "usage: set SYMBOL=VALUE   (show case lists the symbols)\n");
        return -1;
    }
    *eq = 0;
    errno = 0;
    long long v = strtoll(eq + 1, &end, 10);
    if (errno || *end || end == eq + 1) {
        fprintf(out, "set: '%s' is not an integer\n", eq + 1);
        return -1;
    }
    struct kg_err e;
    if (kg_inspect_set(in->s, text, v, &e)) {
        fprintf(out, "%s\n", e.msg);
        return -1;
    }
    case_changed(in, out);
    return 0;
}

int kg_insp_cmd_dtype(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    enum kg_dtype t;
    struct kg_err e;
    if (argc != 2 || kg_dtype_parse(argv[1], strlen(argv[1]), &t) || t == KG_DTYPE_T) {
        fprintf(out, "usage: dtype f32|f16|bf16   (one of the contract's dtypes)\n");
        return -1;
    }
    if (kg_inspect_dtype(in->s, t, &e)) {
        fprintf(out, "%s\n", e.msg);
        return -1;
    }
    case_changed(in, out);
    return 0;
}

int kg_insp_cmd_seed(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = argc == 2 ? strtoull(argv[1], &end, 10) : 0;
    if (argc != 2 || errno || *end || end == argv[1] || argv[1][0] == '-') {
        fprintf(out, "usage: seed N   (a non-negative integer)\n");
        return -1;
    }
    kg_inspect_seed(in->s, v);
    case_changed(in, out);
    return 0;
}

int kg_insp_cmd_dist(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    enum kg_dist d;
    if (argc == 2 && !strcmp(argv[1], "auto")) {
        kg_inspect_dist(in->s, -1);
    } else if (argc == 2 && !kg_dist_parse(argv[1], &d)) {
        kg_inspect_dist(in->s, (int)d);
    } else {
        fprintf(out, "usage: dist normal|uniform|unit|binary|large-mean|mixed|special|auto (auto: each gate's own)\n");
        return -1;
    }
    case_changed(in, out);
    return 0;
}

/* ---- resources ----------------------------------------------------------------------------- */

static void resources_host(FILE *out)
{
    static const char *const fields[] = {"registers/thread", "shared memory", "local memory (spills)", "block, grid",
                                         "occupancy",        "duration",      "Tensor Memory"};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        fprintf(out, "  %-22s N/A on the host runner\n", fields[i]);
    fprintf(out, "These are GPU-only: the CUDA driver and the CUPTI probe report them when a .cu kernel\n"
                 "runs on the CUDA runner.\n");
}

static void occupancy_line(const struct kg_dev_info *d, int64_t threads, int regs, int64_t smem, FILE *out)
{
    struct kg_occupancy o;
    kg_occupancy(d, threads, regs, smem, &o);
    if (!o.valid) {
        fprintf(out, "     occupancy N/A (device or kernel attributes unknown)\n");
        return;
    }
    fprintf(out, "     occupancy %.0f%%: %d of %d warps per SM (%d blocks of %d warps; limited by %s)\n",
            100 * o.occupancy, o.active_warps, o.max_warps, o.blocks_per_sm, o.warps_per_block, o.limiter);
}

/* Without launch records: the contract's launch at the current case, with the attributes. */
static void resources_contract_launch(struct kg_insp *in, FILE *out)
{
    const struct kg_session *s = in->s;
    struct kg_case k;
    struct kg_err e;
    if (!kg_session_contract(s)->has_launch || kg_inspect_current_case(in->s, &k, &e)) return;
    int64_t threads = k.block[0] * k.block[1] * k.block[2];
    const struct kg_func_attrs *f = &kg_session_last_load(s)->attrs;
    fprintf(out, "the contract's launch at the current case: grid %lldx%lldx%lld block %lldx%lldx%lld smem %lld B\n",
            (long long)k.grid[0], (long long)k.grid[1], (long long)k.grid[2], (long long)k.block[0],
            (long long)k.block[1], (long long)k.block[2], (long long)k.smem);
    if (f->valid) occupancy_line(&kg_session_last_load(s)->dev, threads, f->regs, k.smem + f->smem_static, out);
}

static void resources_launches(struct kg_insp *in, FILE *out)
{
    const struct kg_session *s = in->s;
    const struct kg_reply *r = kg_session_last_run(s);
    const struct kg_dev_info *d = &kg_session_last_load(s)->dev;
    if (!r) {
        fprintf(out, "launches: none yet (run a gate or heatmap first)\n");
        resources_contract_launch(in, out);
        return;
    }
    if (r->nlaunch < 0) {
        fprintf(out, "launches: N/A (the CUPTI probe is unavailable here)");
        if (r->seconds > 0) fprintf(out, "; the last kernel took %.3g us", r->seconds * 1e6);
        fprintf(out, "\n");
        resources_contract_launch(in, out);
        return;
    }
    fprintf(out, "launches of the last run (%d, CUPTI):\n", r->nlaunch);
    for (int i = 0; i < r->nlaunch && i < KG_MAX_LAUNCH_RECS; i++) {
        const struct kg_launch_rec *l = &r->launch[i];
        fprintf(out, "  %-24.24s grid %dx%dx%d block %dx%dx%d  %d regs  smem %d+%d B  local %d B  %.3g us\n", l->name,
                l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->regs, l->smem_static,
                l->smem_dynamic, l->local_bytes, l->seconds * 1e6);
        occupancy_line(d, (int64_t)l->block[0] * l->block[1] * l->block[2], l->regs,
                       (int64_t)l->smem_static + l->smem_dynamic, out);
    }
}

static void resources_gpu(struct kg_insp *in, FILE *out)
{
    const struct kg_session *s = in->s;
    const struct kg_dev_info *d = &kg_session_last_load(s)->dev;
    const struct kg_func_attrs *f = &kg_session_last_load(s)->attrs;
    if (d->valid)
        fprintf(out, "device: %s (sm_%d%d, %d SMs, %lld threads, %lld registers, %lld KiB shared memory per SM)\n",
                d->name, d->cc_major, d->cc_minor, d->sm_count, (long long)d->max_threads_per_sm,
                (long long)d->regs_per_sm, (long long)d->smem_per_sm / 1024);
    else
        fprintf(out, "device: N/A (not reported by the runner)\n");
    if (f->valid) {
        fprintf(out,
                "kernel %s (%s): %d registers/thread, %d B static shared, %d B local (spills), max %d threads/block\n",
                kg_session_contract(s)->entry, kg_session_last_load(s)->compiler, f->regs, f->smem_static,
                f->local_bytes, f->max_threads);
        if (f->tmem_cols >= 0)
            fprintf(out, "Tensor Memory: %d of 512 columns allocated (tcgen05.alloc)\n", f->tmem_cols);
        else
            fprintf(out, "Tensor Memory: none allocated by the PTX\n");
    } else {
        fprintf(out, "kernel attributes: N/A (not read back)\n");
    }
    resources_launches(in, out);
}

int kg_insp_cmd_resources(struct kg_insp *in, int argc, char **argv, FILE *out)
{
    (void)argc;
    (void)argv;
    fprintf(out, "resources of %s (%s runner):\n", kg_session_contract(in->s)->name,
            kg_session_is_host(in->s) ? "host" : "CUDA");
    if (kg_session_is_host(in->s))
        resources_host(out);
    else
        resources_gpu(in, out);
    return 0;
}
