/* gate.h: the twelve gates. Each gates/<id>.c exports one `const struct kg_gate kg_gate_<id>`
 * (engine/verdict.h says what a gate is); gates.c lists them in the order of ARCHITECTURE.md.
 * A gate asks the session for cases, runs and oracle values through engine/engine.h, and
 * learns what the session can do from kg_session_can(); it never knows which runner executes
 * the kernel and never reads the session's fields. */
#ifndef KG_GATE_H
#define KG_GATE_H

#include "engine/engine.h"

/* Room for the gates of the registry in arrays sized at compile time (gates.c checks it). */
#define KG_MAX_GATES 32

extern const struct kg_gate *const kg_gates[]; /* in order, NULL-terminated */
extern const int kg_ngates;
const struct kg_gate *kg_gate_find(const char *id);

#endif
