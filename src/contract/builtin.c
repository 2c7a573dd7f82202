/* builtin.c: materialising embedded kernels in the cache directory. */
#include "contract/builtin.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cache.h"

static bool gpu_present(void)
{
    return access("/dev/nvidiactl", F_OK) == 0 || access("/dev/nvidia0", F_OK) == 0;
}

int kg_builtin_path(const char *name, enum kg_builtin_pick want, char *buf, size_t n, struct kg_err *e)
{
    const struct kg_builtin *pick = NULL;
    bool has_ext = strchr(name, '.') != NULL;
    bool want_cu = want == KG_BUILTIN_CUDA || (want == KG_BUILTIN_AUTO && gpu_present());
    size_t nl = strlen(name);
    for (const struct kg_builtin *b = kg_builtins; b->name; b++) {
        /* NAME is NAME.c on the host and NAME.cu or NAME_cuda.cu on a GPU (the softmax demo's
         * distinct stems keep its two test logs apart) */
        bool match = has_ext
                         ? !strcmp(b->file, name)
                         : !strcmp(b->name, name) || (!strncmp(b->name, name, nl) && !strcmp(b->name + nl, "_cuda"));
        if (!match) continue;
        bool cu = strstr(b->file, ".cu") != NULL;
        if (!pick || cu == want_cu) pick = b;
    }
    if (!pick) {
        char list[4096];
        size_t len = 0;
        list[0] = 0;
        for (const struct kg_builtin *b = kg_builtins; b->name; b++)
            if (!strstr(b->file, ".cu")) kg_appendf(list, sizeof list, &len, " %s", b->name);
        return kg_errf(e, "no built-in kernel '%s' (built in:%s; NAME.c is the host variant, NAME.cu the CUDA one)",
                       name, list);
    }
    char cache[KG_DIR_MAX];
    if (kg_cache_dir(cache, sizeof cache, e)) return -1;
    char dir[KG_DIR_MAX + KG_PATH_SLACK];
    uint64_t h = kg_hash64(pick->source, strlen(pick->source), 0);
    snprintf(dir, sizeof dir, "%s/builtin-%016llx", cache, (unsigned long long)h);
    if (kg_mkdirs(dir)) return kg_errf(e, "cannot create %s", dir);
    snprintf(buf, n, "%s/%s", dir, pick->file);
    struct stat st;
    if (stat(buf, &st) == 0) return 0;
    return kg_write_file(buf, pick->source, e);
}
