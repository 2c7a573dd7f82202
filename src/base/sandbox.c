/* sandbox.c: closing the judge's memory and dropping a worker's privileges before untrusted
 * code runs (see sandbox.h). No library: two prctl calls and the capset system call, whose
 * structures come from <linux/capability.h>. */
#include "base/sandbox.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void kg_sandbox_private(void)
{
    const char *v = getenv("KGATE_SANDBOX");
    if (v && !strcmp(v, "0")) return;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int kg_sandbox_drop(char *why, size_t n)
{
    const char *v = getenv("KGATE_SANDBOX");
    if (v && !strcmp(v, "0")) return 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
        snprintf(why, n, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
        return -1;
    }
    /* the bounding set: needs CAP_SETPCAP, which only a privileged worker has (and must lose) */
    for (int cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno == EINVAL) break;
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &hdr, data)) {
        snprintf(why, n, "capset (dropping every capability): %s", strerror(errno));
        return -1;
    }
    return 0;
}
