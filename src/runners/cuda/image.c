/* image.c: what the CUDA runner reads from a compiled image: the contract's entry, found by
 * its plain or C++-mangled name in an ELF64 cubin's .symtab or in PTX's `.entry` lines, and
 * the column count that tcgen05.alloc asks for in PTX. Bytes only: nothing here calls CUDA. */
#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "runners/cuda/cuda.h"

/* ---------------------------------------------------------------------------------------
 * Finding the entry in a binary: ELF64 .symtab (cubin) or `.entry` lines (PTX) */

struct symfind {
    const char *entry;
    char mangled[600]; /* "_Z3foo" or "_ZN2ns3foo" */
    int nested;
    char hit[4][512];
    int nhit, exact;
};

static void symfind_init(struct symfind *f, const char *entry)
{
    memset(f, 0, sizeof *f);
    f->entry = entry;
    size_t len = 0;
    if (strstr(entry, "::")) {
        f->nested = 1;
        kg_appendf(f->mangled, sizeof f->mangled, &len, "_ZN");
        for (const char *p = entry; *p;) {
            const char *e = strstr(p, "::");
            size_t k = e ? (size_t)(e - p) : strlen(p);
            kg_appendf(f->mangled, sizeof f->mangled, &len, "%zu%.*s", k, (int)k, p);
            p += k + (e ? 2 : 0);
        }
    } else {
        kg_appendf(f->mangled, sizeof f->mangled, &len, "_Z%zu%s", strlen(entry), entry);
    }
}

/* extern "C" foo is "foo"; C++ foo(...) is "_Z3foo<params>", a template instance
 * "_Z3fooI...", ns::foo is "_ZN2ns3fooE..." or "_ZN2ns3fooI...". */
static void symfind_consider(struct symfind *f, const char *sym)
{
    int exact = strcmp(sym, f->entry) == 0;
    size_t m = strlen(f->mangled);
    int mangled = strncmp(sym, f->mangled, m) == 0 && sym[m] && (!f->nested || sym[m] == 'E' || sym[m] == 'I');
    if (!exact && !mangled) return;
    if (exact) {
        f->exact = 1;
        snprintf(f->hit[0], sizeof f->hit[0], "%s", sym);
        f->nhit = 1;
        return;
    }
    if (f->exact) return;
    if (f->nhit < 4) snprintf(f->hit[f->nhit], sizeof f->hit[0], "%s", sym);
    f->nhit++;
}

/* Every global function symbol of an ELF64 little-endian image; -1 when it is not one. */
static int elf_scan(const unsigned char *img, size_t n, struct symfind *f)
{
    Elf64_Ehdr eh;
    if (n < sizeof eh) return -1;
    memcpy(&eh, img, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr))
        return -1;
    if (eh.e_shoff > n || eh.e_shnum > (n - eh.e_shoff) / sizeof(Elf64_Shdr)) return -1;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh, strh;
        memcpy(&sh, img + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= eh.e_shnum) continue;
        if (sh.sh_offset > n || sh.sh_size > n - sh.sh_offset) return -1;
        memcpy(&strh, img + eh.e_shoff + (size_t)sh.sh_link * sizeof strh, sizeof strh);
        if (strh.sh_offset > n || strh.sh_size > n - strh.sh_offset) return -1;
        const char *strtab = (const char *)img + strh.sh_offset;
        for (size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
            Elf64_Sym s;
            memcpy(&s, img + sh.sh_offset + k * sizeof s, sizeof s);
            if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || ELF64_ST_BIND(s.st_info) == STB_LOCAL) continue;
            if (s.st_name >= strh.sh_size || !memchr(strtab + s.st_name, 0, strh.sh_size - s.st_name)) continue;
            symfind_consider(f, strtab + s.st_name);
        }
    }
    return 0;
}

static void ptx_scan(const char *ptx, struct symfind *f)
{
    for (const char *p = strstr(ptx, ".entry"); p; p = strstr(p + 6, ".entry")) {
        const char *q = p + 6;
        if (*q != ' ' && *q != '\t') continue;
        while (*q == ' ' || *q == '\t') q++;
        char name[512];
        size_t k = 0;
        while (k + 1 < sizeof name && (q[k] == '_' || q[k] == '$' || (q[k] >= '0' && q[k] <= '9') ||
                                       (q[k] >= 'a' && q[k] <= 'z') || (q[k] >= 'A' && q[k] <= 'Z')))
            k++;
        if (!k) continue;
        memcpy(name, q, k);
        name[k] = 0;
        symfind_consider(f, name);
    }
}

/* Resolves the entry's symbol in an image; KG_WS_OK with sym filled, or KG_WS_ENTRY. */
int kg_cuda_find_entry(const char *img, size_t n, int is_cubin, const char *entry, char *sym, size_t symn,
                       struct kg_reply *rep)
{
    struct symfind f;
    symfind_init(&f, entry);
    if (is_cubin) {
        if (elf_scan((const unsigned char *)img, n, &f)) {
            kg_cuda_say(rep, "the compiled kernel is not an ELF64 cubin: cannot look for entry '%s'", entry);
            return KG_WS_ENTRY;
        }
    } else {
        ptx_scan(img, &f);
    }
    if (f.nhit == 1) {
        snprintf(sym, symn, "%s", f.hit[0]);
        return KG_WS_OK;
    }
    if (f.nhit == 0) {
        kg_cuda_say(
            rep,
            "entry '%s' not found after compile (is it a __global__ function? static, misspelt, or in a namespace?)",
            entry);
        return KG_WS_ENTRY;
    }
    kg_cuda_say(rep,
                "entry '%s' is ambiguous: %d kernels match (%s, %s%s%s%s): name one instance in the contract's entry",
                entry, f.nhit, f.hit[0], f.hit[1], f.nhit > 2 ? ", " : "", f.nhit > 2 ? f.hit[2] : "",
                f.nhit > 3 ? ", ..." : "");
    return KG_WS_ENTRY;
}

/* Columns requested by tcgen05.alloc: the largest immediate operand; -1 when the PTX has no
 * tcgen05.alloc (or no PTX was available); -2 when it has one whose column count is a
 * register, not an immediate. */
int kg_cuda_tmem_cols(const char *ptx)
{
    if (!ptx) return -1;
    int best = -1;
    for (const char *p = strstr(ptx, "tcgen05.alloc"); p; p = strstr(p + 13, "tcgen05.alloc")) {
        const char *semi = strchr(p, ';');
        if (!semi) break;
        const char *comma = NULL;
        for (const char *q = p; q < semi; q++)
            if (*q == ',') comma = q;
        if (!comma) continue;
        const char *v = comma + 1;
        while (v < semi && (*v == ' ' || *v == '\t')) v++;
        char *end;
        long cols = strtol(v, &end, 0);
        while (end < semi && (*end == ' ' || *end == '\t')) end++;
        if (end == semi && end != v && cols >= 0 && cols <= INT_MAX) {
            if (cols > best) best = (int)cols;
        } else if (best == -1) {
            best = -2;
        }
    }
    return best;
}
