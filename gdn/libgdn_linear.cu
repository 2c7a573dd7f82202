/* libgdn_linear.cu: libgdn's kernels and launchers for linear attention, fp32 and bf16 inputs (one member
 * per file so that the members compile in parallel; see gdn/libgdn_impl.cuh). */
#include "libgdn_impl.cuh"

GDN_LIB_MEMBER(GLR_LINEAR, linear)
