/* glr_host.h: what every host variant of the GLR built-ins (testdata/builtin/glr/*.c) includes: the
 * family's helpers (gdn/oracle.c) and its chunked algorithm in fp32 (gdn/chunk_host.c: chunks of
 * 64 steps, the states entering each chunk, then each chunk's outputs or, backward, the reverse
 * state scan chunk by chunk), which the CUDA kernels gdn/<member>_<fwd|bwd>.cu implement stage for
 * stage. embed.awk inlines this file and the two below into each built-in when kgate is built, so
 * that `kgate builtin:NAME` shows the whole kernel in one file; hidden visibility binds the
 * kernel's calls to its own copies, not to kgate's. */
#ifndef KGATE_GLR_HOST_H
#define KGATE_GLR_HOST_H

#include <math.h> /* before the pragma: libc's functions are not the kernel's */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC visibility push(hidden)
#include "../../../gdn/oracle.c"
#include "../../../gdn/chunk_host.c"
#pragma GCC visibility pop

#endif
