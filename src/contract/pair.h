/* pair.h: the contract of a KernelBench pair, synthesised from the problem file. The problem
 * (Model, get_inputs, get_init_inputs, module-level integer constants) is described by its
 * oracle worker as JSON: its constants, and the shape, dtype and kind of every input and
 * output. Describing it again with one constant changed at a time shows how each dim follows
 * the constants; the constants that move dims in ways no simple expression explains are fixed,
 * the others become shape symbols, so that every gate runs on a pair as on a contract kernel. */
#ifndef KG_PAIR_H
#define KG_PAIR_H

#include <jansson.h>

#include "contract/contract.h"

/* Describes the problem with the nsym constants names[i] set to values[i] (nsym 0: as it is):
 * a new reference to the description, or NULL with e filled. */
typedef json_t *(*kg_describe_fn)(void *ud, int nsym, char names[][KG_NAME_MAX], const int64_t *values,
                                  struct kg_err *e);

/* A new contract for candidate CANDIDATE.py (ModelNew) answering PROBLEM.py (Model): both files
 * read, no args yet. NULL with e filled when a file cannot be read. */
struct kg_contract *kg_pair_contract_new(const char *problem, const char *candidate, struct kg_err *e);

/* Fills c's symbols and args from the problem's description doc, asking describe for the
 * perturbed ones. */
int kg_pair_synthesise(struct kg_contract *c, json_t *doc, kg_describe_fn describe, void *ud, struct kg_err *e);

#endif
