/* tc_emu.h: a host emulation of what the chunk-parallel kernels (gdn/chunk_fwd_tc.cuh) use from
 * CUDA -- thread and block indices, static and dynamic shared memory, __syncthreads, cp.async,
 * bf16 and its conversions, and the warp-collective mma.sync.m16n8k16 bf16 and ldmatrix.x4 -- so that the
 * kernels run as plain C++17 on a machine without a GPU (gdn/tc_emu_check.cc). Included by
 * chunk_fwd_tc.cuh only when TC_HOST_EMU is defined; never part of a GPU build.
 *
 * Model. A CTA is blockDim.x cooperative fibers (ucontext) on one OS thread, run one at a time
 * in a fixed order (ascending thread index, or descending with tc_emu_reverse): a fiber runs until
 * it waits at a barrier, so a read of shared memory that another thread has not yet written (a
 * missing __syncthreads) reads the NaN poison or a stale value, and the two orders disagree; an
 * asynchronous copy (cp.async) lands at its thread's wait for it in the one order and at once in
 * the other, so that a missing wait, or a copy into memory still being read, shows the same way.
 * Shared memory, static (__shared__ variables, made thread_local: the executable's TLS block, so
 * the check program must have no thread_local of its own) and dynamic, is filled with 0xff bytes
 * (NaN in fp32 and bf16) before every CTA. A __syncthreads that is not reached by every thread
 * of the CTA at the same source line is an error (on the GPU it hangs or is undefined), and so is
 * a warp-collective operation (mma.sync, ldmatrix; for the next kernels also __shfl*_sync and
 * __syncwarp, full mask only) that the 32 lanes of a warp do not all reach as their same n-th
 * one. CTAs run one after another, so nothing here models concurrency between CTAs, timing,
 * registers or shared-memory capacity beyond the 227 KB dynamic limit.
 *
 * mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (tc_emu_mma_bf16): each lane writes its a
 * and b fragments into a per-warp exchange buffer (two, alternating, so one barrier per mma),
 * waits for the other 31, then computes its own four d elements from the fragments of the lanes
 * that hold the needed rows of A and columns of B, with the layout of the PTX ISA ("Matrix
 * Fragments for mma.m16n8k16 with floating point type"; g = lane / 4, t = lane % 4):
 *   A (16 x 16, row): reg r of lane (g, t) holds A[g + 8 (r & 1)][2t + 8 (r >> 1) + {0, 1}]
 *   B (16 x 8, col):  reg r of lane (g, t) holds B[2t + 8 r + {0, 1}][g]
 *   C, D (16 x 8):    d[e] of lane (g, t) is D[g + 8 (e >> 1)][2t + (e & 1)]
 * with the lower-indexed element in the low 16 bits of a register. The hardware's order of the
 * internal sum is unspecified; here d = c, then d += a_k b_k for k = 0 .. 15 in order, each
 * product exact (bf16 x bf16 fits fp32) and each sum rounded to nearest fp32: sequential fp32
 * accumulation, which is no more accurate than any order the hardware may use.
 *
 * Arithmetic otherwise is the host's IEEE fp32 (build with -ffp-contract=off: the emulation does
 * not model nvcc's own FMA contraction) and glibc's expf (correctly rounded here; the device's
 * expf is within 2 ulp). Build with -fno-strict-aliasing: the kernels move bf16 data through
 * uint32_t and uint4 pointers, as CUDA code does. */
#ifndef GDN_TC_EMU_H
#define GDN_TC_EMU_H

#include <link.h>
#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <math.h> /* expf, fmaf, as the device library has them */

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define TC_EMU_ASAN 1
#endif

#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
/* one copy per kernel instantiation, shared by the CTA's fibers since they run on one OS thread;
 * thread_local puts every __shared__ variable in the executable's TLS block, which is poisoned as
 * a whole before every CTA (a named section would do, but g++ ignores section attributes on the
 * statics of template functions) */
#define __shared__      static thread_local
#define __syncthreads() tc_emu_syncthreads(__LINE__)

// ---- CUDA's vector types and indices ----------------------------------------------------------

struct tc_emu_uint3 {
    unsigned x, y, z;
};

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c)
    {
    }
};

/* alignas as on the device, so that UBSan (-fsanitize=alignment) flags a misaligned vector move */
struct alignas(16) uint4 {
    unsigned x, y, z, w;
};

struct alignas(8) float2 {
    float x, y;
};

inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w)
{
    return uint4{x, y, z, w};
}

inline float2 make_float2(float x, float y)
{
    return float2{x, y};
}

inline int min(int a, int b)
{
    return a < b ? a : b;
}

inline tc_emu_uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

// ---- bfloat16 ------------------------------------------------------------------------------------

/* The top 16 bits of an fp32. */
struct __nv_bfloat16 {
    uint16_t x;
};

struct alignas(4) __nv_bfloat162 {
    __nv_bfloat16 x, y; /* x in the low half, as on the device */
};

inline float __bfloat162float(__nv_bfloat16 h)
{
    const uint32_t u = (uint32_t)h.x << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Round to nearest, ties to even, subnormals kept, overflow to +-Inf (cvt.rn.bf16.f32); a NaN
 * becomes the canonical 0x7fff, as cuda_bf16.hpp's host path makes it. */
inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    __nv_bfloat16 h;
    if ((u & 0x7fffffffu) > 0x7f800000u)
        h.x = 0x7fff;
    else
        h.x = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    return h;
}

inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi)
{
    return __nv_bfloat162{__float2bfloat16_rn(lo), __float2bfloat16_rn(hi)};
}

// ---- the CTA: fibers, barriers ------------------------------------------------------------------

#define TC_EMU_MAX_THREADS 1024
#define TC_EMU_STACK       (256 * 1024)
#define TC_EMU_DYN_MAX     232448 /* sm_90's opt-in dynamic shared memory per block (227 KB) */

enum tc_emu_state { TC_EMU_RUN, TC_EMU_AT_BAR, TC_EMU_AT_WARP, TC_EMU_DONE };

/* The per-warp exchange of one warp-collective operation (an mma, a shuffle, __syncwarp): every
 * lane's registers, its count of collective operations and which operation it is at. */
struct tc_emu_xchg {
    uint32_t a[32][4], b[32][2];
    unsigned seq[32];
    int op[32];
};

enum { TC_EMU_OP_MMA = 1, TC_EMU_OP_SHFL, TC_EMU_OP_SYNCWARP, TC_EMU_OP_LDSM };

/* One cp.async of a thread not yet landed: bytes from src to dst, in its commit group `group`. */
struct tc_emu_copy {
    void *dst;
    const void *src;
    unsigned bytes, group;
};

struct tc_emu_fiber {
    ucontext_t ctx;
    int state;
    void *fake; /* ASan's fake-stack handle while switched out */
};

struct tc_emu_world {
    ucontext_t sched;
    std::vector<tc_emu_fiber> f;
    std::vector<std::unique_ptr<char[]>> stacks;
    unsigned n, cur;
    unsigned bar_count, warp_count[TC_EMU_MAX_THREADS / 32];
    int bar_line;
    std::function<void()> body;
    std::vector<unsigned char> dyn; /* dynamic shared memory, exactly the launch's size */
    tc_emu_xchg xchg[TC_EMU_MAX_THREADS / 32][2];
    unsigned mma_seq[TC_EMU_MAX_THREADS];
    std::vector<tc_emu_copy> cp[TC_EMU_MAX_THREADS]; /* each thread's copies in flight, in issue order */
    unsigned cp_groups[TC_EMU_MAX_THREADS];          /* each thread's commit groups closed so far */
    const void *sched_stack;
    size_t sched_stack_size;
};

inline tc_emu_world tc_emu;
inline bool tc_emu_reverse; /* run the fibers of a CTA in descending thread order */

[[noreturn]] inline void tc_emu_fail(const char *what)
{
    fprintf(stderr, "tc_emu: CTA (%u, %u, %u) thread %u: %s\n", blockIdx.x, blockIdx.y, blockIdx.z, tc_emu.cur, what);
    abort();
}

/* Back to the scheduler until this fiber is runnable again. */
inline void tc_emu_yield()
{
    tc_emu_fiber &me = tc_emu.f[tc_emu.cur];
#ifdef TC_EMU_ASAN
    __sanitizer_start_switch_fiber(&me.fake, tc_emu.sched_stack, tc_emu.sched_stack_size);
#endif
    swapcontext(&me.ctx, &tc_emu.sched);
#ifdef TC_EMU_ASAN
    __sanitizer_finish_switch_fiber(me.fake, &tc_emu.sched_stack, &tc_emu.sched_stack_size);
#endif
}

inline void tc_emu_syncthreads(int line)
{
    tc_emu_world &W = tc_emu;
    if (W.bar_count == 0)
        W.bar_line = line;
    else if (line != W.bar_line) {
        char msg[128];
        snprintf(msg, sizeof msg, "__syncthreads at line %d while others wait at line %d", line, W.bar_line);
        tc_emu_fail(msg);
    }
    W.f[W.cur].state = TC_EMU_AT_BAR;
    if (++W.bar_count == W.n) {
        for (auto &x : W.f) x.state = TC_EMU_RUN;
        W.bar_count = 0;
    }
    tc_emu_yield();
}

/* The 32 lanes of the calling thread's warp. */
inline void tc_emu_warp_barrier()
{
    tc_emu_world &W = tc_emu;
    const unsigned w = W.cur / 32;
    W.f[W.cur].state = TC_EMU_AT_WARP;
    if (++W.warp_count[w] == 32) {
        for (unsigned l = 0; l < 32; l++) W.f[w * 32 + l].state = TC_EMU_RUN;
        W.warp_count[w] = 0;
    }
    tc_emu_yield();
}

inline void tc_emu_entry()
{
#ifdef TC_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &tc_emu.sched_stack, &tc_emu.sched_stack_size);
#endif
    tc_emu.body();
    tc_emu.f[tc_emu.cur].state = TC_EMU_DONE;
#ifdef TC_EMU_ASAN
    __sanitizer_start_switch_fiber(nullptr, tc_emu.sched_stack, tc_emu.sched_stack_size);
#endif
    /* returns to tc_emu.sched through uc_link */
}

/* The calling thread's instance of the executable's TLS block: every __shared__ variable. */
inline int tc_emu_find_tls(struct dl_phdr_info *info, size_t size, void *out)
{
    if (size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof info->dlpi_tls_data) return 1;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS) {
            ((unsigned char **)out)[0] = (unsigned char *)info->dlpi_tls_data;
            ((unsigned char **)out)[1] = (unsigned char *)info->dlpi_tls_data + info->dlpi_phdr[i].p_memsz;
        }
    return 1; /* the first object is the executable */
}

inline unsigned char *tc_emu_dyn_smem()
{
    return tc_emu.dyn.data();
}

/* Thread t, about to start body() (getcontext returns twice in principle: kept apart from loops). */
__attribute__((noinline)) inline void tc_emu_fiber_init(unsigned t)
{
    tc_emu_fiber &F = tc_emu.f[t];
    getcontext(&F.ctx);
    F.ctx.uc_stack.ss_sp = tc_emu.stacks[t].get();
    F.ctx.uc_stack.ss_size = TC_EMU_STACK;
    F.ctx.uc_link = &tc_emu.sched;
    makecontext(&F.ctx, tc_emu_entry, 0);
    F.state = TC_EMU_RUN;
}

/* Runs body() as the CTAs of grid, one CTA at a time, each as block.x fibers (block.y = block.z
 * = 1), with dyn_smem bytes of dynamic shared memory. */
template <class Body> void tc_emu_launch(dim3 grid, dim3 block, size_t dyn_smem, Body body)
{
    tc_emu_world &W = tc_emu;
    const unsigned n = block.x;
    if (n < 1 || n > TC_EMU_MAX_THREADS || block.y != 1 || block.z != 1 || dyn_smem > TC_EMU_DYN_MAX) {
        fprintf(stderr, "tc_emu: launch of block (%u, %u, %u) with %zu bytes of dynamic shared memory: unsupported\n",
                block.x, block.y, block.z, dyn_smem);
        abort();
    }
    unsigned char *tls[2] = {nullptr, nullptr};
    dl_iterate_phdr(tc_emu_find_tls, tls);
    while (W.stacks.size() < n) W.stacks.emplace_back(new char[TC_EMU_STACK]);
    W.n = n;
    W.f.assign(n, tc_emu_fiber{});
    W.body = body;
    W.dyn.assign(dyn_smem, 0xff);
    blockDim = block, gridDim = grid;
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                blockIdx = {x, y, z};
                if (tls[0]) memset(tls[0], 0xff, (size_t)(tls[1] - tls[0]));
                std::fill(W.dyn.begin(), W.dyn.end(), 0xff);
                W.bar_count = 0;
                memset(W.warp_count, 0, sizeof W.warp_count);
                memset(W.mma_seq, 0, sizeof W.mma_seq);
                for (unsigned t = 0; t < n; t++) W.cp[t].clear(); /* a previous CTA's copies never land here */
                memset(W.cp_groups, 0, sizeof W.cp_groups);
                for (unsigned t = 0; t < n; t++) tc_emu_fiber_init(t);
                for (;;) {
                    bool ran = false;
                    for (unsigned k = 0; k < n; k++) {
                        const unsigned t = tc_emu_reverse ? n - 1 - k : k;
                        if (W.f[t].state != TC_EMU_RUN) continue;
                        ran = true;
                        W.cur = t;
                        threadIdx = {t, 0, 0};
#ifdef TC_EMU_ASAN
                        void *fake = nullptr;
                        __sanitizer_start_switch_fiber(&fake, W.stacks[t].get(), TC_EMU_STACK);
#endif
                        swapcontext(&W.sched, &W.f[t].ctx);
#ifdef TC_EMU_ASAN
                        __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
                    }
                    if (ran) continue;
                    unsigned done = 0;
                    for (auto &F : W.f) done += F.state == TC_EMU_DONE;
                    if (done == n) break;
                    char msg[160];
                    snprintf(msg, sizeof msg,
                             "deadlock: %u of %u threads exited, %u wait at __syncthreads (line %d), the rest at an "
                             "mma whose warp never completed",
                             done, n, W.bar_count, W.bar_line);
                    tc_emu_fail(msg);
                }
            }
}

// ---- cp.async -------------------------------------------------------------------------------------

/* An asynchronous copy (gdn/chunk_fwd_tc.cuh's tc_cp4, tc_cp16) may land on the GPU at any time
 * between its issue and the wait that covers it; here it lands at one end or the other, by the
 * order the CTA's threads run in. Ascending: at the wait, so that a read of the destination
 * before the wait (and the __syncthreads that publishes it) sees the poison or the previous
 * contents, the source read then too. Descending (tc_emu_reverse): at once, so that a copy
 * issued into a buffer other threads still read overwrites it under them. Either mistake makes
 * the two runs of a case disagree. Copies still in flight when a thread exits are dropped. */
inline void tc_emu_cp_async(void *dst, const void *src, unsigned bytes)
{
    tc_emu_world &W = tc_emu;
    if (tc_emu_reverse)
        memcpy(dst, src, bytes);
    else
        W.cp[W.cur].push_back(tc_emu_copy{dst, src, bytes, W.cp_groups[W.cur]});
}

/* cp.async.commit_group: the copies issued since the last commit become one group. */
inline void tc_emu_cp_commit()
{
    tc_emu.cp_groups[tc_emu.cur]++;
}

/* Lands, in issue order, this thread's copies of the groups older than its `keep` most recent
 * committed ones (cp.async.wait_group keep); all: every copy, committed or not (wait_all). */
inline void tc_emu_cp_wait(unsigned keep, bool all)
{
    tc_emu_world &W = tc_emu;
    std::vector<tc_emu_copy> &q = W.cp[W.cur], rest;
    const unsigned groups = W.cp_groups[W.cur];
    for (const tc_emu_copy &c : q)
        if (all || c.group + keep < groups)
            memcpy(c.dst, c.src, c.bytes);
        else
            rest.push_back(c);
    q.swap(rest);
}

// ---- mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 ---------------------------------------

inline float tc_emu_half(uint32_t r, int hi)
{
    __nv_bfloat16 h;
    h.x = (uint16_t)(hi ? r >> 16 : r & 0xffffu);
    return __bfloat162float(h);
}

/* Publishes this lane's a[4], b[2] for warp-collective operation op, waits for the warp, and
 * returns the exchange, which stays valid until this lane's next collective operation (two
 * buffers alternate: a lane can only refill one after the whole warp has passed the barrier of
 * the operation in between). Every lane must reach the same n-th operation, of the same kind,
 * with the full mask. */
inline tc_emu_xchg &tc_emu_warp_xchg(int op, unsigned mask, const uint32_t a[4], const uint32_t b[2])
{
    tc_emu_world &W = tc_emu;
    const unsigned tid = W.cur, w = tid / 32, lane = tid % 32;
    if (W.n % 32 != 0) tc_emu_fail("a warp-collective operation in a CTA that is not whole warps");
    if (mask != 0xffffffffu) tc_emu_fail("a warp-collective operation with a partial mask (not emulated)");
    const unsigned seq = W.mma_seq[tid]++;
    tc_emu_xchg &X = W.xchg[w][seq & 1];
    memcpy(X.a[lane], a, sizeof X.a[lane]);
    memcpy(X.b[lane], b, sizeof X.b[lane]);
    X.seq[lane] = seq, X.op[lane] = op;
    tc_emu_warp_barrier();
    for (unsigned l = 0; l < 32; l++)
        if (X.seq[l] != seq || X.op[l] != op)
            tc_emu_fail("a warp-collective operation (mma.sync, shuffle, __syncwarp) not reached by every lane of "
                        "the warp as the same call");
    return X;
}

/* d += A B for the warp of the calling thread; see the header for the layout and the order. */
inline void tc_emu_mma_bf16(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    const uint32_t b[2] = {b0, b1};
    const tc_emu_xchg &X = tc_emu_warp_xchg(TC_EMU_OP_MMA, 0xffffffffu, a, b);
    const unsigned lane = tc_emu.cur % 32, g = lane / 4, t = lane % 4;
    for (int e = 0; e < 4; e++) {
        const unsigned row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
        float acc = d[e];
        for (unsigned k = 0; k < 16; k++) {
            /* A[row][k]: lane (row % 8, (k % 8) / 2), register (row >= 8) + 2 (k >= 8), half k & 1 */
            const uint32_t ar = X.a[(row % 8) * 4 + (k % 8) / 2][(row >= 8) + 2 * (k >= 8)];
            /* B[k][col]: lane (col, (k % 8) / 2), register k >= 8, half k & 1 */
            const uint32_t br = X.b[col * 4 + (k % 8) / 2][k >= 8];
            acc = acc + tc_emu_half(ar, k & 1) * tc_emu_half(br, k & 1);
        }
        d[e] = acc;
    }
}

// ---- ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 --------------------------------------------

/* r[j] of lane (g, t) = matrix j's elements [g][2t], [g][2t + 1] (trans: [2t][g], [2t + 1][g]),
 * the lower-indexed in the low half, where lane 8j + i gives the address of row i of matrix j
 * (eight b16, 16-byte aligned), as the PTX ISA lays out ldmatrix. Each lane reads its own row
 * when it reaches the instruction (into the exchange) and takes its elements from the rows of
 * the others. */
inline void tc_emu_ldmatrix_x4(uint32_t r[4], const void *row, bool trans)
{
    if ((uintptr_t)row % 16 != 0) tc_emu_fail("ldmatrix: a row address not 16-byte aligned");
    uint32_t a[4], b[2] = {0, 0};
    memcpy(a, row, 16);
    const tc_emu_xchg &X = tc_emu_warp_xchg(TC_EMU_OP_LDSM, 0xffffffffu, a, b);
    const unsigned lane = tc_emu.cur % 32, g = lane / 4, t = lane % 4;
    for (unsigned j = 0; j < 4; j++) {
        r[j] = 0;
        for (unsigned h = 0; h < 2; h++) {
            const unsigned i = trans ? 2 * t + h : g, c = trans ? g : 2 * t + h; /* row, column */
            const uint32_t x = (X.a[8 * j + i][c / 2] >> (16 * (c % 2))) & 0xffffu;
            r[j] |= x << (16 * h);
        }
    }
}

// ---- warp shuffles and __syncwarp (full mask only) -----------------------------------------------

/* var of lane src(lane) for a 4-byte T; src returns the lane itself where CUDA keeps var. */
template <class T, class Src> T tc_emu_shfl(unsigned mask, T var, Src src)
{
    static_assert(sizeof(T) == 4, "the emulated shuffles move 4-byte values");
    uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    memcpy(&a[0], &var, 4);
    const tc_emu_xchg &X = tc_emu_warp_xchg(TC_EMU_OP_SHFL, mask, a, b);
    T r;
    memcpy(&r, &X.a[src((int)(tc_emu.cur % 32))][0], 4);
    return r;
}

template <class T> T __shfl_sync(unsigned mask, T var, int src, int width = 32)
{
    return tc_emu_shfl(mask, var, [&](int l) { return (l & ~(width - 1)) + (src & (width - 1)); });
}

template <class T> T __shfl_xor_sync(unsigned mask, T var, int m, int width = 32)
{
    /* a lane of a later group of width lanes is out of reach: own value */
    return tc_emu_shfl(mask, var, [&](int l) { return (l ^ m) / width > l / width ? l : l ^ m; });
}

template <class T> T __shfl_down_sync(unsigned mask, T var, unsigned d, int width = 32)
{
    return tc_emu_shfl(mask, var, [&](int l) { return l % width + (int)d < width ? l + (int)d : l; });
}

template <class T> T __shfl_up_sync(unsigned mask, T var, unsigned d, int width = 32)
{
    return tc_emu_shfl(mask, var, [&](int l) { return l % width >= (int)d ? l - (int)d : l; });
}

inline void __syncwarp(unsigned mask = 0xffffffffu)
{
    const uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    tc_emu_warp_xchg(TC_EMU_OP_SYNCWARP, mask, a, b);
}

#endif
