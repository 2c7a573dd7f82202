/* cuda.h: what the CUDA runner's files share, for them only (the worker sees the runner as
 * kg_runner_cuda of runners/runner.h). Each file calls only the ones listed before it:
 * api.c (the libraries, error messages, init), image.c (reading compiled images), compile.c
 * (kernel source to image, cached) and runner_cuda.c (load, memory, launch: the ops table). */
#ifndef KG_CUDA_H
#define KG_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "runners/cuda/cuda_api.h"
#include "runners/runner.h"

/* The runner's state: the void *st every kg_runner_ops function gets. */
struct cuda {
    struct kg_cu_api cu;
    struct kg_nvrtc_api rtc;
    int rtc_state; /* 0: not tried, 1: loaded, -1: unusable (rtc_why) */
    char rtc_why[1200];
    int driver_version;
    CUdevice dev;
    int cc_major, cc_minor;
    CUcontext ctx;      /* the retained primary context, NULL before load */
    CUstream stream[3]; /* [0] stays NULL: the legacy default stream; [1], [2] non-blocking */
    CUevent ev[3][2];   /* start/stop per stream slot */
    CUmodule mod, spin_mod;
    CUfunction fn, spin_fn;
    char spin_why[600];
    int nargs;
    int32_t argkind[KG_MAX_ARGS];
    int64_t dyn_smem_max; /* the entry's current MAX_DYNAMIC_SHARED_SIZE_BYTES */
    int smem_static;      /* the entry's static shared memory, for messages */
    int64_t smem_optin;   /* the device's opt-in shared memory per block, for messages */
    int last;             /* stream slot of the last timed launch since the last sync, -1: none */
    /* the start gate of pair runs: streams 1 and 2 wait until *gate reaches gate_seq */
    int gate_state; /* 0: not made yet, 1: usable, -1: unusable (no stream memory operations) */
    int gate_armed; /* waits are queued and the gate is still shut */
    CUdeviceptr gate;
    CUstream gate_stream;
    cuuint32_t gate_seq;
    /* pair runs' overlap: ev_ref is recorded on stream 1 before its wait at the gate, so that
     * it precedes both launches; pair_run is set from the gate's shutting to the next sync */
    CUevent ev_ref;
    int pair_run;
    int cupti_tried, cupti_on;
    char cupti_why[600];
    char errname[32]; /* kg_cu_name() of a code the driver cannot name */
};

/* api.c: messages. kg_cuda_say appends to rep->msg; kg_cu_fail records a failed driver call
 * and returns KG_WS_CUDA instead of status when the error leaves the context unusable. */
void kg_cuda_say(struct kg_reply *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *kg_cu_name(struct cuda *c, CUresult r);
const char *kg_cu_string(struct cuda *c, CUresult r);
int kg_cu_sticky(CUresult r);
int kg_cu_fail(struct cuda *c, struct kg_reply *rep, int status, CUresult r, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* api.c: the libraries and the device */
int kg_cuda_homes(const char *req, const char *out[3]);
int kg_cuda_open_nvrtc(struct cuda *c, const char *home);
void kg_cuda_fill_dev(struct cuda *c, struct kg_reply *rep);
int kg_cuda_init(void **st, struct kg_reply *rep);

/* image.c */
int kg_cuda_find_entry(const char *img, size_t n, int is_cubin, const char *entry, char *sym, size_t symn,
                       struct kg_reply *rep);
int kg_cuda_tmem_cols(const char *ptx);

/* compile.c: an entry's binary and how it was obtained */
struct build {
    char *img; /* cubin, or NUL-terminated PTX */
    size_t nimg;
    int is_cubin;
    char *ptx; /* PTX text when available (for tcgen05), may be NULL */
    char sym[1024];
    char compiler[64];
    int tmem;
};

void kg_cuda_build_free(struct build *b);
int kg_cuda_get_binary(struct cuda *c, const struct kg_req_load *l, const char *home, struct build *b,
                       struct kg_reply *rep);

/* NVRTC has no C library headers (seen on the H200: INFINITY undefined, <stdint.h> missing).
 * The stand-ins are the files of nvrtc/ (its README says why each is as it is), and the spin
 * kernel is spin.ptx; both are embedded at build time by src/base/embed.awk. */
extern const char *const kg_cuda_hdr_names[]; /* nvrtc_headers.c */
extern const char *const kg_cuda_hdr_text[];
extern const int kg_cuda_hdr_count;
extern const char kg_cuda_spin_ptx[]; /* spin_ptx.c: its .entry is SPIN_NAME */

#endif
