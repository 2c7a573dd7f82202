/* inspect.h: what the inspector shows, computed by the engine: one case run against the
 * oracle element by element (the heatmap's data), two recorded determinism runs compared bit by
 * bit (`replay N M`), a sweep of one symbol (`sweep`), and the session's adjustable case
 * (`set`, `dtype`, `seed`, `dist`). tui/ only draws these structs. */
#ifndef KG_INSPECT_H
#define KG_INSPECT_H

#include "engine/engine.h"

/* One output of one run, with the oracle's view of every element. Arrays have numel entries
 * and are owned by the struct. */
struct kg_inspect_out {
    char name[KG_NAME_MAX];
    enum kg_dtype dtype;
    int rank;
    int64_t dims[KG_MAX_RANK];
    int64_t numel;
    double *got;      /* the kernel's values, as float64 */
    double *expected; /* the fp64 oracle */
    double *err;      /* compare.h's element error (inf: non-finite mismatch) */
    double scale, ref_err, threshold;
    int64_t worst; /* index of the largest error */
    int64_t nonfinite_mismatch;
    bool pass;
};

struct kg_inspection {
    struct kg_case k;
    int status; /* enum kg_wstatus of the run */
    char msg[1024];
    int nout;
    struct kg_inspect_out out[KG_OP_MAX_IO];
};

/* Runs the session's current case (see kg_inspect_current_case) once and compares it with the
 * oracle. Returns 0 when it ran (r->status may still be an error of the run); -1 with e, before
 * allocating anything, when the case does not fit the budget (kg_inspect_fits). */
int kg_inspect_run(struct kg_session *s, const struct kg_case *k, struct kg_inspection *r, struct kg_err *e);
void kg_inspection_free(struct kg_inspection *r);

/* The case the inspector's commands act on: pinned shape, dtype, seed, dist. */
int kg_inspect_current_case(struct kg_session *s, struct kg_case *k, struct kg_err *e);

/* What one case of the inspector holds in the judge at once, in bytes (saturating): every
 * tensor three times for a run (shared memory, the copy sent, the copy read back), the inputs
 * twice more (memoised, copied) and once as float64 for the oracle, and nine float64 arrays
 * per output (exact, reference and alternative, memoised and copied; the heatmap's got,
 * expected and error). An estimate that errs on the large side. */
uint64_t kg_inspect_case_bytes(const struct kg_case *k);
/* The most one case may take: half of what kgate could still allocate (kg_mem_available). */
uint64_t kg_inspect_budget(void);
/* 0 when case k fits the budget; otherwise -1 with e naming the case, its size and the budget,
 * and (sym >= 0) the largest value of symbol sym that fits. Nothing is allocated. */
int kg_inspect_fits(const struct kg_case *k, int sym, struct kg_err *e);
/* The current case at every instance dtype (what `run` builds first), as kg_inspect_fits. */
int kg_inspect_current_fits(struct kg_session *s, int sym, struct kg_err *e);

/* `set SYM=V`, `dtype D`, `seed N`, `dist NAME`: change the session's current case. A size
 * the budget cannot hold is refused (kg_inspect_fits) and the case stays as it was. */
int kg_inspect_set(struct kg_session *s, const char *sym, int64_t value, struct kg_err *e);
int kg_inspect_dtype(struct kg_session *s, enum kg_dtype t, struct kg_err *e);
void kg_inspect_seed(struct kg_session *s, uint64_t seed);
void kg_inspect_dist(struct kg_session *s, int dist); /* -1: each gate's own */

/* Two recorded determinism runs (1-based), output j: positions whose bits differ. */
struct kg_diffmap {
    char name[KG_NAME_MAX];
    int rank;
    int64_t dims[KG_MAX_RANK];
    int64_t numel;
    uint8_t *differs; /* numel flags, owned */
    double *a, *b;    /* the two runs' values, owned */
    int64_t count, first, largest_at;
    double largest;
};

/* -1 with e filled when run a or b was not recorded (run the determinism gate first). */
int kg_inspect_replay(struct kg_session *s, int a, int b, int output, struct kg_diffmap *d, struct kg_err *e);
void kg_diffmap_free(struct kg_diffmap *d);

/* `sweep SYM LIST`: one row per value and instance dtype. */
struct kg_sweep_row {
    int64_t value;
    enum kg_dtype dtype;
    enum kg_status status;
    double err, ref_err, threshold, ratio, margin;
    char summary[256];
};

/* Parses "1,7,255" or "a..b*2" (geometric) or "a..b+s" (arithmetic) into values (at most n). */
int kg_sweep_parse(const char *text, int64_t *values, int n, struct kg_err *e);
/* Fills rows (at most n); returns the number of rows, or -1: an unknown symbol, or a value
 * whose case does not fit the budget (then nothing has run). When the face asks to stop
 * (kg_session_interrupted), the last row is an error that says so and no more values run. */
int kg_inspect_sweep(struct kg_session *s, const char *sym, const int64_t *values, int nvalues,
                     struct kg_sweep_row *rows, int n, struct kg_err *e);

#endif
