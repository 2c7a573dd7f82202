#ifndef KGATE_PRELUDE_H
#define KGATE_PRELUDE_H
/* pre-included by kgate: what nvcc's implicit cuda_runtime.h brings, plus f16/bf16 */
#include <math.h>
#include <limits.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif
