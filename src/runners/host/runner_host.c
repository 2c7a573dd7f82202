/* runner_host.c: the CPU runner. Compiles the .c with the system C compiler into a shared
 * object (cached by content hash), dlopens it in the worker and calls the entry through
 * libffi, since the parameter list is known only from the contract. Buffers are mmap'd
 * with an inaccessible page on each side, so a far out-of-bounds access faults at once and
 * a near one lands in the guard bytes that the judge inspects. */
#include <dlfcn.h>
#include <errno.h>
#include <ffi.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/cache.h"
#include "runners/runner.h"
#include "base/sandbox.h"

struct host {
    void *so;
    void *fn;
    int oracle;
    int returns_int;
    int nargs;
    ffi_cif cif;
    ffi_type *types[KG_MAX_ARGS];
    double seconds;
    long page;
    char so_path[KG_REQ_PATH_MAX + KG_PATH_SLACK]; /* the compiled kernel, for open */
};

/* ---- the crash report -------------------------------------------------------------------------
 * A kernel that faults kills this worker; before it dies, a handler on an alternate stack writes
 * one line to stderr (the worker's log, which the judge quotes): the signal, the faulting
 * address, the pc and, when the pc is inside the kernel's .so, the offset there, which the judge
 * maps to a source line (addr2line: host kernels are built with -g). The handler only formats
 * numbers and calls write(); SA_RESETHAND lets the fault happen again, now fatal, on return.
 * A signal handler reaches only static storage: these are the worker's one instance. */
static char crash_so[KG_REQ_PATH_MAX + KG_PATH_SLACK];
static uintptr_t crash_lo, crash_hi; /* the .so's mapped range */

static size_t put_str(char *b, size_t at, size_t n, const char *s)
{
    while (*s && at + 1 < n) b[at++] = *s++;
    return at;
}

static size_t put_hex(char *b, size_t at, size_t n, uintptr_t v)
{
    char d[2 + 2 * sizeof v];
    int k = 0;
    do d[k++] = "0123456789abcdef"[v & 15];
    while ((v >>= 4) && k < (int)sizeof d);
    at = put_str(b, at, n, "0x");
    while (k && at + 1 < n) b[at++] = d[--k];
    return at;
}

static void on_fault(int sig, siginfo_t *si, void *uc_)
{
    uintptr_t pc = 0;
    ucontext_t *uc = uc_;
#if defined(__x86_64__)
    pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    pc = (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
#endif
    char b[sizeof crash_so + 128];
    size_t at = put_str(b, 0, sizeof b, "\nkgate-crash: signal ");
    char num[4] = {(char)('0' + sig / 10 % 10), (char)('0' + sig % 10), 0, 0};
    at = put_str(b, at, sizeof b, sig >= 10 ? num : num + 1);
    at = put_str(b, at, sizeof b, " addr ");
    at = put_hex(b, at, sizeof b, (uintptr_t)si->si_addr);
    at = put_str(b, at, sizeof b, " pc ");
    at = put_hex(b, at, sizeof b, pc);
    at = put_str(b, at, sizeof b, " so ");
    if (pc >= crash_lo && pc < crash_hi) {
        at = put_str(b, at, sizeof b, crash_so);
        at = put_str(b, at, sizeof b, "+");
        at = put_hex(b, at, sizeof b, pc - crash_lo);
    } else {
        at = put_str(b, at, sizeof b, "-");
    }
    at = put_str(b, at, sizeof b, "\n");
    ssize_t w = write(2, b, at);
    (void)w;
}

static int so_range(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    (void)ud;
    if (info->dlpi_addr != crash_lo) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            uintptr_t end = crash_lo + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz;
            if (end > crash_hi) crash_hi = end;
        }
    return 1;
}

/* Arms the crash report for the kernel whose entry is fn, loaded from so. */
static void arm_crash_report(void *fn, const char *so)
{
    Dl_info di;
    if (!dladdr(fn, &di)) return;
    kg_strlcpy(crash_so, so, sizeof crash_so);
    crash_lo = (uintptr_t)di.dli_fbase;
    crash_hi = crash_lo;
    dl_iterate_phdr(so_range, NULL);
    static char altstack[64 * 1024];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
}

static int host_init(void **st, struct kg_reply *rep)
{
    struct host *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(rep->msg, sizeof rep->msg, "out of memory");
        return KG_WS_UNAVAILABLE;
    }
    h->page = sysconf(_SC_PAGESIZE);
    *st = h;
    return KG_WS_OK;
}

static const char *ctype_of(int dtype)
{
    switch (dtype) {
    case KG_F64: return "double";
    case KG_F32: return "float";
    case KG_F16: return "kg_f16";
    case KG_BF16: return "kg_bf16";
    default: return "float";
    }
}

/* "FILE:LINE: does not include <kgate.h>..." into msg when what the compiler (or dlopen) said in
 * out comes of a missing #include <kgate.h> in src. */
static void no_kgate_h(const char *path, const char *src, const char *out, char *msg, size_t n, size_t *ml)
{
    char name[64], where[16] = "";
    int line;
    if (!kg_missing_kgate_h(src, out, name, sizeof name, &line)) return;
    if (line > 0) snprintf(where, sizeof where, ":%d", line);
    kg_appendf(msg, n, ml,
               "%s%s: does not include <kgate.h>, which declares %s: add `#include <kgate.h>` before its first use\n",
               path, where, name);
}

/* The compile error of path: the compiler's output, after the cause in plain words when it is
 * a missing #include <kgate.h> (the raw errors alone say only "unknown type name"). */
static void compile_failed(const char *path, const char *src, const char *cc, const char *out, struct kg_reply *rep)
{
    size_t ml = 0; /* the compiler's output is cut where the message ends */
    rep->msg[0] = 0;
    no_kgate_h(path, src, out, rep->msg, sizeof rep->msg, &ml);
    kg_appendf(rep->msg, sizeof rep->msg, &ml, "%s: compile failed (%s):\n%s", path, cc, out);
}

/* Adds to key what src (the file at path) includes with #include "FILE", found as the compiler
 * finds it (beside the including file), and what those include in turn: editing a header of the
 * kernel's own must recompile it, not reuse the cached object. An include in a branch not taken
 * is hashed as well (a needless recompile at worst); one that does not exist is left to the
 * compiler to report. */
static uint64_t hash_local_includes(const char *path, const char *src, size_t len, uint64_t key, int depth)
{
    const char *slash = strrchr(path, '/');
    int dl = slash ? (int)(slash - path) : 0;
    for (const char *p = src, *end = src + len; p < end && depth < 8;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        const char *q = p;
        while (q < eol && (*q == ' ' || *q == '\t')) q++;
        if (q < eol && *q == '#') {
            for (q++; q < eol && (*q == ' ' || *q == '\t');) q++;
            if (eol - q > 8 && !strncmp(q, "include", 7)) {
                for (q += 7; q < eol && (*q == ' ' || *q == '\t');) q++;
                const char *close = q < eol && *q == '"' ? memchr(q + 1, '"', (size_t)(eol - q - 1)) : NULL;
                char inc[KG_REQ_PATH_MAX + KG_PATH_SLACK];
                if (close && snprintf(inc, sizeof inc, "%.*s%s%.*s", dl, path, slash ? "/" : "", (int)(close - q - 1),
                                      q + 1) < (int)sizeof inc) {
                    size_t n;
                    struct kg_err e;
                    char *text = close[-1] != '"' ? kg_read_file(inc, KG_SOURCE_MAX, &n, &e) : NULL;
                    key = kg_hash64(inc, strlen(inc), key);
                    if (text) {
                        key = kg_hash64(text, n, key);
                        key = hash_local_includes(inc, text, n, key, depth + 1);
                        free(text);
                    }
                }
            }
        }
        p = eol + 1;
    }
    return key;
}

static int host_load(void *st, const struct kg_req_load *l, struct kg_reply *rep)
{
    struct host *h = st;
    struct kg_err e;
    size_t len;
    char *src = kg_read_file(l->path, KG_SOURCE_MAX, &len, &e);
    if (!src) {
        snprintf(rep->msg, sizeof rep->msg, "%s", e.msg);
        return KG_WS_COMPILE;
    }
    char inc[KG_REQ_PATH_MAX + KG_PATH_SLACK];
    if (kg_cache_include_dir(l->cache_dir, inc, sizeof inc, &e)) {
        free(src);
        snprintf(rep->msg, sizeof rep->msg, "%s", e.msg);
        return KG_WS_UNAVAILABLE;
    }
    const char *cc = l->cc[0] ? l->cc : "cc";
    char defs[256];
    snprintf(defs, sizeof defs, "-DKG_T=%s", ctype_of(l->dtype));
    char ddef[64];
    snprintf(ddef, sizeof ddef, "-DKG_DTYPE_%s", kg_dtype_name((enum kg_dtype)l->dtype));
    for (char *p = ddef; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    char incf[KG_REQ_PATH_MAX + 2 * KG_PATH_SLACK];
    snprintf(incf, sizeof incf, "-I%s", inc);
    /* key: source, compiler, flags, kgate.h (through the include dir's hash) */
    uint64_t key = kg_hash64(src, len, 0);
    key = kg_hash64(cc, strlen(cc), key);
    key = kg_hash64(defs, strlen(defs), key);
    key = kg_hash64(inc, strlen(inc), key);
    key = kg_hash64("-Wl,-Bsymbolic", 14, key); /* objects built before it bind differently */
    key = hash_local_includes(l->path, src, len, key, 0);
    char so[KG_REQ_PATH_MAX + KG_PATH_SLACK], tmp[KG_REQ_PATH_MAX + 2 * KG_PATH_SLACK];
    snprintf(so, sizeof so, "%s/host-%016llx.so", l->cache_dir, (unsigned long long)key);
    struct stat sb;
    double t0 = kg_now();
    if (stat(so, &sb) != 0) {
        kg_tmp_name(tmp, sizeof tmp, so);
        /* -Bsymbolic: the kernel's calls to its own functions stay its own; without it a function
         * named like one of libkgate's (the worker is kgate) binds to kgate's copy at dlopen */
        char *argv[] = {(char *)cc,
                        "-std=gnu11",
                        "-O2",
                        "-g",
                        "-fPIC",
                        "-shared",
                        "-fno-fast-math",
                        incf,
                        defs,
                        ddef,
                        "-Wl,-Bsymbolic",
                        "-o",
                        tmp,
                        (char *)l->path,
                        "-lm",
                        NULL};
        char out[3500];
        int rc = kg_run_cmd(argv, out, sizeof out, 120);
        if (rc != 0) {
            unlink(tmp);
            compile_failed(l->path, src, cc, out, rep);
            free(src);
            return rc == 127 ? KG_WS_UNAVAILABLE : KG_WS_COMPILE;
        }
        if (rename(tmp, so)) {
            snprintf(rep->msg, sizeof rep->msg, "cannot store %s: %s", so, strerror(errno));
            unlink(tmp);
            free(src);
            return KG_WS_UNAVAILABLE;
        }
        snprintf(rep->compiler, sizeof rep->compiler, "%s", cc);
    } else {
        snprintf(rep->compiler, sizeof rep->compiler, "%s (cached)", cc);
    }
    free(src);
    rep->compile_seconds = kg_now() - t0;
    kg_strlcpy(h->so_path, so, sizeof h->so_path);
    return KG_WS_OK;
}

static int host_open(void *st, const struct kg_req_load *l, struct kg_reply *rep)
{
    struct host *h = st;
    const char *so = h->so_path;
    /* its address space is limited from here on (the compiler, a child, had none): an
     * allocation storm ends this worker, not the machine */
    struct rlimit rl;
    if (l->mem_limit && getrlimit(RLIMIT_AS, &rl) == 0) {
        /* never above a limit the worker already has (an outer ulimit -v): that one stays */
        rlim_t want = (rlim_t)l->mem_limit;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) want = rl.rlim_max;
        rl.rlim_cur = rl.rlim_max = want;
        if (setrlimit(RLIMIT_AS, &rl)) {
            snprintf(rep->msg, sizeof rep->msg, "cannot limit the worker's memory to %llu bytes: %s",
                     (unsigned long long)l->mem_limit, strerror(errno));
            return KG_WS_UNAVAILABLE;
        }
    }
    /* the candidate's first instruction (a constructor) runs inside dlopen: from here on this
     * process has no privilege that could read the judge or the oracle worker */
    char why[300];
    if (!l->oracle && kg_sandbox_drop(why, sizeof why)) {
        snprintf(rep->msg, sizeof rep->msg,
                 "cannot drop the worker's privileges before loading %s: %s (KGATE_SANDBOX=0 "
                 "runs it anyway)",
                 l->path, why);
        return KG_WS_UNAVAILABLE;
    }
    h->so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!h->so) {
        char dl[1024];
        kg_strlcpy(dl, dlerror(), sizeof dl);
        size_t ml = 0, len;
        struct kg_err e;
        /* a kgate.h function called undeclared compiles (an implicit declaration is a warning)
         * and is missing only here */
        char *src = strstr(dl, "undefined symbol: kg_") ? kg_read_file(l->path, KG_SOURCE_MAX, &len, &e) : NULL;
        rep->msg[0] = 0;
        if (src) no_kgate_h(l->path, src, dl, rep->msg, sizeof rep->msg, &ml);
        free(src);
        kg_appendf(rep->msg, sizeof rep->msg, &ml, "%s: cannot load the compiled kernel: %s", l->path, dl);
        return KG_WS_COMPILE;
    }
    h->fn = dlsym(h->so, l->entry);
    if (!h->fn) {
        snprintf(rep->msg, sizeof rep->msg,
                 "entry '%s' not found after compile (is it static, misspelt, or C++-mangled?)", l->entry);
        return KG_WS_ENTRY;
    }
    h->oracle = l->oracle;
    h->returns_int = l->returns_int;
    h->nargs = l->nargs;
    if (h->oracle) return KG_WS_OK;
    arm_crash_report(h->fn, so);
    for (int i = 0; i < l->nargs; i++) {
        switch (l->argkind[i]) {
        case KG_ARG_TENSOR: h->types[i] = &ffi_type_pointer; break;
        case KG_ARG_INT: h->types[i] = &ffi_type_sint32; break;
        case KG_ARG_LONG: h->types[i] = &ffi_type_sint64; break;
        case KG_ARG_FLOAT: h->types[i] = &ffi_type_float; break;
        case KG_ARG_DOUBLE: h->types[i] = &ffi_type_double; break;
        default: snprintf(rep->msg, sizeof rep->msg, "bad arg kind"); return KG_WS_BAD_REQUEST;
        }
    }
    if (ffi_prep_cif(&h->cif, FFI_DEFAULT_ABI, (unsigned)l->nargs, h->returns_int ? &ffi_type_sint : &ffi_type_void,
                     h->types) != FFI_OK) {
        snprintf(rep->msg, sizeof rep->msg, "libffi cannot describe the call of %s", l->entry);
        return KG_WS_BAD_REQUEST;
    }
    return KG_WS_OK;
}

/* [PROT_NONE page][bytes, rounded up to pages][PROT_NONE page]; the handle is the first
 * usable byte. */
static int host_alloc(void *st, uint64_t bytes, uint64_t *handle, struct kg_reply *rep)
{
    struct host *h = st;
    uint64_t pg = (uint64_t)h->page, body = (bytes + pg - 1) / pg * pg;
    if (body == 0) body = pg;
    char *p = mmap(NULL, body + 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(rep->msg, sizeof rep->msg, "mmap of %llu bytes failed: %s", (unsigned long long)bytes,
                 strerror(errno));
        return KG_WS_LAUNCH;
    }
    if (mprotect(p + pg, body, PROT_READ | PROT_WRITE)) {
        munmap(p, body + 2 * pg);
        snprintf(rep->msg, sizeof rep->msg, "mprotect failed: %s", strerror(errno));
        return KG_WS_LAUNCH;
    }
    *handle = (uint64_t)(uintptr_t)(p + pg);
    return KG_WS_OK;
}

static void host_release(void *st, uint64_t handle, uint64_t bytes)
{
    struct host *h = st;
    uint64_t pg = (uint64_t)h->page, body = (bytes + pg - 1) / pg * pg;
    if (body == 0) body = pg;
    munmap((char *)(uintptr_t)handle - pg, body + 2 * pg);
}

static int host_upload(void *st, uint64_t dst, const void *src, uint64_t n, struct kg_reply *rep)
{
    memcpy((void *)(uintptr_t)dst, src, n);
    return KG_WS_OK;
}

static int host_download(void *st, void *dst, uint64_t src, uint64_t n, struct kg_reply *rep)
{
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return KG_WS_OK;
}

static int host_launch(void *st, const struct kg_launch *L, struct kg_reply *rep)
{
    struct host *h = st;
    if (L->nargs != h->nargs) {
        snprintf(rep->msg, sizeof rep->msg, "run with %d args, loaded with %d", L->nargs, h->nargs);
        return KG_WS_BAD_REQUEST;
    }
    union {
        void *p;
        int32_t i;
        int64_t l;
        float f;
        double d;
    } vals[KG_MAX_ARGS];
    void *ptrs[KG_MAX_ARGS];
    for (int i = 0; i < L->nargs; i++) {
        switch (L->kind[i]) {
        case KG_ARG_TENSOR: vals[i].p = (void *)(uintptr_t)L->ptr[i]; break;
        case KG_ARG_INT: vals[i].i = (int32_t)L->args[i].ival; break;
        case KG_ARG_LONG: vals[i].l = L->args[i].ival; break;
        case KG_ARG_FLOAT: vals[i].f = (float)L->args[i].fval; break;
        case KG_ARG_DOUBLE: vals[i].d = L->args[i].fval; break;
        }
        ptrs[i] = &vals[i];
    }
    ffi_sarg ret = 0;
    double t0 = kg_now();
    ffi_call(&h->cif, FFI_FN(h->fn), &ret, ptrs);
    h->seconds = kg_now() - t0;
    if (h->returns_int && (int)ret != 0) {
        rep->code = (int32_t)ret;
        snprintf(rep->msg, sizeof rep->msg, "the entry returned %d: case refused", (int)ret);
        return KG_WS_REFUSED;
    }
    return KG_WS_OK;
}

static int host_sync(void *st, struct kg_reply *rep)
{
    struct host *h = st;
    rep->seconds = h->seconds;
    return KG_WS_OK;
}

static int host_oracle(void *st, struct kg_oracle_io *io, struct kg_reply *rep)
{
    struct host *h = st;
    if (!h->oracle) {
        snprintf(rep->msg, sizeof rep->msg, "not loaded as an oracle");
        return KG_WS_BAD_REQUEST;
    }
    double t0 = kg_now();
    int rc = ((kg_oracle_fn)h->fn)(io);
    rep->seconds = kg_now() - t0;
    if (rc) {
        rep->code = rc;
        io->err[sizeof io->err - 1] = 0;
        snprintf(rep->msg, sizeof rep->msg, "oracle returned %d: %s", rc, io->err[0] ? io->err : "(no message)");
        return KG_WS_REFUSED;
    }
    return KG_WS_OK;
}

static void host_fini(void *st)
{
    struct host *h = st;
    if (!h) return;
    /* the kernel's .so stays mapped: it may have registered destructors or threads */
    free(h);
}

const struct kg_runner_ops kg_runner_host = {
    .name = "host",
    .init = host_init,
    .load = host_load,
    .open = host_open,
    .alloc = host_alloc,
    .release = host_release,
    .upload = host_upload,
    .download = host_download,
    .launch = host_launch,
    .busy_default = NULL,
    .sync = host_sync,
    .oracle = host_oracle,
    .fini = host_fini,
};
