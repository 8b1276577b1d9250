// cuda_sim.hpp: runs warpath's CUDA C kernels on the CPU, for checking their logic on machines
// without a GPU (CI, laptops). It says nothing about speed, and passing here is not a GPU
// result: the memory model, warp scheduling and timing differ. What it does catch: wrong
// indexing, off-by-one tiles, missing or misplaced barriers that leave wrong values, broken
// reductions and scans, and tie-breaking mistakes.
//
// Model:
// - A launch runs its blocks one after another, in increasing blockIdx order. A block's threads
//   are fibers on one OS thread: each runs until it reaches a barrier or returns, then
//   the next one runs. Runs are deterministic. Cross-block protocols that only wait on
//   lower-numbered blocks (decoupled look-back, Onesweep) complete; waiting on a higher-numbered
//   block, or a barrier that some threads never reach, is reported as a deadlock naming the
//   threads and where they wait.
// - Threads run in increasing threadIdx order between two barriers, or in decreasing order when
//   WARPATH_SIM_ORDER=reverse. A missing barrier makes some thread read a value its neighbour
//   has not written yet in one of the two orders: run every harness both ways
//   (gpu_runtime::testing::run_cuda_sim does).
// - __syncthreads() waits for every thread of the block that has not returned; __syncwarp() and
//   the warp intrinsics (__shfl_*_sync, __ballot_sync, __any_sync, __all_sync,
//   __match_any_sync) exchange through a per-warp slot array between two warp barriers, so all
//   live lanes of the warp must take part (full-warp masks), as in warpath's kernels.
// - __shared__ becomes `static`: one instance shared by the block's threads; blocks run one at a
//   time so they do not collide (and a block sees the previous block's values: uninitialised
//   static shared memory goes unnoticed). Dynamic shared memory comes from
//   WARPATH_DYNAMIC_SHARED, is filled with 0xCD at each launch, so reads of unwritten shared
//   memory show up as garbage, and ends at a guard page, so accesses past the launch's size
//   fault.
// - Atomics are std::atomic_ref operations; __threadfence() is a fence.
// - Only 1-D blocks and grids (warpath's kernels use x only).
//
// - Fiber stacks come from mmap with a guard page below each, so a runaway recursion faults
//   instead of corrupting the heap.
//
// Use: #include "sim/cuda_sim.hpp" before the kernel file (compile with g++ -std=c++20
// -I kernels-cuda), then warpath_sim::launch(grid, block, smem_bytes, [&] { k(args); }), which
// exits with code 3 on a deadlock or an invalid launch (the harnesses' contract). The simulated
// CUDA driver (sim/driver.cpp) calls warpath_sim::try_launch instead, which returns the failure
// as a message, and may abandon a launch from a signal handler (a fault or its watchdog) by
// setting g_abort and jumping out (siglongjmp), then calling abandon_launch.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <math.h>  // the C float functions (sqrtf, expf, fmaf, ...) in the global namespace
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include <string>

#include <sys/mman.h>
#include <ucontext.h>

#define WARPATH_CUDA_SIM 1

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
using uint3 = dim3;

inline dim3 threadIdx;  // the running fiber's
inline dim3 blockIdx;
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

enum class Wait { Running, Block, Warp, Done };

constexpr size_t STACK_BYTES = 256 * 1024;
constexpr size_t GUARD_BYTES = 64 * 1024;  // at least one page on every Linux page size

// A fiber's stack: an mmap'd region whose lowest GUARD_BYTES are inaccessible.
struct FiberStack {
    char* base = nullptr;  // start of the mapping (the guard)
    FiberStack() {
        void* p = mmap(nullptr, GUARD_BYTES + STACK_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            std::fprintf(stderr, "cuda_sim: cannot map a fiber stack\n");
            std::abort();
        }
        base = static_cast<char*>(p);
        mprotect(base, GUARD_BYTES, PROT_NONE);
    }
    FiberStack(const FiberStack&) = delete;
    FiberStack& operator=(const FiberStack&) = delete;
    ~FiberStack() { munmap(base, GUARD_BYTES + STACK_BYTES); }
    char* stack() const { return base + GUARD_BYTES; }
    bool contains(uintptr_t a) const {
        return a >= reinterpret_cast<uintptr_t>(base) && a < reinterpret_cast<uintptr_t>(base) + GUARD_BYTES + STACK_BYTES;
    }
};

// Switching between fibers. On x86-64 a few instructions save the callee-saved registers, the
// SSE and x87 control words and the stack pointer, and load the other context's: no system
// call, unlike swapcontext (which also saves the signal mask, about 0.8 us a switch). Elsewhere
// ucontext does the same job more slowly.
#if defined(__x86_64__)
#define WARPATH_SIM_FAST_SWITCH 1
extern "C" void warpath_sim_switch(void** save_sp, void* load_sp);
asm(R"(
    .text
    .p2align 4
    .weak warpath_sim_switch
    .hidden warpath_sim_switch
    .type warpath_sim_switch, @function
warpath_sim_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size warpath_sim_switch, .-warpath_sim_switch
)");
struct Context {
    void* sp = nullptr;
};
#else
struct Context {
    ucontext_t uc;
};
#endif

struct Fiber {
    Context ctx;
    std::unique_ptr<FiberStack> stack;
    Wait wait = Wait::Running;
    unsigned tid = 0;
};

inline Context g_scheduler;
inline std::vector<Fiber> g_fibers;
inline Fiber* g_current = nullptr;
inline const std::function<void()>* g_body = nullptr;
// The launch's dynamic shared memory: it ends at an inaccessible guard page, so a kernel reading
// or writing past the size it was launched with faults instead of touching other memory.
struct DynamicShared {
    unsigned char* base = nullptr;  // mapping: [capacity bytes][guard]
    size_t capacity = 0;
    unsigned char* data = nullptr;  // the launch's bytes, ending at the guard
};
inline DynamicShared g_dyn_smem;

// Points g_dyn_smem.data at `bytes` (rounded up to 16) bytes of 0xCD ending at the guard page.
inline void set_dynamic_shared(size_t bytes) {
    const size_t page = 64 * 1024;
    const size_t rounded = (std::max<size_t>(bytes, 16) + 15) / 16 * 16;
    if (rounded > g_dyn_smem.capacity) {
        if (g_dyn_smem.base) munmap(g_dyn_smem.base, g_dyn_smem.capacity + page);
        const size_t cap = (rounded + page - 1) / page * page;
        void* p = mmap(nullptr, cap + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            std::fprintf(stderr, "cuda_sim: cannot map %zu bytes of shared memory\n", cap);
            std::abort();
        }
        g_dyn_smem.base = static_cast<unsigned char*>(p);
        g_dyn_smem.capacity = cap;
        mprotect(g_dyn_smem.base + cap, page, PROT_NONE);
    }
    g_dyn_smem.data = g_dyn_smem.base + g_dyn_smem.capacity - rounded;
    std::memset(g_dyn_smem.data, 0xCD, rounded);
}
inline uint64_t g_slot[32][32];  // [warp][lane] exchange slots of the warp intrinsics
// Set (to a non-zero reason) by the driver's signal handler to abandon the running launch.
inline volatile int g_abort = 0;

// Whether `addr` (e.g. a stack pointer) lies in one of the fibers' stacks or their guards.
inline bool on_fiber_stack(uintptr_t addr) {
    for (const auto& f : g_fibers)
        if (f.stack && f.stack->contains(addr)) return true;
    return false;
}

inline unsigned lane() { return threadIdx.x % 32; }
inline unsigned warp_id() { return threadIdx.x / 32; }
inline unsigned warp_lanes() { return std::min(32u, blockDim.x - warp_id() * 32); }
// The lanes of the calling warp that have not returned.
inline unsigned live_lanes() {
    unsigned m = 0;
    for (unsigned i = 0; i < warp_lanes(); ++i)
        if (g_fibers[warp_id() * 32 + i].wait != Wait::Done) m |= 1u << i;
    return m;
}

// Saves the running context into `from` and resumes `to`.
inline void switch_to(Context& from, Context& to) {
#if WARPATH_SIM_FAST_SWITCH
    warpath_sim_switch(&from.sp, to.sp);
#else
    swapcontext(&from.uc, &to.uc);
#endif
}

inline void block_until(Wait w) {
    g_current->wait = w;
    switch_to(g_current->ctx, g_scheduler);
}

inline void fiber_main() {
    (*g_body)();
    g_current->wait = Wait::Done;
#if WARPATH_SIM_FAST_SWITCH
    switch_to(g_current->ctx, g_scheduler);  // never resumed
    __builtin_unreachable();
#endif  // with ucontext, uc_link returns to the scheduler
}

// Prepares `f` to start fiber_main on its own stack at its first switch.
inline void start_fiber(Fiber& f) {
#if WARPATH_SIM_FAST_SWITCH
    // The frame warpath_sim_switch pops: control words, six registers, then "returns" into
    // fiber_main with the stack aligned as after a call (rsp + 8 a multiple of 16).
    auto* top = reinterpret_cast<uint64_t*>(
        (reinterpret_cast<uintptr_t>(f.stack->stack()) + STACK_BYTES) & ~uintptr_t(15));
    uint64_t* sp = top;
    *--sp = 0;                                              // fiber_main's return address: none
    *--sp = reinterpret_cast<uint64_t>(&fiber_main);        // popped by `ret`
    for (int i = 0; i < 6; ++i) *--sp = 0;                  // rbp rbx r12 r13 r14 r15
    *--sp = 0x1F80ull | (0x037Full << 32);                  // MXCSR, x87 control word: defaults
    f.ctx.sp = sp;
#else
    getcontext(&f.ctx.uc);
    f.ctx.uc.uc_stack.ss_sp = f.stack->stack();
    f.ctx.uc.uc_stack.ss_size = STACK_BYTES;
    f.ctx.uc.uc_link = &g_scheduler.uc;
    makecontext(&f.ctx.uc, fiber_main, 0);
#endif
}

inline const char* wait_name(Wait w) {
    return w == Wait::Block ? "__syncthreads" : w == Wait::Warp ? "a warp barrier" : w == Wait::Done ? "returned" : "running";
}

// Runs one block to completion. Returns "" on success, else why the block could not finish
// (a deadlock naming the waiting threads, or an abort requested through g_abort).
inline std::string run_block(unsigned threads, bool reverse) {
    for (unsigned t = 0; t < threads; ++t) {
        Fiber& f = g_fibers[t];
        f.tid = t;
        f.wait = Wait::Running;
        start_fiber(f);
    }
    for (;;) {
        if (g_abort) return "aborted";
        for (unsigned i = 0; i < threads; ++i) {
            if (g_abort) break;
            Fiber& f = g_fibers[reverse ? threads - 1 - i : i];
            if (f.wait != Wait::Running) continue;
            g_current = &f;
            threadIdx = dim3(f.tid);
            switch_to(g_scheduler, f.ctx);
        }
        g_current = nullptr;
        bool done = true, released = false;
        for (unsigned w = 0; w * 32 < threads; ++w) {
            unsigned live = 0, at_warp = 0;
            for (unsigned t = w * 32; t < std::min(threads, w * 32 + 32); ++t) {
                live += g_fibers[t].wait != Wait::Done;
                at_warp += g_fibers[t].wait == Wait::Warp;
            }
            if (live) done = false;
            if (live && at_warp == live) {
                for (unsigned t = w * 32; t < std::min(threads, w * 32 + 32); ++t)
                    if (g_fibers[t].wait == Wait::Warp) g_fibers[t].wait = Wait::Running;
                released = true;
            }
        }
        if (g_abort) return "aborted";
        if (done) return "";
        if (released) continue;
        bool all_block = true;
        for (unsigned t = 0; t < threads; ++t)
            if (g_fibers[t].wait != Wait::Done && g_fibers[t].wait != Wait::Block) all_block = false;
        if (all_block) {
            for (unsigned t = 0; t < threads; ++t)
                if (g_fibers[t].wait == Wait::Block) g_fibers[t].wait = Wait::Running;
            continue;
        }
        std::string why = "deadlock in block " + std::to_string(blockIdx.x) + ":";
        for (unsigned t = 0; t < threads; ++t)
            if (t < 8 || t + 8 >= threads || g_fibers[t].wait != g_fibers[0].wait)
                why += " t" + std::to_string(t) + ":" + wait_name(g_fibers[t].wait);
        return why;
    }
}

// Every lane publishes `v`, then reads lane `src`'s value (its own when src is out of range).
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
template <class T>
inline T exchange(T v, int src) {
    uint64_t* slot = g_slot[warp_id()];
    slot[lane()] = to_bits(v);
    block_until(Wait::Warp);
    const uint64_t r = (src >= 0 && static_cast<unsigned>(src) < warp_lanes()) ? slot[src] : slot[lane()];
    block_until(Wait::Warp);
    return from_bits<T>(r);
}

// Whether threads take turns in decreasing order (WARPATH_SIM_ORDER=reverse).
inline bool reverse_order() {
    static const bool reverse = [] {
        const char* o = std::getenv("WARPATH_SIM_ORDER");
        return o && std::strcmp(o, "reverse") == 0;
    }();
    return reverse;
}

// Makes sure `block` fibers with stacks exist (the driver calls it before arming its watchdog,
// so that a signal handler never sees g_fibers being reallocated).
inline void ensure_fibers(unsigned block) {
    if (g_fibers.size() < block) {
        g_fibers.resize(block);
        for (auto& f : g_fibers)
            if (!f.stack) f.stack = std::make_unique<FiberStack>();
    }
}

// Runs `body` as a kernel launch of grid x block threads with `smem` bytes of dynamic shared
// memory. Returns "" on success, else why it failed (invalid configuration, a deadlock, or an
// abort through g_abort); blocks after a failed one do not run.
inline std::string try_launch(unsigned grid, unsigned block, size_t smem, const std::function<void()>& body) {
    if (grid == 0 || block == 0 || block > 1024)
        return "invalid launch <<<" + std::to_string(grid) + ", " + std::to_string(block) + ">>>";
    ensure_fibers(block);
    gridDim = dim3(grid);
    blockDim = dim3(block);
    set_dynamic_shared(smem);
    g_body = &body;
    std::string why;
    for (unsigned b = 0; b < grid && why.empty(); ++b) {
        blockIdx = dim3(b);
        why = run_block(block, reverse_order());
    }
    g_body = nullptr;
    g_current = nullptr;
    return why;
}

// Forgets a launch that a signal handler jumped out of (the fibers are restarted by the next).
inline void abandon_launch() {
    g_body = nullptr;
    g_current = nullptr;
}

// try_launch for the harnesses: a failure prints the reason and exits with code 3.
inline void launch(unsigned grid, unsigned block, size_t smem, const std::function<void()>& body) {
    const std::string why = try_launch(grid, block, smem, body);
    if (!why.empty()) {
        std::fprintf(stderr, "cuda_sim: %s\n", why.c_str());
        std::exit(3);
    }
}

}  // namespace warpath_sim

// Dynamic shared memory (`extern __shared__` on the GPU).
#define WARPATH_DYNAMIC_SHARED(type, name) \
    type* name = reinterpret_cast<type*>(warpath_sim::g_dyn_smem.data)

// Barriers and fences.
inline void __syncthreads() { warpath_sim::block_until(warpath_sim::Wait::Block); }
inline void __syncwarp(unsigned = 0xffffffffu) { warpath_sim::block_until(warpath_sim::Wait::Warp); }
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
inline unsigned __ballot_sync(unsigned mask, int pred) {
    uint64_t* slot = warpath_sim::g_slot[warpath_sim::warp_id()];
    slot[warpath_sim::lane()] = pred ? 1 : 0;
    warpath_sim::block_until(warpath_sim::Wait::Warp);
    // Only lanes that have not returned vote (an exited lane's slot holds a stale value).
    const unsigned live = warpath_sim::live_lanes();
    unsigned m = 0;
    for (unsigned i = 0; i < warpath_sim::warp_lanes(); ++i) m |= (slot[i] ? 1u : 0u) << i;
    m &= live & mask;
    warpath_sim::block_until(warpath_sim::Wait::Warp);
    return m;
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline unsigned __activemask() { return warpath_sim::live_lanes(); }
inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) == __activemask(); }
template <class T>
inline unsigned __match_any_sync(unsigned, T v) {
    uint64_t* slot = warpath_sim::g_slot[warpath_sim::warp_id()];
    const uint64_t mine = warpath_sim::to_bits(v);
    slot[warpath_sim::lane()] = mine;
    warpath_sim::block_until(warpath_sim::Wait::Warp);
    unsigned m = 0;
    for (unsigned i = 0; i < warpath_sim::warp_lanes(); ++i) m |= (slot[i] == mine ? 1u : 0u) << i;
    m &= warpath_sim::live_lanes();  // exited lanes' slots hold stale values
    warpath_sim::block_until(warpath_sim::Wait::Warp);
    return m;
}
inline unsigned warpath_lanemask_lt() { return (1u << warpath_sim::lane()) - 1; }

// Atomics. SIM_ATOMIC(name, op): `name(p, v)` applies the std::atomic_ref operation `op` to `*p`
// with `v` converted to `*p`'s type and returns the old value.
#define SIM_ATOMIC(name, op)                                                                       \
    template <class T, class U>                                                                    \
    inline T name(T* p, U v) { return std::atomic_ref<T>(*p).op(static_cast<T>(v)); }
SIM_ATOMIC(atomicAdd, fetch_add)
SIM_ATOMIC(atomicSub, fetch_sub)
SIM_ATOMIC(atomicExch, exchange)
SIM_ATOMIC(atomicOr, fetch_or)
SIM_ATOMIC(atomicAnd, fetch_and)
SIM_ATOMIC(atomicXor, fetch_xor)
#undef SIM_ATOMIC
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
inline auto min(A a, B b) -> std::decay_t<decltype(a < b ? a : b)> { return b < a ? b : a; }
template <class A, class B>
inline auto max(A a, B b) -> std::decay_t<decltype(a < b ? a : b)> { return a < b ? b : a; }

// ---------------------------------------------------------------------------------------------
// Tensor-core instructions (PTX mma.sync, sm_80+), which kernels reach through these functions
// (their device versions wrap the inline PTX): a functional model of the instruction on the
// fragment layouts the PTX ISA specifies, so a kernel that loads or reads fragments in the
// wrong places gives wrong results here too.
//
// - warpath_mma_m8n8k4_f64: mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64. Lane l (g = l / 4,
//   i = l % 4) holds A(g, i), B(i, g), and C/D(g, 2i), (g, 2i + 1). Arithmetic: one correctly
//   rounded fused multiply-add per k, in order (IEEE FP64, as the hardware's DMMA).
// - warpath_mma_m16n8k8_tf32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32. Lane l holds
//   A(g, i), A(g + 8, i), A(g, i + 4), A(g + 8, i + 4) (as TF32 bit patterns), B(i, g),
//   B(i + 4, g), and C/D(g, 2i), (g, 2i + 1), (g + 8, 2i), (g + 8, 2i + 1). Arithmetic: the
//   operands' TF32 parts (the low 13 mantissa bits ignored, as the hardware does) multiplied
//   exactly, each product added to the float accumulator rounded toward zero -- the error model
//   measured for NVIDIA tensor cores (Fasi et al., 2021), never more accurate than the GPU, so
//   error bounds checked here are not flattered.
// - warpath_cvt_rna_tf32: cvt.rna.tf32.f32, to the nearest TF32 value, ties away from zero.
// Both mma functions are warp collectives: every lane publishes its fragments and waits at a
// warp barrier (all 32 lanes must call, as on the GPU), then computes its own elements of
// D = A B + C from everyone's.
namespace warpath_sim {
// The fragments of the warps' mma calls, by value, double-buffered: a lane's call N reads
// buffer N % 2, and no lane can reach call N + 2 (and write that buffer again) before every
// lane of its warp has reached call N + 1, so one warp barrier per call suffices.
constexpr int MMA_WORDS = 4;
inline uint64_t g_mma_a[2][32][32][MMA_WORDS];  // [parity][warp][lane][register]
inline uint64_t g_mma_b[2][32][32][MMA_WORDS];
inline unsigned g_mma_calls[32][32];  // [warp][lane]: calls so far (every lane of a warp alike)

// Publishes this lane's A and B registers and waits for the whole warp; returns the parity of
// the buffers this call reads.
template <class A, class B>
inline unsigned mma_publish(const A* a, int na, const B* b, int nb) {
    const unsigned w = warp_id(), l = lane(), parity = g_mma_calls[w][l]++ & 1u;
    for (int r = 0; r < na; ++r) g_mma_a[parity][w][l][r] = to_bits(a[r]);
    for (int r = 0; r < nb; ++r) g_mma_b[parity][w][l][r] = to_bits(b[r]);
    block_until(Wait::Warp);
    if (warp_lanes() != 32 || live_lanes() != 0xffffffffu) {
        std::fprintf(stderr, "cuda_sim: mma.sync needs all 32 lanes of the warp\n");
        __builtin_trap();
    }
    return parity;
}

inline float tf32_value(uint64_t bits) {
    return from_bits<float>(static_cast<uint32_t>(bits) & 0xffffe000u);
}

// a + b rounded toward zero (through the double sum).
inline float add_toward_zero(float a, float b) {
    const double s = static_cast<double>(a) + static_cast<double>(b);
    const float f = static_cast<float>(s);
    // One ulp toward zero where rounding to nearest went away from it (branch-free: half the
    // sums take it).
    const uint32_t away = std::fabs(static_cast<double>(f)) > std::fabs(s) ? 1u : 0u;
    return from_bits<float>(static_cast<uint32_t>(to_bits(f)) - away);
}
}  // namespace warpath_sim

inline void warpath_mma_m8n8k4_f64(double (&d)[2], double a, double b, const double (&c)[2]) {
    const unsigned p = warpath_sim::mma_publish(&a, 1, &b, 1);
    const unsigned w = warpath_sim::warp_id(), l = warpath_sim::lane(), g = l / 4, i = l % 4;
    for (unsigned v = 0; v < 2; ++v) {
        const unsigned col = 2 * i + v;
        double acc = c[v];
        for (unsigned k = 0; k < 4; ++k)
            acc = std::fma(warpath_sim::from_bits<double>(warpath_sim::g_mma_a[p][w][g * 4 + k][0]),
                           warpath_sim::from_bits<double>(warpath_sim::g_mma_b[p][w][col * 4 + k][0]), acc);
        d[v] = acc;
    }
}

inline void warpath_mma_m16n8k8_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2], const float (&c)[4]) {
    const unsigned p = warpath_sim::mma_publish(a, 4, b, 2);
    const unsigned w = warpath_sim::warp_id(), l = warpath_sim::lane(), g = l / 4, i = l % 4;
    // A rows g and g + 8, B columns 2i and 2i + 1, all 8 k.
    float x[2][8], y[2][8];
    for (unsigned k = 0; k < 8; ++k) {
        for (unsigned h = 0; h < 2; ++h) {
            x[h][k] = warpath_sim::tf32_value(warpath_sim::g_mma_a[p][w][g * 4 + k % 4][h + (k >= 4 ? 2 : 0)]);
            y[h][k] = warpath_sim::tf32_value(warpath_sim::g_mma_b[p][w][(2 * i + h) * 4 + k % 4][k >= 4 ? 1 : 0]);
        }
    }
    float acc[4] = {c[0], c[1], c[2], c[3]};
    for (unsigned k = 0; k < 8; ++k)
        for (unsigned v = 0; v < 4; ++v)  // D(g + 8 (v / 2), 2i + v % 2); x * y is exact (11 x 11 bits)
            acc[v] = warpath_sim::add_toward_zero(acc[v], x[v / 2][k] * y[v % 2][k]);
    for (unsigned v = 0; v < 4; ++v) d[v] = acc[v];
}

inline unsigned warpath_cvt_rna_tf32(float v) {
    unsigned u;
    std::memcpy(&u, &v, 4);
    if (std::isfinite(v)) u = (u + 0x1000u) & 0xffffe000u;  // to nearest, ties away (magnitude bits)
    return u;
}
