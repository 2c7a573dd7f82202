/* ledger.h: the host's memory shared out among the checks of one kgate audit. The audit writes
 * a ledger file (its budget in bytes) and names it in KGATE_HOST_LEDGER; each check, once it
 * knows its problem's size, reserves what it will hold at most and waits while the checks
 * already in the ledger leave no room for it. A reservation lasts as long as the process that
 * made it: a check that exits (or is killed) leaves room without a word. The ledger also keeps,
 * per runner kind, the most memory per tensor byte that a check of the audit has been measured
 * to hold (base/memwatch.h), so that later checks reserve from measurements. */
#ifndef KG_LEDGER_H
#define KG_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* Makes the ledger at path with budget bytes and no reservation. */
int kg_ledger_create(const char *path, uint64_t budget, struct kg_err *e);
/* Reserves bytes for this process (once: a second call does nothing and returns 0): at once
 * while the live reservations of other processes leave room for it in the budget, or none is
 * there (a check larger than the budget runs alone); else it waits, polling, until they do or
 * stop(ud) says to stop waiting (stop NULL: never). *waited gets the seconds it waited. -1
 * with e set when the ledger cannot be read or written (the check then goes on unreserved). */
int kg_ledger_reserve(const char *path, uint64_t bytes, bool (*stop)(void *), void *ud, double *waited,
                      struct kg_err *e);

/* Sets this process's reservation to bytes, lower or higher, at once (a running check that
 * knows better: it never waits). */
int kg_ledger_resize(const char *path, uint64_t bytes, struct kg_err *e);
/* The most bytes per tensor byte learned for runner kind so far; 0 when none (or no ledger). */
double kg_ledger_learned(const char *path, const char *kind);
/* Notes that a check of runner kind held ratio bytes per tensor byte: the ledger keeps the most
 * of what it is told. */
int kg_ledger_learn(const char *path, const char *kind, double ratio, struct kg_err *e);

/* What a check of a runner kind reserves before its first gate, for nominal tensors of bytes
 * (out_bytes of them outputs) on top of base (what it holds before drawing anything; 0: not
 * known, KG_LEDGER_HOST_BASE): base plus KG_LEDGER_MARGIN times the most learned per byte for its
 * class (kg_ledger_class), else for its runner, else KG_LEDGER_PER_BYTE per byte and the default
 * base. path NULL or unreadable: the defaults; KGATE_HOST_PER_BYTE=R: R per byte and the default
 * base, whatever was learned (for measuring, and tests). kgate audit asks it too, before a check
 * starts, with base 0. */
#define KG_LEDGER_HOST_BASE ((uint64_t)2 << 30)
uint64_t kg_ledger_need(const char *path, const char *runner, double bytes, double out_bytes, uint64_t base);
/* The class a check learns and reserves by, besides its runner's: "RUNNER/in" where the outputs
 * are under a quarter of the tensors' bytes (a reduction, a loss, a long-K matmul), else
 * "RUNNER/io". */
void kg_ledger_class(const char *runner, double bytes, double out_bytes, char *kind, size_t n);
/* The budget and the live reservations (of processes still running): up to max of them into
 * pid[] and bytes[]; their count, or -1 when the ledger cannot be read. */
int kg_ledger_live(const char *path, uint64_t *budget, long *pid, uint64_t *bytes, int max);

#endif
