/* values.c: releasing what runs and the oracle filled in (values.h). */
#include "engine/values.h"

void kg_exec_free(struct kg_exec *x)
{
    for (int i = 0; i < KG_MAX_ARGS; i++) {
        kg_tensor_free(&x->before[i]);
        kg_tensor_free(&x->after[i]);
        kg_tensor_free(&x->after2[i]);
    }
}

void kg_expect_free(struct kg_expect *x)
{
    for (int j = 0; j < KG_OP_MAX_IO; j++) {
        kg_tensor_free(&x->exact[j]);
        kg_tensor_free(&x->ref[j]);
        kg_tensor_free(&x->alt[j]);
    }
}
