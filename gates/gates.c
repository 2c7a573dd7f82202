/* gates.c: the twelve gates in the order of ARCHITECTURE.md. */
#include <string.h>

#include "gates/gate.h"

extern const struct kg_gate kg_gate_structure, kg_gate_accuracy, kg_gate_nonfinite, kg_gate_determinism,
    kg_gate_freshness, kg_gate_aliasing, kg_gate_placement, kg_gate_shapes, kg_gate_precision, kg_gate_reduction_order,
    kg_gate_bounds, kg_gate_limits;

const struct kg_gate *const kg_gates[] = {
    &kg_gate_structure,
    &kg_gate_accuracy,
    &kg_gate_nonfinite,
    &kg_gate_determinism,
    &kg_gate_freshness,
    &kg_gate_aliasing,
    &kg_gate_placement,
    &kg_gate_shapes,
    &kg_gate_precision,
    &kg_gate_reduction_order,
    &kg_gate_bounds,
    &kg_gate_limits,
    NULL,
};

const int kg_ngates = (int)(sizeof kg_gates / sizeof *kg_gates) - 1;
_Static_assert(sizeof kg_gates / sizeof *kg_gates - 1 <= KG_MAX_GATES, "raise KG_MAX_GATES");

const struct kg_gate *kg_gate_find(const char *id)
{
    for (int i = 0; kg_gates[i]; i++)
        if (!strcmp(kg_gates[i]->id, id)) return kg_gates[i];
    /* accept the underscore spelling of reduction-order */
    if (!strcmp(id, "reduction_order")) return &kg_gate_reduction_order;
    return NULL;
}
