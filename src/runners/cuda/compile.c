/* compile.c: the CUDA runner's kernel file to an image for the device: NVRTC for the
 * device's exact architecture (sm_90a on an H200) with the stand-in headers of nvrtc/, then
 * `nvcc -cubin` as the fallback, cached by a hash of everything that shapes the binary (the
 * files the source includes too). kg_cuda_get_binary is the one way in. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cache.h"
#include "base/dtype.h"
#include "base/util.h"
#include "runners/cuda/cuda.h"

#define NVCC_TIMEOUT 300.0

/* ---------------------------------------------------------------------------------------
 * Cache key: the source and the files it includes from its own directory tree */

struct seen {
    char *path[256];
    int n;
};

static void dir_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == path)
        snprintf(dir, n, "/");
    else
        snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* Hashes, recursively, every `#include "x"` or `#include <x>` that resolves next to the
 * including file or in the kernel's directory (the toolkit's headers are covered by the
 * NVRTC version in the key). A stale cache after editing a sibling header is the bug this
 * prevents. Over-approximates (commented-out includes count too), never under. */
static uint64_t hash_includes(const char *file, const char *src, const char *kdir, struct seen *s, int depth,
                              uint64_t h)
{
    if (depth > 32) return h;
    char fdir[KG_REQ_PATH_MAX];
    dir_of(file, fdir, sizeof fdir);
    for (const char *p = src; *p; p++) {
        if (*p != '#' || (p > src && p[-1] != '\n' && p[-1] != ' ' && p[-1] != '\t')) continue;
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t') q++;
        if (strncmp(q, "include", 7) != 0) continue;
        q += 7;
        while (*q == ' ' || *q == '\t') q++;
        char close = *q == '"' ? '"' : *q == '<' ? '>' : 0;
        if (!close) continue;
        const char *name = ++q;
        while (*q && *q != close && *q != '\n') q++;
        if (*q != close || q == name || q - name > 512) continue;
        const char *dirs[2] = {fdir, kdir};
        for (int d = 0; d < 2; d++) {
            char path[KG_REQ_PATH_MAX + 3 * KG_PATH_SLACK];
            snprintf(path, sizeof path, "%s/%.*s", dirs[d], (int)(q - name), name);
            struct stat sb;
            if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
            int dup = 0;
            for (int i = 0; i < s->n && !dup; i++) dup = strcmp(s->path[i], path) == 0;
            if (dup) break;
            if (s->n == (int)(sizeof s->path / sizeof *s->path)) return h;
            s->path[s->n] = strdup(path);
            if (!s->path[s->n]) return h;
            s->n++;
            size_t len;
            struct kg_err e;
            char *text = kg_read_file(path, KG_SOURCE_MAX, &len, &e);
            h = kg_hash64(path, strlen(path), h);
            if (text) {
                h = kg_hash64(text, len, h);
                h = hash_includes(path, text, kdir, s, depth + 1, h);
                free(text);
            }
            break;
        }
    }
    return h;
}

/* ---------------------------------------------------------------------------------------
 * Compiling: NVRTC, then nvcc; the result and how it was obtained */

void kg_cuda_build_free(struct build *b)
{
    free(b->img);
    free(b->ptx);
    b->img = b->ptx = NULL;
}

struct rtc_out {
    nvrtcResult r;
    char *log;
};

/* One NVRTC compile; with entry, also its lowered name. Fills b on success. */
static void rtc_compile(struct cuda *c, const char *src, const char *name, const char *const *opts, int nopts,
                        const char *entry, struct build *b, struct rtc_out *o)
{
    nvrtcProgram prog = NULL;
    o->log = NULL;
    o->r = c->rtc.CreateProgram(&prog, src, name, kg_cuda_hdr_count, kg_cuda_hdr_text, kg_cuda_hdr_names);
    if (o->r != NVRTC_SUCCESS) return;
    if (entry && (o->r = c->rtc.AddNameExpression(prog, entry)) != NVRTC_SUCCESS) goto out;
    o->r = c->rtc.CompileProgram(prog, nopts, opts);
    size_t ls = 0;
    if (c->rtc.GetProgramLogSize(prog, &ls) == NVRTC_SUCCESS && ls > 0 && (o->log = malloc(ls + 1))) {
        if (c->rtc.GetProgramLog(prog, o->log) != NVRTC_SUCCESS) o->log[0] = 0;
        o->log[ls] = 0;
    }
    if (o->r != NVRTC_SUCCESS) goto out;
    if (entry) {
        const char *lowered = NULL;
        if ((o->r = c->rtc.GetLoweredName(prog, entry, &lowered)) != NVRTC_SUCCESS) goto out;
        snprintf(b->sym, sizeof b->sym, "%s", lowered ? lowered : entry);
    }
    size_t n = 0;
    if (c->rtc.GetPTXSize(prog, &n) == NVRTC_SUCCESS && n > 0 && (b->ptx = malloc(n + 1))) {
        if (c->rtc.GetPTX(prog, b->ptx) == NVRTC_SUCCESS) {
            b->ptx[n] = 0;
        } else {
            free(b->ptx);
            b->ptx = NULL;
        }
    }
    n = 0;
    if (c->rtc.GetCUBINSize && c->rtc.GetCUBIN && c->rtc.GetCUBINSize(prog, &n) == NVRTC_SUCCESS && n > 0 &&
        (b->img = malloc(n))) {
        if (c->rtc.GetCUBIN(prog, b->img) == NVRTC_SUCCESS) {
            b->nimg = n;
            b->is_cubin = 1;
        } else {
            free(b->img);
            b->img = NULL;
        }
    }
    if (!b->img && b->ptx) { /* virtual architecture: load the PTX, the driver JITs it */
        b->img = strdup(b->ptx);
        b->nimg = b->img ? strlen(b->img) + 1 : 0;
        b->is_cubin = 0;
    }
    if (!b->img) o->r = NVRTC_ERROR_INTERNAL_ERROR;
out:
    c->rtc.DestroyProgram(&prog);
}

/* The text of the first error in a compiler log ("cannot open source file "x""), short
 * enough for rep->compiler; the first line when no "error: " is there. */
static void first_error(const char *log, char *out, size_t n)
{
    out[0] = 0;
    if (!log) return;
    const char *p = strstr(log, "error: ");
    p = p ? p + 7 : log;
    while (*p == '\n' || *p == ' ') p++;
    const char *end = strchr(p, '\n');
    snprintf(out, n, "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
}

struct arch {
    char sm[32];      /* sm_90a, or compute_XY when only PTX is possible */
    char compute[32]; /* compute_90a */
    int ptx_only;
};

/* sm_90a for 9.0 (wgmma, setmaxnreg need the 'a' target), sm_100a for 10.0, else sm_XY. When
 * the device is newer than anything this NVRTC knows, PTX for NVRTC's newest architecture,
 * which the driver JIT-compiles. */
static void pick_arch(struct cuda *c, struct arch *a)
{
    int num = c->cc_major * 10 + c->cc_minor;
    const char *suffix = (num == 90 || num == 100) ? "a" : "";
    memset(a, 0, sizeof *a);
    snprintf(a->sm, sizeof a->sm, "sm_%d%s", num, suffix);
    snprintf(a->compute, sizeof a->compute, "compute_%d%s", num, suffix);
    if (c->rtc_state != 1 || !c->rtc.GetNumSupportedArchs || !c->rtc.GetSupportedArchs) return;
    int na = 0, archs[128];
    if (c->rtc.GetNumSupportedArchs(&na) != NVRTC_SUCCESS || na <= 0 || na > 128) return;
    if (c->rtc.GetSupportedArchs(archs) != NVRTC_SUCCESS) return;
    int max = 0;
    for (int i = 0; i < na; i++)
        if (archs[i] > max) max = archs[i];
    if (num > max && max > 0) {
        snprintf(a->sm, sizeof a->sm, "compute_%d", max);
        snprintf(a->compute, sizeof a->compute, "compute_%d", max);
        a->ptx_only = 1;
    }
}

static const char *ctype_of(int dtype)
{
    switch (dtype) {
    case KG_F64: return "double";
    case KG_F32: return "float";
    case KG_F16: return "__half";
    case KG_BF16: return "__nv_bfloat16";
    case KG_I32: return "int";
    case KG_I64: return "long long";
    case KG_U8: return "unsigned char";
    case KG_BOOL: return "bool";
    default: return "float";
    }
}

/* Runs nvcc; fills b->img (ptx=0) or b->ptx (ptx=1). Returns the exit status (-1: could not
 * run), with its output in out. */
static int run_nvcc(const char *nvcc, const struct arch *a, int ptx, const char *kdir, const char *defs[2],
                    const char *tmpdir, uint64_t key, const char *path, struct build *b, char *out, size_t outn)
{
    char gencode[128], incdir[1100], dst[1200];
    int cubin = !ptx && !a->ptx_only;
    if (cubin)
        snprintf(gencode, sizeof gencode, "-gencode=arch=%s,code=%s", a->compute, a->sm);
    else
        snprintf(gencode, sizeof gencode, "-arch=%s", a->compute);
    snprintf(incdir, sizeof incdir, "-I%s", kdir);
    char base[1100];
    snprintf(base, sizeof base, "%s/kgate-nvcc-%016llx", tmpdir, (unsigned long long)key);
    kg_tmp_name(dst, sizeof dst - 8, base); /* unique: workers are pid 1 of their namespaces */
    strcat(dst, cubin ? ".cubin" : ".ptx");
    char *argv[] = {(char *)nvcc,
                    cubin ? "-cubin" : "-ptx",
                    gencode,
                    "-std=c++17",
                    "-lineinfo",
                    incdir,
                    "-include",
                    "cuda_fp16.h",
                    "-include",
                    "cuda_bf16.h",
                    (char *)defs[0],
                    (char *)defs[1],
                    "-o",
                    dst,
                    (char *)path,
                    NULL};
    int rc = kg_run_cmd(argv, out, outn, NVCC_TIMEOUT);
    if (rc != 0) {
        unlink(dst);
        return rc;
    }
    size_t len = 0;
    struct kg_err e;
    char *data = kg_read_file(dst, KG_OUTPUT_MAX, &len, &e);
    unlink(dst);
    if (!data) {
        snprintf(out, outn, "%s", e.msg);
        return -1;
    }
    if (ptx) {
        b->ptx = data;
    } else {
        b->img = data;
        b->nimg = cubin ? len : len + 1; /* kg_read_file NUL-terminates: PTX keeps its NUL */
        b->is_cubin = cubin;
        if (!cubin && !b->ptx) b->ptx = strdup(data);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------
 * The compile cache: one file per key, [text header][image], written to a temporary name
 * and renamed so concurrent workers never see half a file. */

static void cache_file(const char *dir, uint64_t key, char *buf, size_t n)
{
    snprintf(buf, n, "%s/cuda-%016llx.bin", dir, (unsigned long long)key);
}

static int cache_get(const char *file, struct build *b)
{
    size_t len;
    struct kg_err e;
    char *data = kg_read_file(file, KG_OUTPUT_MAX, &len, &e);
    if (!data) return -1;
    char kind[16] = "", *p = data;
    unsigned long long size = 0;
    int ok = strncmp(p, "kgate-cuda 1\n", 13) == 0;
    p += ok ? 13 : 0;
    /* line by line: kind, entry, compiler, tmem, size, then a blank line */
    for (int line = 0; ok && line < 5; line++) {
        char *nl = strchr(p, '\n');
        if (!nl) {
            ok = 0;
            break;
        }
        *nl = 0;
        if (line == 0) ok = sscanf(p, "kind %15s", kind) == 1;
        if (line == 1) ok = strncmp(p, "entry ", 6) == 0 && snprintf(b->sym, sizeof b->sym, "%s", p + 6) > 0;
        if (line == 2)
            ok = strncmp(p, "compiler ", 9) == 0 && snprintf(b->compiler, sizeof b->compiler, "%s", p + 9) >= 0;
        if (line == 3) ok = sscanf(p, "tmem %d", &b->tmem) == 1;
        if (line == 4) ok = sscanf(p, "size %llu", &size) == 1;
        p = nl + 1;
    }
    ok = ok && *p == '\n';
    p++;
    size_t off = (size_t)(p - data);
    ok = ok && off <= len && size == len - off && size > 0;
    int cubin = strcmp(kind, "cubin") == 0;
    ok = ok && (cubin || strcmp(kind, "ptx") == 0);
    if (ok && (b->img = malloc(size + 1))) {
        memcpy(b->img, p, size);
        b->img[size] = 0; /* PTX needs its NUL; harmless after a cubin */
        b->nimg = cubin ? size : size + 1;
        b->is_cubin = cubin;
    }
    free(data);
    return b->img ? 0 : -1;
}

static void cache_put(const char *file, const struct build *b)
{
    char tmp[KG_REQ_PATH_MAX + 2 * KG_PATH_SLACK];
    kg_tmp_name(tmp, sizeof tmp, file);
    FILE *f = fopen(tmp, "wb");
    if (!f) return;
    size_t n = b->is_cubin ? b->nimg : strlen(b->img);
    int bad = fprintf(f, "kgate-cuda 1\nkind %s\nentry %s\ncompiler %s\ntmem %d\nsize %zu\n\n",
                      b->is_cubin ? "cubin" : "ptx", b->sym, b->compiler, b->tmem, n) < 0;
    bad |= fwrite(b->img, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, file)) unlink(tmp);
}

/* ---------------------------------------------------------------------------------------
 * The entry's binary: from the cache, else compiled (NVRTC, then nvcc) and cached */

/* Compiles l->path into b: NVRTC with the entry as a name expression; if that fails, NVRTC
 * without it (success then means the entry is missing, unless the binary has it under a
 * name NVRTC would not lower); if that fails too, nvcc -cubin. */
static int compile(struct cuda *c, const struct kg_req_load *l, const char *home, const char *src, const struct arch *a,
                   const char *const *opts, int nopts, const char *defs[2], uint64_t key, const char *tmpdir,
                   struct build *b, struct kg_reply *rep)
{
    char kdir[KG_REQ_PATH_MAX];
    dir_of(l->path, kdir, sizeof kdir);
    struct rtc_out o1 = {NVRTC_SUCCESS, NULL}, o2 = {NVRTC_SUCCESS, NULL};
    char rtc_fail[300] = "";
    if (c->rtc_state == 1) {
        rtc_compile(c, src, l->path, opts, nopts, l->entry, b, &o1);
        if (o1.r == NVRTC_SUCCESS) {
            snprintf(b->compiler, sizeof b->compiler, "nvrtc %d.%d %s", c->rtc.major, c->rtc.minor, a->sm);
            free(o1.log);
            return KG_WS_OK;
        }
        kg_cuda_build_free(b);
        rtc_compile(c, src, l->path, opts, nopts, NULL, b, &o2);
        if (o2.r == NVRTC_SUCCESS) {
            free(o1.log);
            free(o2.log);
            snprintf(b->compiler, sizeof b->compiler, "nvrtc %d.%d %s", c->rtc.major, c->rtc.minor, a->sm);
            return kg_cuda_find_entry(b->img, b->nimg, b->is_cubin, l->entry, b->sym, sizeof b->sym, rep);
        }
        kg_cuda_build_free(b);
        first_error(o2.log, rtc_fail, sizeof rtc_fail);
        if (!rtc_fail[0]) snprintf(rtc_fail, sizeof rtc_fail, "%s", c->rtc.GetErrorString(o2.r));
    } else {
        kg_strlcpy(rtc_fail, c->rtc_why, sizeof rtc_fail);
    }
    /* nvcc */
    char nvcc[600], out[6000] = "";
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", home);
    int rc = -1;
    if (access(nvcc, X_OK) == 0) {
        rc = run_nvcc(nvcc, a, 0, kdir, defs, tmpdir, key, l->path, b, out, sizeof out);
        /* tcgen05.alloc's column count is read from PTX: ask nvcc for it too when it may matter */
        char out2[2000];
        if (rc == 0 && !b->ptx && strstr(src, "tcgen05"))
            run_nvcc(nvcc, a, 1, kdir, defs, tmpdir, key, l->path, b, out2, sizeof out2);
    } else {
        snprintf(out, sizeof out, "%s not found", nvcc);
    }
    if (rc == 0) {
        if (c->rtc_state != 1) kg_cuda_say(rep, "NVRTC unavailable (%s): compiled with nvcc", c->rtc_why);
        size_t cl = 0; /* truncated to fit: the whole NVRTC error is in the log */
        b->compiler[0] = 0;
        kg_appendf(b->compiler, sizeof b->compiler, &cl, "nvcc %s (NVRTC: %s)", a->sm, rtc_fail);
        free(o1.log);
        free(o2.log);
        return kg_cuda_find_entry(b->img, b->nimg, b->is_cubin, l->entry, b->sym, sizeof b->sym, rep);
    }
    kg_cuda_build_free(b);
    int status = KG_WS_COMPILE;
    if (c->rtc_state == 1) {
        /* the NVRTC log (file:line) first: it is what the author needs */
        const char *log = o2.log && o2.log[0] ? o2.log : o1.log && o1.log[0] ? o1.log : "";
        kg_cuda_say(rep, "%s: NVRTC could not compile it (%s):\n%.2600s\n--- nvcc fallback: %.1000s", l->path,
                    c->rtc.GetErrorString(o2.r), log, out);
    } else {
        kg_cuda_say(rep, "%s: cannot compile CUDA here: %s; nvcc fallback: %.1500s", l->path, c->rtc_why, out);
        if (access(nvcc, X_OK) != 0) status = KG_WS_UNAVAILABLE;
    }
    free(o1.log);
    free(o2.log);
    return status;
}

/* NVRTC's options. The kernel's directory comes first, as nvcc searches -I before the
 * toolkit; <home>/include/cccl is where CUDA 13 keeps libcu++ (<cuda/std/...>). */
struct copts {
    char arch[64], inc_dir[KG_REQ_PATH_MAX + KG_PATH_SLACK], inc_home[600], inc_cccl[620], kt[64], dt[64];
    const char *v[10];
    int n;
};

static void make_opts(struct copts *o, const char *home, const char *kdir, const struct arch *a, int dtype)
{
    snprintf(o->arch, sizeof o->arch, "--gpu-architecture=%s", a->sm);
    snprintf(o->inc_dir, sizeof o->inc_dir, "--include-path=%s", kdir);
    snprintf(o->inc_home, sizeof o->inc_home, "--include-path=%s/include", home);
    snprintf(o->inc_cccl, sizeof o->inc_cccl, "--include-path=%s/include/cccl", home);
    snprintf(o->kt, sizeof o->kt, "-DKG_T=%s", ctype_of(dtype));
    snprintf(o->dt, sizeof o->dt, "-DKG_DTYPE_%s",
             dtype >= 0 && dtype < KG_DTYPE_COUNT ? kg_dtype_name((enum kg_dtype)dtype) : "T");
    for (char *p = o->dt + strlen("-DKG_DTYPE_"); *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    struct stat sb;
    int have_cccl = stat(o->inc_cccl + strlen("--include-path="), &sb) == 0 && S_ISDIR(sb.st_mode);
    o->n = 0;
    o->v[o->n++] = o->arch;
    o->v[o->n++] = "-std=c++17";
    o->v[o->n++] = o->inc_dir;
    o->v[o->n++] = o->inc_home;
    if (have_cccl) o->v[o->n++] = o->inc_cccl;
    o->v[o->n++] = o->kt;
    o->v[o->n++] = o->dt;
    o->v[o->n++] = "-lineinfo";
    o->v[o->n++] = "--pre-include=kgate_prelude.h";
}

/* Everything that shapes the binary: kgate's cache format, the driver and NVRTC versions,
 * the architecture, the toolkit, the source and what it includes, the entry, the options,
 * the in-memory headers. */
static uint64_t cache_key(const struct cuda *c, const struct kg_req_load *l, const char *home, const char *src,
                          size_t srclen, const char *kdir, const struct arch *a, const struct copts *o)
{
    char ver[800];
    snprintf(ver, sizeof ver, "kgate-cuda-cache 1|driver %d|nvrtc %d.%d %d|%s|%s", c->driver_version, c->rtc.major,
             c->rtc.minor, c->rtc_state, a->sm, home);
    uint64_t key = kg_hash64(ver, strlen(ver), 0);
    key = kg_hash64(src, srclen, key);
    key = kg_hash64(l->entry, strlen(l->entry), key);
    for (int i = 0; i < o->n; i++) key = kg_hash64(o->v[i], strlen(o->v[i]) + 1, key);
    for (int i = 0; i < kg_cuda_hdr_count; i++) key = kg_hash64(kg_cuda_hdr_text[i], strlen(kg_cuda_hdr_text[i]), key);
    struct seen seen = {.n = 0};
    key = hash_includes(l->path, src, kdir, &seen, 0, key);
    for (int i = 0; i < seen.n; i++) free(seen.path[i]);
    return key;
}

/* The entry's binary: from the cache, or compiled (and then cached). Sets rep->compiler and
 * rep->compile_seconds. */
int kg_cuda_get_binary(struct cuda *c, const struct kg_req_load *l, const char *home, struct build *b,
                       struct kg_reply *rep)
{
    struct kg_err e;
    size_t srclen;
    char *src = kg_read_file(l->path, KG_SOURCE_MAX, &srclen, &e);
    if (!src) {
        kg_cuda_say(rep, "%s", e.msg);
        return KG_WS_COMPILE;
    }
    if (c->rtc_state == 0) {
        c->rtc_state = kg_cuda_open_nvrtc(c, home) == 0 ? 1 : -1;
        char probe[700];
        snprintf(probe, sizeof probe, "%s/include/cuda_fp16.h", home);
        if (c->rtc_state == 1 && access(probe, R_OK) != 0) {
            snprintf(c->rtc_why, sizeof c->rtc_why, "%s not found: NVRTC has no cuda_fp16.h (set KGATE_CUDA_HOME)",
                     probe);
            c->rtc_state = -1;
        }
    }
    struct arch a;
    pick_arch(c, &a);
    char kdir[KG_REQ_PATH_MAX];
    dir_of(l->path, kdir, sizeof kdir);
    struct copts o;
    make_opts(&o, home, kdir, &a, l->dtype);
    const char *defs[2] = {o.kt, o.dt};
    uint64_t key = cache_key(c, l, home, src, srclen, kdir, &a, &o);

    char cfile[KG_REQ_PATH_MAX + KG_PATH_SLACK] = "";
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
    if (l->cache_dir[0] && kg_mkdirs(l->cache_dir) == 0) {
        cache_file(l->cache_dir, key, cfile, sizeof cfile);
        tmpdir = l->cache_dir;
    }
    double t0 = kg_now();
    int cached = cfile[0] && cache_get(cfile, b) == 0, s = KG_WS_OK;
    if (!cached) {
        kg_cuda_build_free(b);
        memset(b, 0, sizeof *b);
        b->tmem = -1;
        s = compile(c, l, home, src, &a, o.v, o.n, defs, key, tmpdir, b, rep);
        if (s == KG_WS_OK) {
            b->tmem = kg_cuda_tmem_cols(b->ptx);
            if (cfile[0]) cache_put(cfile, b);
        }
    }
    free(src);
    rep->compile_seconds = kg_now() - t0;
    size_t cl = 0; /* a name too long for the field loses its end, then gets "(cached)" back below */
    rep->compiler[0] = 0;
    kg_appendf(rep->compiler, sizeof rep->compiler, &cl, "%s%s", b->compiler, cached ? " (cached)" : "");
    if (cached && strlen(b->compiler) + 9 >= sizeof rep->compiler) /* keep "(cached)" visible */
        snprintf(rep->compiler + sizeof rep->compiler - 10, 10, " (cached)");
    return s;
}
