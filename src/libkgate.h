/* libkgate.h: the library every face of kgate calls (`kgate check`, the inspector, `kgate
 * audit`), in one include; src/cli/ includes only this.
 *
 * Ownership, stated once: a function that fills a caller's struct (kg_exec, kg_session_inputs,
 * kg_session_expect, kg_inspect_run, kg_inspect_replay, kg_verdict after a gate) transfers what
 * the struct points to; release it with the matching *_free / kg_verdict_clear. Pointers a
 * function returns into a session (its contract, its recorded runs) stay the session's and die
 * with kg_session_close. Strings in structs are fixed arrays, never heap pointers. No function
 * prints or exits: errors come back as -1 (or an exit code) with a struct kg_err message that
 * names file and line where there is one. */
#ifndef LIBKGATE_H
#define LIBKGATE_H

#include "audit/audit.h"
#include "base/sandbox.h"
#include "contract/builtin.h"
#include "contract/case.h"
#include "contract/contract.h"
#include "engine/engine.h"
#include "engine/inspect.h"
#include "engine/occupancy.h"
#include "engine/report.h"
#include "engine/torch.h"
#include "gates/gate.h"
#include "runners/runner.h"
#include "worker/worker.h"

#endif
