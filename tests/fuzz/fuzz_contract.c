/* fuzz_contract.c: a libFuzzer harness for the contract parser. An input is a whole kernel file,
 * loaded from memory (kg_contract_load_text) once as host C and once as CUDA, so that both
 * languages' keys are reached; a contract that loads is then evaluated at its nominal shape and
 * at each sweep value, as a check does next. Anything but -1 with a message or a contract that
 * frees cleanly is a finding: a crash, a sanitizer report, a leak. tests/fuzz/README says how
 * it is built and run. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "contract/case.h"
#include "contract/contract.h"

/* The contract at the nominal shape, then with each symbol at each of its sweep values. */
static void evaluate(const struct kg_contract *c)
{
    struct kg_case k;
    struct kg_err e;
    enum kg_dtype d = kg_contract_default_dtype(c);
    char id[KG_CASE_ID_MAX];
    if (!kg_case_init(&k, c, NULL, d, 1, KG_DIST_NORMAL, &e)) kg_case_id(&k, id, sizeof id);
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
        evaluate(c);
        kg_contract_free(c);
    }
    return 0;
}
