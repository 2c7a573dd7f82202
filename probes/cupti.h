/* cupti.h (probes): the CUPTI probe of the CUDA runner. It records every kernel that runs in
 * the worker process (name, grid, block, registers, shared and local memory, duration), so
 * the judge can see that the candidate's kernel actually ran and with what resources.
 * libcupti is dlopen'd; without it, or after any CUPTI failure, runs still work and report
 * nlaunch = -1 (the probe is a witness, never a reason for a run to fail).
 *
 * Not to be confused with the toolkit's <cupti.h>: probes/cupti.c includes the toolkit's
 * parts by their own names (cupti_activity.h, cupti_version.h). */
#ifndef KG_PROBE_CUPTI_H
#define KG_PROBE_CUPTI_H

#include <stddef.h>

struct kg_reply;

/* Loads libcupti (from <cuda_home>/extras/CUPTI/lib64, <cuda_home>/lib64, $KGATE_CUDA_HOME,
 * the configure-time toolkit, then the loader's search path) and starts recording kernel
 * activity. Call it once, before the CUDA context is created. Returns 0, or -1 with a
 * plain reason in why. Calling it again after success returns 0 and does nothing. */
int kg_cupti_start(const char *cuda_home, char *why, size_t n);

/* After a successful synchronize: flushes CUPTI and moves the records of the kernels that
 * completed since the previous call into rep->launch[] (at most KG_MAX_LAUNCH_RECS, oldest
 * first), setting rep->nlaunch and rep->cupti_ok = 1. When the probe is not running or a
 * CUPTI call fails: rep->nlaunch = -1, rep->cupti_ok = 0, and a note appended to rep->msg
 * (only for failures after a successful start). */
void kg_cupti_collect(struct kg_reply *rep);

/* For `kgate --version`: loads libcupti as kg_cupti_start would and reads its API version,
 * recording nothing. Returns 0 with *version, or -1 with a plain reason in why. */
int kg_cupti_version(const char *cuda_home, unsigned *version, char *why, size_t n);

/* Stops recording and drops what was not collected. libcupti stays loaded. */
void kg_cupti_stop(void);

#endif
