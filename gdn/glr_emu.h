/* glr_emu.h: a host emulation of the few CUDA built-ins the GLR kernel bodies use, so that
 * glr_fwd_body / glr_bwd_body run as plain C++17 on a machine without a GPU (gdn/glr_emu_check.cc):
 * each CTA is GLR_THREADS real threads sharing one NaN-poisoned "shared memory" buffer, and
 * __syncthreads() is a real barrier, so a missing barrier shows up as a race (ThreadSanitizer)
 * and a read of never-written shared memory shows up as a NaN in the outputs.
 * Included by glr_common.cuh only when GLR_HOST_EMU is defined; never part of a GPU build. */
#ifndef GDN_GLR_EMU_H
#define GDN_GLR_EMU_H

#include <pthread.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

#include <math.h> /* expf, as the device library has it */

struct glr_emu_dim3 {
    unsigned x, y, z;
};

inline thread_local glr_emu_dim3 threadIdx, blockIdx;
inline glr_emu_dim3 blockDim;
inline float *glr_emu_smem_ptr;
inline pthread_barrier_t glr_emu_barrier;

inline float *glr_emu_smem()
{
    return glr_emu_smem_ptr;
}

inline void __syncthreads()
{
    pthread_barrier_wait(&glr_emu_barrier);
}

[[noreturn]] inline void __trap()
{
    abort();
}

/* bfloat16: the top 16 bits of an fp32, rounded to nearest even (NaN kept quiet). */
struct __nv_bfloat16 {
    uint16_t x;
};

inline float __bfloat162float(__nv_bfloat16 h)
{
    uint32_t u = (uint32_t)h.x << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    __nv_bfloat16 h;
    if ((u & 0x7fffffffu) > 0x7f800000u)
        h.x = (uint16_t)((u >> 16) | 0x40);
    else
        h.x = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    return h;
}

/* Runs body() as a grid of CTAs, one CTA at a time, each as blockDim.x threads with a fresh
 * shared-memory buffer of smem_bytes filled with NaN. */
template <class Body> void glr_emu_launch(glr_emu_dim3 grid, unsigned threads, size_t smem_bytes, Body body)
{
    std::vector<float> smem(smem_bytes / sizeof(float) + 1, std::nanf(""));
    blockDim = {threads, 1, 1};
    for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
            for (unsigned x = 0; x < grid.x; ++x) {
                std::fill(smem.begin(), smem.end(), std::nanf(""));
                glr_emu_smem_ptr = smem.data();
                pthread_barrier_init(&glr_emu_barrier, nullptr, threads);
                std::vector<std::thread> th;
                for (unsigned t = 0; t < threads; ++t)
                    th.emplace_back([&, t] {
                        threadIdx = {t, 0, 0};
                        blockIdx = {x, y, z};
                        body();
                    });
                for (auto &t : th) t.join();
                pthread_barrier_destroy(&glr_emu_barrier);
            }
}

#endif
