/* cli.h: the commands of the kgate command line, one file per family: check.c (`kgate check`,
 * `kgate demo` and the main --help, generated from check's option table) and audit.c (`kgate
 * audit`, `audit-merge`, `report`). main.c only dispatches; each command returns the exit status. */
#ifndef KG_CLI_H
#define KG_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "libkgate.h"

/* One option of a command: its getopt_long entry and its line in --help, kept together so that
 * the help cannot drift from what is parsed. */
struct kg_cli_opt {
    const char *name;
    int has_arg;
    int val;
    const char *arg; /* the argument's name in --help, NULL for a flag */
    const char *help;
};

/* Fills lo[0..n] (n + 1 entries: the last is the terminator) from an option table. */
static inline void kg_cli_longopts(const struct kg_cli_opt *t, int n, struct option *lo)
{
    for (int i = 0; i < n; i++) lo[i] = (struct option){t[i].name, t[i].has_arg, NULL, t[i].val};
    lo[n] = (struct option){0};
}

/* The main help: the commands, then check's options. */
void kg_cli_usage(FILE *f);
/* `kgate check FILE [options]`, or with demo `kgate demo` (the built-in example). */
int kg_cli_check(int argc, char **argv, bool demo);
/* kgate's version and which runners can run here; `kgate __probe`, the probe's child (version.c). */
int kg_cli_version(void);
int kg_cli_probe_here(void);

int kg_cli_audit(int argc, char **argv);
int kg_cli_audit_merge(int argc, char **argv);
int kg_cli_report(int argc, char **argv);
/* `kgate lab [check] [N [DIR]]` (lab.c). */
int kg_cli_lab(int argc, char **argv);

#endif
