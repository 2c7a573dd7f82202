/* fuzz_contract.c: a libFuzzer harness for the contract parser. An input is a whole kernel file,
 * loaded from memory (kg_contract_load_text) once as host C and once as CUDA, so that both
 * languages' keys are reached. A refusal must name the file; a contract that loads must hold
 * what the parser promises (invariants below: each a check the parser makes), and is evaluated
 * at its nominal shape and at each sweep value, as a check does next, with the nominal case's
 * id read back into the same case. A crash, a sanitizer report, a leak or a broken promise
 * (__builtin_trap) is a finding. tests/fuzz/README says how it is built and run. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "contract/case.h"
#include "contract/contract.h"

#define PROMISE(cond)                                                                                                  \
    do {                                                                                                               \
        if (!(cond)) __builtin_trap();                                                                                 \
    } while (0)

/* What a loaded contract holds: counts within bounds, a dim for every rank, k in range,
 * int-typed symbols within int, input distributions finite and ordered, aliases one to one,
 * dtypes distinct, a launch for CUDA. */
static void invariants(const struct kg_contract *c)
{
    PROMISE(c->nargs >= 1 && c->nargs <= KG_MAX_ARGS && c->nsyms >= 0 && c->nsyms <= KG_MAX_SYMS);
    PROMISE(c->tol_k >= 1 && c->tol_k <= KG_TOL_K_MAX);
    PROMISE(c->lang != KG_LANG_CUDA || (c->has_launch && c->grid[0] && c->block[0]));
    for (int s = 0; s < c->nsyms; s++) PROMISE(c->nominal[s] >= 0 && c->nsweep[s] <= KG_MAX_SWEEP);
    for (int i = 0; i < c->ndtypes; i++)
        for (int j = 0; j < i; j++) PROMISE(c->dtypes[i] != c->dtypes[j]);
    for (int i = 0; i < c->nargs; i++) {
        const struct kg_arg *a = &c->args[i];
        if (a->kind == KG_ARG_TENSOR) {
            PROMISE(a->rank >= 0 && a->rank <= KG_MAX_RANK);
            for (int d = 0; d < a->rank; d++) PROMISE(a->dims[d] && kg_expr_text(a->dims[d]));
        }
        if (a->kind == KG_ARG_INT && a->sym >= 0) {
            PROMISE(c->nominal[a->sym] <= INT32_MAX);
            for (int v = 0; v < c->nsweep[a->sym]; v++) PROMISE(c->sweep[a->sym][v] <= INT32_MAX);
        }
        if (a->kind == KG_ARG_INT && a->sym < 0) PROMISE(a->value >= INT32_MIN && a->value <= INT32_MAX);
        if (a->dist == KG_AD_NORMAL) PROMISE(isfinite(a->dist_a) && isfinite(a->dist_b) && a->dist_b > 0);
        if (a->dist == KG_AD_UNIFORM) PROMISE(isfinite(a->dist_a) && isfinite(a->dist_b) && a->dist_a < a->dist_b);
        if (a->dist == KG_AD_INT)
            PROMISE(a->dist_a == floor(a->dist_a) && a->dist_b == floor(a->dist_b) && a->dist_a <= a->dist_b &&
                    fabs(a->dist_a) <= 0x1p53 && fabs(a->dist_b) <= 0x1p53);
        if (a->dist != KG_AD_DEFAULT) PROMISE(kg_arg_is_input(a));
        if (c->alias_of[i] >= 0) {
            PROMISE(a->kind == KG_ARG_TENSOR && a->io == KG_OUT && kg_arg_is_input(&c->args[c->alias_of[i]]));
            for (int j = 0; j < i; j++) PROMISE(c->alias_of[j] != c->alias_of[i]);
        }
    }
}

/* The contract at the nominal shape (its case id read back gives the same case), then with
 * each symbol at each of its sweep values. */
static void evaluate(const struct kg_contract *c)
{
    struct kg_case k, back;
    struct kg_err e;
    enum kg_dtype d = kg_contract_default_dtype(c);
    char id[KG_CASE_ID_MAX];
    if (!kg_case_init(&k, c, NULL, d, 1, KG_DIST_NORMAL, &e)) {
        kg_case_id(&k, id, sizeof id);
        if (strlen(id) < sizeof id - 1) { /* a truncated id is not expected to read back */
            PROMISE(kg_case_from_id(c, id, &back, &e) == 0);
            PROMISE(back.dtype == k.dtype && back.seed == k.seed && back.dist == k.dist);
            PROMISE(!memcmp(back.sym, k.sym, sizeof k.sym[0] * (size_t)c->nsyms));
        }
    }
    int64_t sym[KG_MAX_SYMS];
    for (int s = 0; s < c->nsyms; s++)
        for (int v = 0; v < c->nsweep[s]; v++) {
            memcpy(sym, c->nominal, sizeof sym);
            sym[s] = c->sweep[s][v];
            kg_case_init(&k, c, sym, d, 1, KG_DIST_NORMAL, &e);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"fuzz.c", "fuzz.cu"};
    for (int i = 0; i < 2; i++) {
        struct kg_contract *c;
        struct kg_err e;
        if (kg_contract_load_text(names[i], (const char *)data, size, &c, &e)) {
            /* every refusal says something, and names the file */
            if (strncmp(e.msg, names[i], strlen(names[i]))) __builtin_trap();
            continue;
        }
        invariants(c);
        evaluate(c);
        kg_contract_free(c);
    }
    return 0;
}
