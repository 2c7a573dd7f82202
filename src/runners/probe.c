/* probe.c: which runners can run on this machine, for `kgate --version`. The host runner needs
 * the C compiler; the CUDA runner libcuda with a device, and NVRTC (or nvcc) to compile; CUPTI
 * only records launches; the torch runner a Python with PyTorch. The CUDA libraries are loaded
 * the way the CUDA runner loads them, in a child process (`kgate __probe`), so that the judge
 * itself never maps a driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cache.h"
#include "runners/runner.h"
#ifdef KG_HAVE_CUDA
#include "probes/cupti.h"
#include "runners/cuda/cuda.h"
#endif

/* The first line of s, in place. */
static char *first_line(char *s)
{
    s[strcspn(s, "\n")] = 0;
    return s;
}

void kg_runners_probe_here(char *out, size_t n)
{
    size_t len = 0;
    out[0] = 0;
#ifdef KG_HAVE_CUDA
    struct kg_reply rep;
    memset(&rep, 0, sizeof rep);
    void *st = NULL;
    if (kg_cuda_init(&st, &rep) == KG_WS_OK) {
        struct cuda *c = st;
        kg_appendf(out, n, &len, "cuda: yes (driver %d.%d, %d device%s, device 0: %s, sm_%d%d)\n",
                   c->driver_version / 1000, c->driver_version % 1000 / 10, (int)rep.dev.device_count,
                   rep.dev.device_count == 1 ? "" : "s", rep.dev.name, c->cc_major, c->cc_minor);
        free(c); /* libcuda stays loaded; no context was made */
    } else {
        kg_appendf(out, n, &len, "cuda: no (%s)\n", first_line(rep.msg));
    }
    struct cuda *r = calloc(1, sizeof *r);
    if (!r)
        kg_appendf(out, n, &len, "nvrtc: not probed (out of memory)\n");
    else if (kg_cuda_open_nvrtc(r, NULL))
        kg_appendf(out, n, &len, "nvrtc: no (%s)\n", first_line(r->rtc_why));
    else
        kg_appendf(out, n, &len, "nvrtc: %d.%d (%s)\n", r->rtc.major, r->rtc.minor, r->rtc.path);
    free(r); /* libnvrtc stays loaded too: this process ends next */
    unsigned v = 0;
    char why[1200];
    if (kg_cupti_version(NULL, &v, why, sizeof why))
        kg_appendf(out, n, &len, "cupti: no (%s; runs work, launches are not recorded)\n", why);
    else
        kg_appendf(out, n, &len, "cupti: yes (API version %u)\n", v);
#else
    kg_appendf(out, n, &len, "cuda: no (this build has no CUDA runner: configured without the CUDA headers)\n");
#endif
}

/* The C compiler the host runner uses, with its version. */
static void probe_host(char *out, size_t n, size_t *len)
{
    const char *cc = getenv("KGATE_CC");
    if (!cc || !*cc) cc = KG_SYSTEM_CC;
    char ver[2048];
    char *argv[] = {(char *)cc, "--version", NULL};
    int rc = kg_run_cmd(argv, ver, sizeof ver, 30);
    if (rc == 0)
        kg_appendf(out, n, len, "host: yes (%s: %s)\n", cc, first_line(ver));
    else
        kg_appendf(out, n, len, "host: no (%s --version: %s)\n", cc, rc == 127 ? "not found" : first_line(ver));
}

/* PyTorch, as the torch runner's interpreter imports it. */
static void probe_torch(const char *python, char *out, size_t n, size_t *len)
{
    const char *py = python && *python ? python : getenv("KGATE_PYTHON");
    if (!py || !*py) py = "python3";
    char res[4096];
    char *argv[] = {(char *)py, "-c",
                    "import torch; print('torch %s (CUDA %s, GPU %s)' % (torch.__version__, torch.version.cuda or "
                    "'none', 'yes' if torch.cuda.is_available() else 'no'))",
                    NULL};
    int rc = kg_run_cmd(argv, res, sizeof res, 120);
    if (rc == 0) {
        kg_appendf(out, n, len, "torch: yes (%s: %s)\n", py, first_line(res));
        return;
    }
    /* the last line of a traceback says why (ModuleNotFoundError: No module named 'torch') */
    size_t l = strlen(res);
    while (l && res[l - 1] == '\n') res[--l] = 0;
    char *last = strrchr(res, '\n');
    kg_appendf(out, n, len, "torch: no (%s: %s)\n", py,
               rc == 127 ? "not found"
               : last    ? last + 1
               : res[0]  ? res
                         : "import torch failed");
}

void kg_runners_probe(const char *exe, const char *python, char *out, size_t n)
{
    size_t len = 0;
    out[0] = 0;
    probe_host(out, n, &len);
    char res[4096];
    char *argv[] = {(char *)exe, "__probe", NULL};
    int rc = kg_run_cmd(argv, res, sizeof res, 60);
    if (rc == 0)
        kg_appendf(out, n, &len, "%s", res);
    else
        kg_appendf(out, n, &len, "cuda: not probed (%s __probe exited %d: %s)\n", exe, rc, first_line(res));
    probe_torch(python, out, n, &len);
}
