/* devmem.c: a GPU's free memory, from NVML (libnvidia-ml, dlopen'd once) or a test's file. */
#include "audit/devmem.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "base/util.h"

/* NVML's own declarations, of the few calls used (nvml.h is not needed to build kgate) */
typedef void *nvml_device;
struct nvml_memory {
    unsigned long long total, free, used;
};
static struct {
    bool tried, ok;
    int (*init)(void);
    int (*by_index)(unsigned, nvml_device *);
    int (*by_uuid)(const char *, nvml_device *);
    int (*memory)(nvml_device, struct nvml_memory *);
} nv;

static bool nvml_ready(void)
{
    if (nv.tried) return nv.ok;
    nv.tried = true;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    *(void **)&nv.init = dlsym(lib, "nvmlInit_v2");
    *(void **)&nv.by_index = dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&nv.by_uuid = dlsym(lib, "nvmlDeviceGetHandleByUUID");
    *(void **)&nv.memory = dlsym(lib, "nvmlDeviceGetMemoryInfo");
    nv.ok = nv.init && nv.by_index && nv.by_uuid && nv.memory && nv.init() == 0;
    return nv.ok;
}

static int fake(const char *path, const char *name, uint64_t *free_b, uint64_t *total_b)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256], dev[64];
    unsigned long long fr, tot;
    int rc = -1;
    while (rc && fgets(line, sizeof line, f))
        if (sscanf(line, "%63s %llu %llu", dev, &fr, &tot) == 3 && !strcmp(dev, name)) {
            *free_b = (uint64_t)fr << 20;
            *total_b = (uint64_t)tot << 20;
            rc = 0;
        }
    fclose(f);
    return rc;
}

int kg_devmem(const char *name, uint64_t *free_b, uint64_t *total_b)
{
    const char *f = getenv("KGATE_FAKE_DEVMEM");
    if (f && *f) return fake(f, name, free_b, total_b);
    if (!nvml_ready()) return -1;
    nvml_device d;
    char *end;
    unsigned long idx = strtoul(name, &end, 10);
    int rc = *name && !*end ? nv.by_index((unsigned)idx, &d) : nv.by_uuid(name, &d);
    struct nvml_memory m;
    if (rc || nv.memory(d, &m)) return -1;
    *free_b = m.free;
    *total_b = m.total;
    return 0;
}

int kg_hostmem(uint64_t *free_b, uint64_t *total_b)
{
    const char *path = getenv("KGATE_FAKE_HOSTMEM");
    if (path && *path) {
        FILE *f = fopen(path, "r");
        unsigned long long fr, tot;
        int ok = f && fscanf(f, "%llu %llu", &fr, &tot) == 2;
        if (f) fclose(f);
        if (!ok) return -1;
        *free_b = (uint64_t)fr << 20;
        *total_b = (uint64_t)tot << 20;
        return 0;
    }
    struct sysinfo si;
    uint64_t avail = kg_mem_available();
    if (sysinfo(&si) || avail == UINT64_MAX) return -1;
    *total_b = (uint64_t)si.totalram * si.mem_unit;
    *free_b = avail < *total_b ? avail : *total_b;
    return 0;
}
