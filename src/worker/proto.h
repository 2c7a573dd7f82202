/* proto.h: the judge <-> worker protocol. One request, one reply, each a fixed-layout
 * struct sent as one SOCK_SEQPACKET message; bulk data lives in a shared memfd that the
 * judge passes with every RUN (SCM_RIGHTS). The same messages serve every runner.
 *
 * RUN: for every tensor arg, the judge writes [guard | data | guard] at args[i].off in the
 * shared memory: input values, the output prefill chosen by the gate, and guard bytes. The
 * worker uploads each region verbatim, launches the entry once, and downloads each region
 * back to the same place. The worker is never told what the outputs should be. */
#ifndef KG_PROTO_H
#define KG_PROTO_H

#include <stdint.h>

#include "contract/contract.h"

#define KG_PROTO_MAGIC  0x6b676174u /* "kgat" */
#define KG_MSG_MAX      4096        /* a reply's message, and every message built from one */
#define KG_REQ_PATH_MAX 1024        /* a path in a request (a kernel, the cache directory) */

enum kg_cmd {
    KG_CMD_LOAD = 1,
    KG_CMD_RUN,
    KG_CMD_ORACLE,
    KG_CMD_QUIT,
    KG_CMD_DESCRIBE, /* torch: the problem's constants, inputs and outputs at given constants (JSON in shm) */
    KG_CMD_INPUTS,   /* torch: get_inputs() at given constants, seed and distribution, into shm */
    KG_CMD_STANDARD, /* torch: KernelBench's own test in this process (reference, then candidate) */
    KG_CMD_SAMPLE,   /* torch: a case too large to ship: inputs drawn on the device, outputs read back
                        at the int64 flat indices at off[0] (bytes[0]), as float64 at off[1 + j] */
    KG_CMD_RESIDENT, /* torch: an oracle case kept in the worker (kg_req_oracle.resident): KG_RES_* */
};

/* KG_CMD_RESIDENT's operations (kg_req_oracle.working) on the case ORACLE kept under
 * kg_req_oracle.resident. Numbers come back as text in the reply's msg: one line per output,
 * fields separated by spaces, floats in C99's hex notation (exact both ways). */
enum {
    /* the working-precision reference of evaluations 1 and 2 (the worse of the two per element),
     * in each output's dtype (out[j].dtype); per output "scale ref_err" (scale: the RMS of the
     * finite fp64 values, rounded to float, as kg_scale_of) */
    KG_RES_CALIBRATE = 1,
    /* the tensors at out[j] (their dtype, in the memfd passed) compared with output j as
     * kg_compare_calibrated does: per output the fields of struct kg_cmp in its order, rms_rel
     * summed in the worker's order */
    KG_RES_JUDGE,
    KG_RES_FETCH, /* output j's fp64 values to out[j].off, its reference (as float64) to in[j].off */
    KG_RES_DROP,  /* forget the case */
    /* the tensors at out[j] (as for JUDGE) compared with output j's fp64 values class by class
     * (finite, NaN, +Inf, -Inf), or exactly (integer dtypes, and all of them when resident_set
     * is 1: an op with integer outputs), as kg_compare_classes does: per output "mismatches
     * first oracle_nonfinite" */
    KG_RES_CLASSES,
};

enum kg_runner_kind { KG_RUNNER_HOST, KG_RUNNER_CUDA, KG_RUNNER_TORCH };

/* Status of a reply, plus those the judge assigns itself when no reply came. */
enum kg_wstatus {
    KG_WS_OK,
    KG_WS_REFUSED,     /* host entry returned non-zero: the kernel rejected the case */
    KG_WS_COMPILE,     /* the kernel did not compile */
    KG_WS_ENTRY,       /* compiled, but the entry symbol is missing */
    KG_WS_LAUNCH,      /* the launch itself failed (invalid configuration, resources) */
    KG_WS_CUDA,        /* a CUDA error during or after the kernel (illegal address...) */
    KG_WS_UNAVAILABLE, /* the runner cannot start here (no GPU, no libcuda, no compiler) */
    KG_WS_BAD_REQUEST, /* protocol misuse: a kgate bug */
    KG_WS_CRASH,       /* judge-side: the worker died (signal in code) */
    KG_WS_TIMEOUT,     /* judge-side: no reply within the time limit; the worker was killed */
    KG_WS_MISMATCH,    /* torch: an output's shape, dtype or device differs from the reference's */
    KG_WS_EXCEPTION,   /* torch: the candidate raised a Python exception */
    KG_WS_PROGRESS,    /* an interim reply to LOAD: compiled; the candidate's own code (constructors,
                          module-level code) runs next, under the run's time limit */
    KG_WS_OOM,         /* judge-side: the worker died at its memory limit (--memory) */
    KG_WS_INTERRUPTED, /* judge-side: the caller stopped the call (the inspector's Ctrl-C); the worker was killed */
    KG_WS_HOST_OOM,    /* judge-side: the host's out-of-memory killer took the worker: no word on the kernel */
};

const char *kg_wstatus_name(enum kg_wstatus s);

struct kg_req_load {
    int32_t runner;      /* enum kg_runner_kind */
    int32_t dtype;       /* instance dtype, defines KG_T */
    int32_t returns_int; /* host: entry returns int (non-zero: refused) */
    int32_t oracle;      /* host: the entry is a kg_oracle_fn */
    int32_t nargs;
    int32_t argkind[KG_MAX_ARGS]; /* enum kg_argkind */
    char path[KG_REQ_PATH_MAX];
    char entry[KG_NAME_MAX];
    char cache_dir[KG_REQ_PATH_MAX];
    char cc[256];
    char cuda_home[512];
    char aux_path[KG_REQ_PATH_MAX]; /* torch candidate: the problem file it answers */
    int32_t role;                   /* torch: 0 oracle (problem), 1 candidate */
    int32_t flags;                  /* KG_LOAD_* */
    uint64_t mem_limit;             /* host runner: the worker's address space limit from open on (0: none) */
};

/* Load flags. */
enum {
    /* Where the runner cannot run (a CUDA runner without libcuda or a GPU), compile the kernel
     * anyway if its compiler is there (NVRTC, nvcc): the reply is KG_WS_OK with the flag
     * KG_REPLY_COMPILED_ONLY and msg saying why it could not load; the worker can run nothing. */
    KG_LOAD_COMPILE_ONLY = 1u << 0,
};

/* Reply flags. */
enum {
    KG_REPLY_COMPILED_ONLY = 1u << 0, /* LOAD with KG_LOAD_COMPILE_ONLY: compiled, not loaded */
};

/* Run flags. */
enum {
    KG_RUN_REUSE = 1u << 0,        /* keep the previous run's allocations (same pointers) */
    KG_RUN_SIDE_STREAM = 1u << 1,  /* launch on a non-blocking stream, not the default */
    KG_RUN_BUSY_DEFAULT = 1u << 2, /* keep the legacy default stream busy meanwhile */
    KG_RUN_PAIR = 1u << 3,         /* two launches at once on two streams: args and args2 */
    KG_RUN_NO_LAUNCH = 1u << 4,    /* upload/download only (measures the round trip) */
    KG_RUN_PROFILE = 1u << 5,      /* record every kernel launched (CUPTI / the torch profiler) */
    KG_RUN_LENIENT = 1u << 6,      /* torch: check outputs only as the standard test does (shape) */
    KG_RUN_CANARY = 1u << 7,       /* torch: report writes outside every tensor (free allocator blocks) */
    KG_RUN_NO_TF32 = 1u << 8,      /* torch: TF32 off for matmul and cuDNN during the call, whatever it sets */
    KG_RUN_SYNC_DEVICE = 1u << 9,  /* torch: the whole device synchronised before the call and before its
                                      outputs are read (as KernelBench calls a candidate) */
    KG_RUN_DIGEST = 1u << 10,      /* torch: the outputs stay in the worker; the reply carries each one's
                                      digest and prefilled count instead (struct kg_reply) */
    KG_RUN_DIGEST_ALSO = 1u << 11, /* torch: the digests and counts as KG_RUN_DIGEST, the outputs copied too */
};

struct kg_req_arg {
    int32_t kind;  /* enum kg_argkind */
    int32_t alias; /* -1, or the arg whose buffer this tensor shares (declared aliasing) */
    int32_t io;    /* enum kg_io (torch: outputs are returned, not passed) */
    int32_t dtype; /* enum kg_dtype (torch rebuilds tensors) */
    int32_t rank;
    int32_t pad;
    int64_t dims[KG_MAX_RANK];
    uint64_t off;  /* shared-memory offset of [guard | data | guard] */
    uint64_t off2; /* KG_RUN_PAIR: the second launch's region */
    uint64_t bytes;
    uint64_t guard;
    int64_t ival;
    double fval;
    uint64_t tag; /* an input's kg_inputs id (0: none): the same tag, the same data bytes as before */
};

struct kg_req_run {
    uint32_t flags;
    int32_t nargs;
    int32_t fill;       /* torch: enum kg_fill of the memory outputs will be allocated from */
    int32_t fill_byte;  /* torch: that memory's byte (sentinels) */
    uint64_t fill_seed; /* torch: seed of KG_FILL_GARBAGE */
    struct kg_req_arg args[KG_MAX_ARGS];
    int64_t grid[3], block[3], smem;
    uint64_t shm_size;
    int32_t nsym; /* torch: the problem's constants for this case (the model is built from them) */
    int32_t pad2;
    char sym_names[KG_MAX_SYMS][KG_NAME_MAX];
    int64_t sym_values[KG_MAX_SYMS];
};

/* ORACLE: float64 tensors at offsets; the worker calls the custom oracle function. */
struct kg_req_tensor {
    int32_t rank;
    int32_t kind;       /* enum kg_argkind: KG_ARG_TENSOR, or a scalar whose value is `value` */
    int32_t dtype;      /* the tensor's own dtype */
    int32_t data_dtype; /* the dtype of its bytes in shm: KG_F64 (0), or (torch runner) any */
    int64_t dims[KG_MAX_RANK];
    uint64_t off;
    double value;
};

/* DESCRIBE and INPUTS (torch): module constants to set, and for INPUTS where each tensor goes. */
enum {
    /* DESCRIBE at the nominal constants on PyTorch's meta device only (shapes and dtypes, nothing
     * allocated or run), or an error where the meta device cannot stand in: kgate audit's cost
     * estimate, made before the check, must not cost what a real description does */
    KG_DESCRIBE_META = 1,
};

struct kg_req_problem {
    int32_t nsym;
    int32_t dist; /* INPUTS: enum kg_dist, a transformation of get_inputs()'s values */
    uint64_t seed;
    char sym_names[KG_MAX_SYMS][KG_NAME_MAX];
    int64_t sym_values[KG_MAX_SYMS];
    int32_t ntensor;
    int32_t flags;             /* DESCRIBE: KG_DESCRIBE_META */
    uint64_t off[KG_MAX_ARGS]; /* INPUTS: where the i-th input (tensor or not) goes, 0 when not a tensor */
    uint64_t bytes[KG_MAX_ARGS];
    uint64_t shm_size;
    double tol; /* STANDARD: allclose's atol = rtol */
};

struct kg_req_oracle {
    int32_t working; /* 0 exact fp64, 1 fp32 accumulation (torch: the problem's dtype, strict fp32), 2 fp64
                        sequential, 3 torch: the problem's dtype with PyTorch's defaults, 4 torch: as 1 with
                        sequential fp32 sums and products (reply code 1: no op was replaced) */
    int32_t n_in, n_out, nsym;
    struct kg_req_tensor in[KG_OP_MAX_IO], out[KG_OP_MAX_IO];
    char sym_names[KG_MAX_SYMS][KG_NAME_MAX];
    int64_t sym_values[KG_MAX_SYMS];
    uint64_t shm_size;
    /* ORACLE (torch): nonzero: the outputs stay in the worker, on its device, as evaluation
     * `resident_set` of the case of this id, instead of being written to shm; KG_CMD_RESIDENT: the case */
    uint64_t resident;
    int32_t resident_set;
    int32_t pad3;
};

struct kg_req {
    uint32_t magic;
    uint32_t cmd;
    union {
        struct kg_req_load load;
        struct kg_req_run run;
        struct kg_req_oracle oracle;
        struct kg_req_problem problem;
    } u;
};

/* What the runner could read back about the loaded kernel (CUDA: cuFuncGetAttribute). */
struct kg_func_attrs {
    int32_t valid;
    int32_t regs, smem_static, local_bytes, max_threads, const_bytes, ptx_version, binary_version;
    int32_t tmem_cols; /* columns requested by tcgen05.alloc in the PTX, -1 if none */
};

struct kg_dev_info {
    int32_t valid;
    char name[128];
    int32_t cc_major, cc_minor, sm_count, device_count;
    int64_t max_threads_per_block, max_block[3], max_grid[3], max_smem_block, max_smem_optin, regs_per_block,
        regs_per_sm, max_threads_per_sm, smem_per_sm;
    int64_t max_blocks_per_sm;       /* 0: not reported by the driver */
    int64_t reserved_smem_per_block; /* shared memory the driver keeps per block */
    int64_t total_mem;
};

/* Reply code bits of a torch RUN that succeeded. */
/* torch: bits of a RUN reply's code (INPUTS_AS_SENT: every input region, data and guards, is
 * as the judge laid it out; the worker compared them on its device and wrote none back) */
/* KG_RUN_OUT_LATE_WRITE: an output changed after the caller's stream had finished the call's work
 * (read on that stream, then compared once the whole device was done): work the call left on a
 * stream of its own wrote it. KG_RUN_INPUTS_KEPT: an input's data came from the worker's own copy on
 * its device, kept from an earlier run of the same kg_req_arg tag, not from shm. */
enum {
    KG_RUN_OUT_SHARES_INPUT = 1,
    KG_RUN_OUT_OOB_WRITE = 2,
    KG_RUN_INPUTS_AS_SENT = 4,
    KG_RUN_OUT_LATE_WRITE = 8,
    KG_RUN_INPUTS_KEPT = 16
};

/* One kernel launch seen by the CUPTI probe. */
struct kg_launch_rec {
    char name[128];
    int32_t grid[3], block[3];
    int32_t regs, smem_static, smem_dynamic, local_bytes;
    double seconds;
    uint64_t start_ns, end_ns; /* CUPTI's timestamps of the kernel's first and last moment (0: unknown) */
};

#define KG_MAX_LAUNCH_RECS 16

/* How a pair run's overlap was measured (kg_reply.pair_clock). */
enum kg_pair_clock {
    KG_PAIR_UNMEASURED,
    KG_PAIR_KERNELS, /* CUPTI's records: each kernel's own start and end */
    KG_PAIR_EVENTS,  /* events recorded around each launch: a launch waiting for the other's blocks to
                        leave still counts as running, so this overlap is an upper bound */
};

struct kg_reply {
    uint32_t magic;
    int32_t status;         /* enum kg_wstatus */
    int32_t code;           /* CUDA error code, entry return value, or signal */
    int32_t flags;          /* KG_REPLY_* */
    double seconds;         /* kernel time of the last launch */
    double compile_seconds; /* LOAD */
    char compiler[64];      /* LOAD: "cc", "nvrtc 13.0", "nvcc" */
    struct kg_func_attrs attrs;
    struct kg_dev_info dev;
    int32_t nlaunch; /* CUPTI records in launch[] (-1: probe unavailable) */
    int32_t cupti_ok;
    struct kg_launch_rec launch[KG_MAX_LAUNCH_RECS];
    /* KG_RUN_PAIR: for how long the two launches ran at the same time, and for how long the
     * shorter of them ran, in seconds, measured as pair_clock says (enum kg_pair_clock) */
    double pair_overlap, pair_shorter;
    int32_t pair_clock;
    int32_t pad2;
    /* the most device memory the worker's allocator has held since it started, in bytes (torch:
     * max_memory_reserved; 0: not known, or no device), and what it holds as it replies (torch:
     * memory_reserved; the limits gate's huge cases give theirs back before replying, so this is
     * what the worker keeps between requests) */
    uint64_t dev_peak, dev_held;
    /* KG_RUN_DIGEST, per argument (outputs only): a 64-bit hash of the output's bytes that depends
     * on every byte and its position (equal digests: bit-identical outputs, but with a chance of
     * about 2^-64), and how many of its elements hold the run's constant prefill in every byte
     * (-1: a garbage prefill, not counted) */
    uint64_t digest[KG_MAX_ARGS];
    int64_t prefilled[KG_MAX_ARGS];
    char msg[KG_MSG_MAX];
};

#endif
