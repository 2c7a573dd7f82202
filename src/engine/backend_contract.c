/* backend_contract.c: the judge's side of the host and CUDA runners, for kernels with a
 * contract (.c, .cu). kgate draws the inputs itself (contract/inputs.c); the oracle is a
 * built-in fp64 op (src/oracle/) evaluated in the judge, or the contract's `oracle:` function,
 * compiled like a host kernel and called in the oracle worker. The two runners differ only in
 * the facts of their tables. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/rng.h"
#include "engine/backend.h"
#include "engine/oracle_worker.h"
#include "engine/session.h"

#ifndef KG_SYSTEM_CC
#define KG_SYSTEM_CC "cc"
#endif

#define HOST_GUARD 4096u
#define CUDA_GUARD 65536u

/* AddressSanitizer reserves terabytes of address space for its shadow memory: under an
 * address-space limit a sanitized worker could map nothing more, so such builds set none. */
#if defined(__SANITIZE_ADDRESS__)
#define KG_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KG_SANITIZED 1
#endif
#endif

static uint64_t half_the_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : 0;
}

static void fill_load(struct kg_session *s, struct kg_client *cl, enum kg_dtype dtype, bool oracle)
{
    struct kg_req_load *l = &cl->load.u.load;
    memset(&cl->load, 0, sizeof cl->load);
    cl->load.magic = KG_PROTO_MAGIC;
    cl->load.cmd = KG_CMD_LOAD;
    l->runner = oracle ? KG_RUNNER_HOST : s->be->kind;
    l->dtype = dtype;
    l->oracle = oracle;
    l->returns_int = oracle ? 0 : s->c->entry_returns_int;
    l->nargs = s->c->nargs;
    for (int i = 0; i < s->c->nargs; i++) l->argkind[i] = s->c->args[i].kind;
    kg_strlcpy(l->path, oracle ? s->c->oracle_file : s->c->path, sizeof l->path);
    kg_strlcpy(l->entry, oracle ? s->c->oracle_func : s->c->entry, sizeof l->entry);
    kg_strlcpy(l->cache_dir, s->cache, sizeof l->cache_dir);
    if (!oracle && (s->o.compile_only || s->o.open_unrunnable)) l->flags |= KG_LOAD_COMPILE_ONLY;
    const char *cc = s->o.cc ? s->o.cc : getenv("KGATE_CC");
    kg_strlcpy(l->cc, cc && *cc ? cc : KG_SYSTEM_CC, sizeof l->cc);
    const char *ch = getenv("KGATE_CUDA_HOME");
#ifdef KG_CUDA_HOME
    if (!ch || !*ch) ch = KG_CUDA_HOME;
#endif
    kg_strlcpy(l->cuda_home, ch ? ch : "/usr/local/cuda", sizeof l->cuda_home);
    /* a candidate's worker is limited (the host runner applies it: CUDA reserves far more
     * address space than it uses, so there an address-space limit would break the driver) */
#ifdef KG_SANITIZED
    if (0) {
#else
    if (!oracle && s->be->kind == KG_RUNNER_HOST) {
#endif
        l->mem_limit = s->o.memory ? s->o.memory : half_the_ram();
        struct rlimit rl; /* an outer ulimit -v, which the worker inherits, may be tighter */
        if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < l->mem_limit)
            l->mem_limit = rl.rlim_max;
    }
}

static void load_req(struct kg_session *s, struct kg_client *cl, enum kg_dtype dtype)
{
    fill_load(s, cl, dtype, false);
}

int kg_contract_open_oracle(struct kg_session *s, enum kg_dtype dtype, struct kg_reply *rp)
{
    fill_load(s, &s->oracle, dtype, true);
    s->oracle.open_limit = 600; /* the contract's own oracle: trusted code */
    return kg_client_start(s, &s->oracle, rp);
}

static const char *host_no_gpu(const struct kg_session *s)
{
    (void)s;
    return "needs a GPU: the host runner has no streams or device limits to test";
}

static const char *cuda_no_gpu(const struct kg_session *s)
{
    (void)s;
    return NULL;
}

static int inputs(struct kg_session *s, const struct kg_case *k, struct kg_inputs *in, struct kg_err *e)
{
    (void)s;
    return kg_inputs_generate(k, in, e);
}

/* The contract's `oracle:` function, exact (working 0) or at working precision. */
static int custom_oracle(struct kg_session *s, const struct kg_case *k, const struct kg_tensor *in64, int nin,
                         struct kg_tensor *const *out, int nout, int working, struct kg_err *e)
{
    struct kg_oracle_arg args[KG_OP_MAX_IO];
    enum kg_dtype odt[KG_OP_MAX_IO];
    for (int j = 0; j < nin; j++)
        args[j] = (struct kg_oracle_arg){.kind = KG_ARG_TENSOR,
                                         .dtype = KG_F64,
                                         .rank = in64[j].rank,
                                         .dims = in64[j].dims,
                                         .numel = in64[j].numel,
                                         .data = in64[j].data,
                                         .data_dtype = KG_F64};
    for (int j = 0; j < nout; j++) odt[j] = KG_F64;
    struct kg_err we;
    if (kg_oracle_worker_call(s, k, working, false, false, args, nin, out, odt, nout, NULL, &we))
        return kg_errf(e, "%s:%d: oracle %s: %s", k->c->path, k->c->line_op, k->c->oracle_func, we.msg);
    return 0;
}

static int builtin_oracle(const struct kg_case *k, const struct kg_tensor *in64, int nin, struct kg_expect *x,
                          struct kg_err *e)
{
    const struct kg_contract *c = k->c;
    const struct kg_tensor *ins[KG_OP_MAX_IO];
    struct kg_tensor *ex[KG_OP_MAX_IO], *rf[KG_OP_MAX_IO];
    for (int j = 0; j < nin; j++) ins[j] = &in64[j];
    for (int j = 0; j < x->nout; j++) {
        ex[j] = &x->exact[j];
        rf[j] = &x->ref[j];
    }
    enum kg_arith work = k->dtype == KG_F64 ? KG_W64 : KG_W32;
    struct kg_err oe;
    if (kg_op_eval(&c->op, KG_EXACT, ins, ex, &oe) || kg_op_eval(&c->op, work, ins, rf, &oe))
        return kg_errf(e, "%s:%d: oracle %s: %s", c->path, c->line_op, c->op_text, oe.msg);
    x->int_out = (c->op.def->flags & KG_OP_INT_OUT) != 0;
    if (!(c->op.def->flags & KG_OP_HAS_ALT)) return 0;
    struct kg_tensor *al[KG_OP_MAX_IO];
    for (int j = 0; j < x->nout; j++) {
        if (kg_tensor_alloc(&x->alt[j], KG_F64, k->shape[x->arg[j]].rank, k->shape[x->arg[j]].dims))
            return kg_errf(e, "out of memory for the oracle's alternative");
        al[j] = &x->alt[j];
    }
    if (kg_op_eval(&c->op, KG_EXACT_ALT, ins, al, &oe))
        return kg_errf(e, "%s:%d: oracle %s (alternative algorithm): %s", c->path, c->line_op, c->op_text, oe.msg);
    return 0;
}

static int oracle(struct kg_session *s, const struct kg_case *k, const struct kg_inputs *in, struct kg_expect *x,
                  struct kg_err *e)
{
    struct kg_tensor in64[KG_OP_MAX_IO];
    int nin = 0, rc;
    if (kg_inputs_to_f64(k, in, in64, &nin, e)) return -1;
    if (k->c->has_op) {
        rc = builtin_oracle(k, in64, nin, x, e);
    } else {
        struct kg_tensor *ex[KG_OP_MAX_IO], *rf[KG_OP_MAX_IO];
        for (int j = 0; j < x->nout; j++) {
            ex[j] = &x->exact[j];
            rf[j] = &x->ref[j];
        }
        rc = custom_oracle(s, k, in64, nin, ex, x->nout, 0, e) ||
             custom_oracle(s, k, in64, nin, rf, x->nout, k->dtype == KG_F64 ? 2 : 1, e);
    }
    for (int j = 0; j < nin; j++) kg_tensor_free(&in64[j]);
    return rc ? -1 : 0;
}

/* One trial of the emulated standard test: 1 passed, 0 failed (why says how), -1 error. */
static int baseline_trial(struct kg_session *s, int trial, double tol, char *why, size_t n)
{
    /* KernelBench draws one seed per trial from a generator seeded 42: for a contract kernel
     * kgate's generator stands in for torch.randint. */
    uint64_t seed = kg_rng_below(42, 0, (uint64_t)trial, 0xffffffffull);
    struct kg_case k;
    struct kg_err e;
    if (kg_nominal_case(s, kg_contract_default_dtype(s->c), 0, KG_DIST_UNIT, &k, &e)) {
        snprintf(why, n, "%s", e.msg);
        return -1;
    }
    k.seed = seed;
    struct kg_inputs in;
    if (kg_session_inputs(s, &k, &in, &e)) {
        snprintf(why, n, "%s", e.msg);
        return -1;
    }
    struct kg_exec x;
    struct kg_exec_opts o = {.fill = KG_FILL_ZERO, .guard_byte = 0, .flags = KG_RUN_LENIENT};
    kg_exec(s, &k, &in, &o, &x);
    kg_inputs_free(&in);
    if (x.status != KG_WS_OK) {
        snprintf(why, n, "trial %d: %s: %s", trial + 1, kg_wstatus_name((enum kg_wstatus)x.status), x.msg);
        kg_exec_free(&x);
        return 0;
    }
    struct kg_expect ex;
    if (kg_session_expect(s, &k, &ex, &e)) {
        snprintf(why, n, "%s", e.msg);
        kg_exec_free(&x);
        return -1;
    }
    int ok = 1;
    for (int j = 0; j < ex.nout && ok; j++) {
        int64_t bad = -1;
        const struct kg_tensor *got = &x.after[ex.arg[j]];
        /* the standard test compares with the reference run at working precision */
        if (!kg_allclose(got, &ex.ref[j], tol, tol, &bad)) {
            char idx[KG_INDEX_MAX];
            kg_tensor_index_str(got, bad, idx, sizeof idx);
            snprintf(why, n, "trial %d: %s%s = %.6g, reference %.6g: not allclose(atol=rtol=%g)", trial + 1,
                     s->c->args[ex.arg[j]].name, idx, kg_load(got->dtype, got->data, bad),
                     ((double *)ex.ref[j].data)[bad], tol);
            ok = 0;
        }
    }
    kg_expect_free(&ex);
    kg_exec_free(&x);
    return ok;
}

/* KernelBench's five trials on the contract kernel (see kg_session_baseline). */
static int baseline(struct kg_session *s, double tol, char *why, size_t n)
{
    for (int trial = 0; trial < 5; trial++) {
        int rc = baseline_trial(s, trial, tol, why, n);
        if (rc != 1) return rc;
    }
    snprintf(why, n, "5 trials allclose(atol=rtol=%g)", tol);
    return 1;
}

const struct kg_backend kg_backend_host = {
    .name = "host",
    .title = "host",
    .kind = KG_RUNNER_HOST,
    .guard = HOST_GUARD,
    .budget = 1 << 22,
    .load_req = load_req,
    .no_gpu = host_no_gpu,
    .inputs = inputs,
    .oracle = oracle,
    .baseline = baseline,
};

const struct kg_backend kg_backend_cuda = {
    .name = "cuda",
    .title = "CUDA",
    .kind = KG_RUNNER_CUDA,
    .guard = CUDA_GUARD,
    .budget = 1 << 26,
    .caps = KG_CAP_CONCURRENT | KG_CAP_LAUNCH,
    .load_req = load_req,
    .no_gpu = cuda_no_gpu,
    .inputs = inputs,
    .oracle = oracle,
    .baseline = baseline,
};
