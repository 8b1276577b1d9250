// cuda_sim.hpp: runs warpath's CUDA C kernels on the CPU, for checking their logic on machines
// without a GPU (CI, laptops). It says nothing about speed, and passing here is not a GPU
// result: the memory model, warp scheduling and timing differ. What it does catch: wrong
// indexing, off-by-one tiles, missing or misplaced barriers that leave wrong values, broken
// reductions and scans, and tie-breaking mistakes.
//
// Model:
// - A launch runs its blocks one after another, in increasing blockIdx order, each with
//   blockDim.x real std::threads (reused across blocks). Cross-block protocols that only wait on
//   lower-numbered blocks (decoupled look-back, Onesweep) therefore complete; protocols that wait
//   on higher-numbered blocks would deadlock, which the harness's time limit reports.
// - __syncthreads() is a std::barrier over the block's threads; __syncwarp() and the warp
//   intrinsics (__shfl_*_sync, __ballot_sync, __any_sync, __all_sync, __match_any_sync) exchange
//   through a per-warp slot array between two warp barriers. All lanes of the warp must take part
//   (full-warp masks), as in warpath's kernels.
// - __shared__ becomes `static`: one instance shared by the block's threads; blocks run one at a
//   time so they do not collide. Dynamic shared memory comes from WARPATH_DYNAMIC_SHARED.
// - Atomics are std::atomic_ref operations; __threadfence() is a sequentially consistent fence.
// - Only 1-D blocks and grids (warpath's kernels use x only).
//
// Use: #include "sim/cuda_sim.hpp" before the kernel file (compile with g++ -std=c++20
// -pthread -I kernels-cuda), then warpath_sim::launch(grid, block, smem_bytes, [&] { k(args); }).
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <math.h>  // the C float functions (sqrtf, expf, fmaf, ...) in the global namespace
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#define WARPATH_CUDA_SIM 1

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
using uint3 = dim3;

inline thread_local dim3 threadIdx;
inline thread_local dim3 blockIdx;
inline dim3 blockDim;
inline dim3 gridDim;
constexpr int warpSize = 32;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static
#define __constant__ static
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

namespace warpath_sim {

struct Warp {
    explicit Warp(std::ptrdiff_t lanes) : bar(lanes), lanes(static_cast<unsigned>(lanes)) {}
    std::barrier<> bar;
    unsigned lanes;
    uint64_t slot[32] = {};
};

struct Block {
    explicit Block(unsigned threads) : bar(threads) {
        for (unsigned w = 0; w * 32 < threads; ++w) {
            warps.emplace_back(std::make_unique<Warp>(std::min(32u, threads - w * 32)));
        }
    }
    std::barrier<> bar;
    std::vector<std::unique_ptr<Warp>> warps;
};

inline Block* g_block = nullptr;
inline std::vector<unsigned char> g_dyn_smem;

inline unsigned lane() { return threadIdx.x % 32; }
inline Warp& warp() { return *g_block->warps[threadIdx.x / 32]; }

template <class T>
inline uint64_t to_bits(T v) {
    static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T>
inline T from_bits(uint64_t b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}

// Every lane publishes `v`, then reads lane `src`'s value (its own when src is out of range).
template <class T>
inline T exchange(T v, int src) {
    Warp& w = warp();
    w.slot[lane()] = to_bits(v);
    w.bar.arrive_and_wait();
    const uint64_t r = (src >= 0 && static_cast<unsigned>(src) < w.lanes) ? w.slot[src] : w.slot[lane()];
    w.bar.arrive_and_wait();
    return from_bits<T>(r);
}

// Runs `body` as a kernel launch of grid x block threads with `smem` bytes of dynamic shared memory.
inline void launch(unsigned grid, unsigned block, size_t smem, const std::function<void()>& body) {
    if (grid == 0 || block == 0 || block > 1024) {
        std::fprintf(stderr, "cuda_sim: invalid launch <<<%u, %u>>>\n", grid, block);
        std::abort();
    }
    gridDim = dim3(grid);
    blockDim = dim3(block);
    g_dyn_smem.assign(smem + 16, 0xCD);  // poisoned: kernels must not read unwritten shared memory
    Block b(block);
    g_block = &b;
    std::vector<std::thread> threads;
    threads.reserve(block);
    for (unsigned t = 0; t < block; ++t) {
        threads.emplace_back([t, grid, &body, &b] {
            threadIdx = dim3(t);
            for (unsigned blk = 0; blk < grid; ++blk) {
                blockIdx = dim3(blk);
                body();
                b.bar.arrive_and_wait();  // the next block starts when this one has finished
            }
        });
    }
    for (auto& th : threads) th.join();
    g_block = nullptr;
}

}  // namespace warpath_sim

// Dynamic shared memory (`extern __shared__` on the GPU).
#define WARPATH_DYNAMIC_SHARED(type, name) \
    type* name = reinterpret_cast<type*>(warpath_sim::g_dyn_smem.data())

// Barriers and fences.
inline void __syncthreads() { warpath_sim::g_block->bar.arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { warpath_sim::warp().bar.arrive_and_wait(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// Warp intrinsics (full warps only).
template <class T>
inline T __shfl_sync(unsigned, T v, int src, int width = 32) {
    const int base = static_cast<int>(warpath_sim::lane()) & ~(width - 1);
    return warpath_sim::exchange(v, base + (src & (width - 1)));
}
template <class T>
inline T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
    const int l = static_cast<int>(warpath_sim::lane());
    const int base = l & ~(width - 1);
    const int src = l - static_cast<int>(delta);
    return warpath_sim::exchange(v, src >= base ? src : l);
}
template <class T>
inline T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
    const int l = static_cast<int>(warpath_sim::lane());
    const int end = (l & ~(width - 1)) + width;
    const int src = l + static_cast<int>(delta);
    return warpath_sim::exchange(v, src < end ? src : l);
}
template <class T>
inline T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
    const int l = static_cast<int>(warpath_sim::lane());
    const int src = l ^ mask;
    return warpath_sim::exchange(v, (src & ~(width - 1)) == (l & ~(width - 1)) ? src : l);
}
inline unsigned __ballot_sync(unsigned, int pred) {
    warpath_sim::Warp& w = warpath_sim::warp();
    w.slot[warpath_sim::lane()] = pred ? 1 : 0;
    w.bar.arrive_and_wait();
    unsigned m = 0;
    for (unsigned i = 0; i < w.lanes; ++i) m |= (w.slot[i] ? 1u : 0u) << i;
    w.bar.arrive_and_wait();
    return m;
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) {
    return __ballot_sync(mask, pred) == (warpath_sim::warp().lanes == 32 ? 0xffffffffu : ((1u << warpath_sim::warp().lanes) - 1));
}
template <class T>
inline unsigned __match_any_sync(unsigned, T v) {
    warpath_sim::Warp& w = warpath_sim::warp();
    const uint64_t mine = warpath_sim::to_bits(v);
    w.slot[warpath_sim::lane()] = mine;
    w.bar.arrive_and_wait();
    unsigned m = 0;
    for (unsigned i = 0; i < w.lanes; ++i) m |= (w.slot[i] == mine ? 1u : 0u) << i;
    w.bar.arrive_and_wait();
    return m;
}
inline unsigned __activemask() {
    const unsigned n = warpath_sim::warp().lanes;
    return n == 32 ? 0xffffffffu : ((1u << n) - 1);
}
inline unsigned warpath_lanemask_lt() { return (1u << warpath_sim::lane()) - 1; }

// Atomics.
template <class T, class U>
inline T atomicAdd(T* p, U v) { return std::atomic_ref<T>(*p).fetch_add(static_cast<T>(v)); }
template <class T, class U>
inline T atomicSub(T* p, U v) { return std::atomic_ref<T>(*p).fetch_sub(static_cast<T>(v)); }
template <class T, class U>
inline T atomicExch(T* p, U v) { return std::atomic_ref<T>(*p).exchange(static_cast<T>(v)); }
template <class T, class U>
inline T atomicOr(T* p, U v) { return std::atomic_ref<T>(*p).fetch_or(static_cast<T>(v)); }
template <class T, class U>
inline T atomicAnd(T* p, U v) { return std::atomic_ref<T>(*p).fetch_and(static_cast<T>(v)); }
template <class T, class U>
inline T atomicXor(T* p, U v) { return std::atomic_ref<T>(*p).fetch_xor(static_cast<T>(v)); }
template <class T, class U, class V>
inline T atomicCAS(T* p, U cmp, V val) {
    T expected = static_cast<T>(cmp);
    std::atomic_ref<T>(*p).compare_exchange_strong(expected, static_cast<T>(val));
    return expected;  // the old value either way
}
template <class T, class U>
inline T atomicMin(T* p, U v) {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (static_cast<T>(v) < old && !a.compare_exchange_weak(old, static_cast<T>(v))) {}
    return old;
}
template <class T, class U>
inline T atomicMax(T* p, U v) {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (static_cast<T>(v) > old && !a.compare_exchange_weak(old, static_cast<T>(v))) {}
    return old;
}

// Bit intrinsics and reinterpretations.
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
inline int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline int __ffs(unsigned x) { return __builtin_ffs(static_cast<int>(x)); }
inline int __ffsll(unsigned long long x) { return __builtin_ffsll(static_cast<long long>(x)); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline int __float_as_int(float f) { int u; std::memcpy(&u, &f, 4); return u; }
inline float __int_as_float(int u) { float f; std::memcpy(&f, &u, 4); return f; }
inline long long __double_as_longlong(double d) { long long u; std::memcpy(&u, &d, 8); return u; }
inline double __longlong_as_double(long long u) { double d; std::memcpy(&d, &u, 8); return d; }
template <class T>
inline T __ldg(const T* p) { return *p; }

// Arithmetic with explicit rounding: the CPU rounds to nearest by default and never contracts
// these (compile without -ffast-math; -ffp-contract=off is passed by the harness).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

// CUDA's overloaded min/max accept mixed integer types.
template <class A, class B>
inline auto min(A a, B b) -> decltype(a < b ? a : b) { return b < a ? b : a; }
template <class A, class B>
inline auto max(A a, B b) -> decltype(a < b ? a : b) { return a < b ? b : a; }
