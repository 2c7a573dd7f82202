/* libgdn_gdn.cu: libgdn's kernels and launchers for GDN (gated delta net), fp32 and bf16 inputs (one member
 * per file so that the members compile in parallel; see gdn/libgdn_impl.cuh). */
#include "libgdn_impl.cuh"

GDN_LIB_MEMBER(GLR_GDN, gdn)
