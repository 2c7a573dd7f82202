/* runner.h: what a runner provides inside the worker process: a table of functions, the
 * same shape for host C and CUDA (nvtop style). Memory handles are 64-bit addresses (a host
 * pointer or a CUdeviceptr). worker_main.c drives them: allocate, upload, launch, sync,
 * download. No runner function ever sees an expected output. */
#ifndef KG_RUNNER_H
#define KG_RUNNER_H

#include "kgate.h"
#include "worker/proto.h"

struct kg_launch {
    int nargs;
    const int32_t *kind;           /* enum kg_argkind per arg */
    uint64_t ptr[KG_MAX_ARGS];     /* tensors */
    const struct kg_req_arg *args; /* scalar values */
    int64_t grid[3], block[3], smem;
    int stream; /* 0: the default stream; 1, 2: worker-created non-blocking streams */
};

struct kg_runner_ops {
    const char *name;
    bool device; /* alloc hands out device memory (its peak goes in replies' dev_peak) */
    /* Loads libraries, picks the device; KG_WS_UNAVAILABLE with a reason when impossible. */
    int (*init)(void **st, struct kg_reply *rep);
    /* Compiles (or fetches from cache) and loads the entry; fills compiler, attrs, dev. Runs no
     * code of the candidate's: that is open's. */
    int (*load)(void *st, const struct kg_req_load *l, struct kg_reply *rep);
    /* Where the candidate's own code first runs (host: dlopen, its constructors); serve.c tells
     * the judge before, so that this step is under the run's time limit, not the compile's.
     * May be NULL. */
    int (*open)(void *st, const struct kg_req_load *l, struct kg_reply *rep);
    int (*alloc)(void *st, uint64_t bytes, uint64_t *handle, struct kg_reply *rep);
    void (*release)(void *st, uint64_t handle, uint64_t bytes);
    int (*upload)(void *st, uint64_t dst, const void *src, uint64_t n, struct kg_reply *rep);
    int (*download)(void *st, void *dst, uint64_t src, uint64_t n, struct kg_reply *rep);
    /* Starts the kernel (host: runs it to completion). */
    int (*launch)(void *st, const struct kg_launch *L, struct kg_reply *rep);
    /* Keeps the default stream busy for about `seconds` (CUDA); may be NULL. */
    int (*busy_default)(void *st, double seconds, struct kg_reply *rep);
    /* Pair runs: open=0 shuts a start gate that the next launches on streams 1 and 2 wait at;
     * open=1 releases them at once. May be NULL, and may leave the launches ungated. */
    int (*hold)(void *st, int open, struct kg_reply *rep);
    /* Waits for everything launched; reports asynchronous errors; sets rep->seconds. */
    int (*sync)(void *st, struct kg_reply *rep);
    /* Compiles the kernel without the device, for a LOAD with KG_LOAD_COMPILE_ONLY where init
     * said KG_WS_UNAVAILABLE (a .cu without a GPU: NVRTC alone); loads and runs nothing. May
     * be NULL (the host runner always inits). */
    int (*compile)(const struct kg_req_load *l, struct kg_reply *rep);
    /* Calls a loaded custom oracle (host runner only). */
    int (*oracle)(void *st, struct kg_oracle_io *io, struct kg_reply *rep);
    void (*fini)(void *st);
};

extern const struct kg_runner_ops kg_runner_host;
#ifdef KG_HAVE_CUDA
extern const struct kg_runner_ops kg_runner_cuda;
#endif

/* `kgate --version`'s runner lines: which runners can run here and, for those that cannot,
 * why ("cuda: no (libcuda.so.1 not found: ...)"), with the versions of libcuda, NVRTC, CUPTI
 * and PyTorch (python: the torch runner's interpreter, NULL for $KGATE_PYTHON or python3).
 * The CUDA libraries are loaded in a child process (exe __probe), never in the caller. */
void kg_runners_probe(const char *exe, const char *python, char *out, size_t n);
/* The child's part: the CUDA runner's lines, probed in this process. */
void kg_runners_probe_here(char *out, size_t n);

/* Worker entry point: serves requests on fd until QUIT or EOF. Returns the exit status. */
int kg_worker_main(int fd);

#endif
