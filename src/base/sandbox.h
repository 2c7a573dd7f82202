/* sandbox.h: what keeps an untrusted kernel from reading expected outputs out of another
 * process. The judge and the oracle workers are non-dumpable (no ptrace, no /proc/PID/mem for
 * anyone without CAP_SYS_PTRACE); a worker drops every capability and sets no_new_privs before
 * it runs a line of the candidate's code, so even a root worker cannot read them. */
#ifndef KG_SANDBOX_H
#define KG_SANDBOX_H

#include <stddef.h>

/* This process's memory is closed to other processes of its user. */
void kg_sandbox_private(void);
/* Drops every capability (effective, permitted, inheritable, bounding) and sets no_new_privs,
 * unless KGATE_SANDBOX=0. 0: done (or turned off), -1: not done, why says so. */
int kg_sandbox_drop(char *why, size_t n);

#endif
