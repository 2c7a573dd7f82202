/* lab.h: `kgate lab`, the guided lab. Lessons are embedded in the binary (tui/lab/NN-slug/:
 * lesson.json, the kernel and its support files, through src/base/embed.awk); this module lists
 * them, copies one into a student's folder, shows its brief and graded hints, and checks a
 * student's fix by running every gate. Nothing here includes ncurses.h: `kgate lab check` works
 * in a build without the inspector. */
#ifndef KG_TUI_LAB_H
#define KG_TUI_LAB_H

#include <stdbool.h>
#include <stdio.h>

#include "base/util.h"

#define KG_LAB_HINTS    3
#define KG_LAB_TEXT_MAX 1024

struct kg_lesson {
    int number;             /* 1-based, the order of the lessons */
    char dir[64];           /* its folder in tui/lab/, e.g. "03-nonfinite" */
    char title[128];        /* one line */
    char gate[32];          /* the gate that finds the bug, or "contract" */
    char kernel[64];        /* the file the inspector opens; the others support it */
    bool gpu;               /* needs a GPU (a .cu kernel, or a GPU-only gate) */
    bool write_contract;    /* the student writes the contract header ("contract": "write") */
    char entry[64];         /* with write_contract: the entry the contract must name */
    char may_change[4][16]; /* contract keys the fix may change (e.g. launch) */
    int nmay;
    char brief[KG_LAB_TEXT_MAX];
    char hints[KG_LAB_HINTS][KG_LAB_TEXT_MAX];
};

/* The number of lessons, and lesson n (1-based) into l: 0, or -1 with e naming the embedded
 * lesson file and line that does not parse. */
int kg_lab_count(void);
int kg_lab_lesson(int n, struct kg_lesson *l, struct kg_err *e);

/* Whether this machine can run the lesson (a GPU lesson needs a GPU device); why not, if not. */
bool kg_lab_can_run(const struct kg_lesson *l, char *why, size_t n);

/* The lesson table of `kgate lab`: number, title, gate, GPU mark, whether it runs here. */
int kg_lab_list(FILE *out);

/* Copies the lesson's files into dir (created if missing). A file there that differs from the
 * lesson's (the student's edits) is kept unless force, and out says so. 0 or -1 with e. */
int kg_lab_copy(const struct kg_lesson *l, const char *dir, bool force, FILE *out, struct kg_err *e);

/* The brief: what the kernel should do, what to find, and how to ask for hints. */
void kg_lab_brief(const struct kg_lesson *l, const char *path, FILE *out);

/* `kgate lab check`: runs every gate on the student's copy in dir. Returns KG_EXIT_OK when every
 * gate passes or skips (at least one passing), KG_EXIT_FAIL with what still fails on out,
 * KG_EXIT_USAGE when dir has no copy of the lesson, KG_EXIT_UNAVAILABLE when the lesson cannot
 * run here. */
int kg_lab_check(const struct kg_lesson *l, const char *dir, FILE *out);

#endif
