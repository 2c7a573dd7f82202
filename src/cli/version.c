/* version.c: `kgate --version` (and `kgate check --version`): the version, then which runners
 * can run here and why not, the CUDA libraries probed in a child process (`kgate __probe`) so
 * that the judge never loads them. */
#include <stdio.h>

#include "cli/cli.h"

/* The version, then which runners can run here and why not (`kgate --version`, and `kgate
 * check --version`). */
int kg_cli_version(void)
{
    static char out[8192];
    printf("kgate %s\n", PACKAGE_VERSION);
    fflush(stdout);
    kg_runners_probe("/proc/self/exe", NULL, out, sizeof out);
    fputs(out, stdout);
    return KG_EXIT_OK;
}

/* `kgate __probe`: the CUDA libraries probed in this (child) process, for kg_cli_version(). */
int kg_cli_probe_here(void)
{
    static char out[4096];
    kg_runners_probe_here(out, sizeof out);
    fputs(out, stdout);
    return KG_EXIT_OK;
}
