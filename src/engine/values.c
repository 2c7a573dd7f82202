/* values.c: releasing what runs and the oracle filled in (values.h). */
#include "engine/values.h"

#include <string.h>

#include "contract/case.h"

void kg_exec_free(struct kg_exec *x)
{
    for (int i = 0; i < KG_MAX_ARGS; i++) {
        if (x->views & (1u << i))
            x->before[i].data = NULL;
        else
            kg_tensor_free(&x->before[i]);
        if (x->seg) { /* views into the segment */
            x->after[i].data = x->after2[i].data = NULL;
            continue;
        }
        kg_tensor_free(&x->after[i]);
        kg_tensor_free(&x->after2[i]);
    }
    x->views = 0;
    kg_seg_put(x->seg);
    x->seg = NULL;
}

bool kg_exec_kept_prefill(const struct kg_exec *x, int i, int64_t q)
{
    size_t es = kg_dtype_size(x->after[i].dtype);
    const uint8_t *a = (const uint8_t *)x->after[i].data + (size_t)q * es;
    if (x->fill == KG_FILL_GARBAGE) /* no copy: the worker drew it (worker_fills_outputs) */
        return x->before[i].data && !memcmp(a, (const uint8_t *)x->before[i].data + (size_t)q * es, es);
    const uint8_t b = x->fill == KG_FILL_SENTINEL_A ? 0xFF : x->fill == KG_FILL_SENTINEL_B ? 0x7F : 0;
    for (size_t j = 0; j < es; j++)
        if (a[j] != b) return false;
    return true;
}

int64_t kg_exec_bits_differ(const struct kg_case *k, const struct kg_exec *a, const struct kg_exec *b,
                            bool (*fn)(void *ctx, int arg, int64_t q), void *ctx)
{
    int64_t n = 0;
    for (int i = 0; i < k->c->nargs; i++) {
        if (!kg_arg_is_output(&k->c->args[i]) || !k->numel[i]) continue;
        size_t es = kg_dtype_size(k->adtype[i]);
        const uint8_t *pa = a->after[i].data, *pb = b->after[i].data;
        if (!memcmp(pa, pb, (size_t)k->numel[i] * es)) continue; /* the usual case */
        for (int64_t q = 0; q < k->numel[i]; q++) {
            if (!memcmp(pa + q * es, pb + q * es, es)) continue;
            n++;
            if (!fn(ctx, i, q)) return n;
        }
    }
    return n;
}

struct first_diff {
    bool first_only;
    int arg;
    int64_t idx;
};

static bool note_first(void *ctx, int arg, int64_t q)
{
    struct first_diff *f = ctx;
    if (f->idx < 0) {
        f->arg = arg;
        f->idx = q;
    }
    return !f->first_only;
}

int64_t kg_exec_first_diff(const struct kg_case *k, const struct kg_exec *a, const struct kg_exec *b, bool first_only,
                           int *arg, int64_t *idx)
{
    struct first_diff f = {.first_only = first_only, .idx = -1};
    const int64_t n = kg_exec_bits_differ(k, a, b, note_first, &f);
    if (f.idx >= 0) {
        *arg = f.arg;
        *idx = f.idx;
    }
    return n;
}

void kg_expect_free(struct kg_expect *x)
{
    if (x->fetched) { /* this copy's own fetch of resident values */
        for (int j = 0; j < KG_OP_MAX_IO; j++) x->exact[j].data = x->ref[j].data = NULL;
        kg_seg_put(x->fetched);
        x->fetched = NULL;
    }
    if (x->holds) {
        (*x->holds)--;
        memset(x, 0, sizeof *x);
        return;
    }
    if (x->resident.id && x->resident.drop) x->resident.drop(x->resident.s, x->resident.id);
    x->resident.id = 0;
    for (int j = 0; j < KG_OP_MAX_IO; j++) {
        if (x->seg) {
            x->exact[j].data = x->ref[j].data = NULL;
        } else {
            kg_tensor_free(&x->exact[j]);
            kg_tensor_free(&x->ref[j]);
        }
        kg_tensor_free(&x->alt[j]);
    }
    kg_seg_put(x->seg);
    x->seg = NULL;
}
