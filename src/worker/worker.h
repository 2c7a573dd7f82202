/* worker.h: the judge's side of a worker process: spawn, one request/reply at a time with a
 * time limit, and a post-mortem (signal, last lines of its output) when it dies or hangs.
 * A dead worker stays dead; the caller spawns a fresh one (session.c does). */
#ifndef KG_WORKER_H
#define KG_WORKER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "worker/proto.h"

struct kg_worker {
    pid_t pid;
    int fd;             /* SOCK_SEQPACKET to the worker */
    int log_fd;         /* memfd holding the worker's stdout and stderr */
    bool foreign;       /* forked by a zygote, not our child: its wait status comes in its log */
    uint64_t mem_limit; /* its address space limit (0: none), and the most it was seen to use */
    uint64_t vm_seen;
    long long oom_kills; /* the host's OOM kill count when it was last seen alive (-1: unknown) */
};

/* Closes the parent's /proc that a contained worker is handed (worker.c); a worker calls it first. */
void kg_worker_drop_host_proc(void);

/* Starts argv (argv[0] the program: `kgate __worker 3`, or `python3 torch_runner.py 3`) with
 * the request socket on descriptor 3. */
int kg_worker_spawn(struct kg_worker *w, char *const argv[], struct kg_err *e);

/* Sends rq (with shm_fd when >= 0) and waits up to timeout seconds for the reply. Returns 0
 * with rp filled when a reply came; otherwise kills the worker, fills rp->status with
 * KG_WS_CRASH or KG_WS_TIMEOUT and rp->msg with what happened, and returns -1. */
int kg_worker_call(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout);
/* The same, asking stop(ud) (when not NULL) before sending and every 100 ms while it waits:
 * when it says true the worker is killed and the call returns -1 with KG_WS_INTERRUPTED (a
 * worker that dies of SIGINT meanwhile is reported so too); before sending, the worker is
 * left as it was. The inspector's Ctrl-C comes this way: this layer knows processes, not
 * why a caller stops. */
int kg_worker_call_until(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout,
                         bool (*stop)(void *ud), void *ud);

/* What else a call may do. then: for LOAD, timeout covers the compile; once the worker says the
 * candidate's own code runs next (a KG_WS_PROGRESS reply: dlopen and its constructors, a
 * module's import), then seconds more, after which the worker is killed (KG_WS_TIMEOUT, saying
 * so); 0: timeout again. stop: asked (when not NULL) before sending and every 100 ms while the
 * call waits: when it says true the worker is killed and the call returns -1 with
 * KG_WS_INTERRUPTED (a worker that dies of SIGINT meanwhile is reported so too); before
 * sending, the worker is left as it was. The inspector's Ctrl-C comes this way: this layer
 * knows processes, not why a caller stops. */
struct kg_call_opts {
    double then;
    bool (*stop)(void *ud);
    void *ud;
};
int kg_worker_request(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout,
                      const struct kg_call_opts *o);
/* kg_worker_request in two halves, for a call that runs while the judge does other work (the
 * standard test beside the gates): kg_worker_send sends rq (0; or -1, the worker reaped, rp
 * saying why); kg_worker_await takes its reply, waiting until deadline (kg_now()'s clock; a
 * reply already there is taken even past it), and ends as kg_worker_request does (o as there:
 * a LOAD's then, a stop), a timeout reported as one of timeout seconds. No other request to w
 * in between. */
int kg_worker_send(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout);
int kg_worker_await(struct kg_worker *w, struct kg_reply *rp, double timeout, double deadline,
                    const struct kg_call_opts *o);
/* kg_worker_request with only a stop callback. */
int kg_worker_call_until(struct kg_worker *w, const struct kg_req *rq, int shm_fd, struct kg_reply *rp, double timeout,
                         bool (*stop)(void *ud), void *ud);

/* A zygote (`python3 torch_runner.py --zygote NAME`, started by kg_zygote_start) forks fresh
 * torch workers on request: kg_worker_spawn_zygote connects to the abstract socket NAME, hands
 * over the new worker's socket and log with this process's environment, and gets its pid.
 * The zygote lives until its own worker handle is stopped (or this process dies). */
int kg_zygote_start(struct kg_worker *z, char *const argv[], const char *name, struct kg_err *e);
int kg_worker_spawn_zygote(struct kg_worker *w, const char *name, struct kg_err *e);

bool kg_worker_alive(const struct kg_worker *w);
void kg_worker_stop(struct kg_worker *w);

/* Sizes and offsets of the protocol structs as JSON (`kgate __layout`): the torch runner's
 * ctypes mirror is checked against them. */
int kg_proto_layout(FILE *f);

/* Worker-side message helpers (worker_main.c). */
int kg_proto_recv(int fd, struct kg_req *rq, int *shm_fd);
int kg_proto_send_reply(int fd, const struct kg_reply *rp);

#endif
