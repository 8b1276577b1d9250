// Warp and block prefix scans, for any type and associative operator (block/ops.cuh), with
// ITEMS consecutive items per thread (the "blocked" arrangement: thread t owns items
// [t * ITEMS, (t + 1) * ITEMS) of the block's tile). Every thread of the block must call them;
// BLOCK = blockDim.x, a multiple of 32, at most 1024.
#pragma once
#include "ops.cuh"

namespace warpath {

// Inclusive scan over the first LANES lanes of the warp (Kogge-Stone, shuffle-up). Lanes at or
// past LANES get partial results; the caller ignores them.
template <int LANES, typename T, typename Op>
__device__ __forceinline__ T warp_inclusive_scan(T x, Op op) {
    const u32 lane = threadIdx.x & 31u;
#pragma unroll
    for (int o = 1; o < LANES; o <<= 1) {
        const T y = shfl<Shfl::Up>(x, (unsigned)o);
        if (lane >= (u32)o) x = op(y, x);
    }
    return x;
}

// Exclusive scan of one value per thread over the block: returns op over the values of threads
// 0..threadIdx.x-1 (`identity` in thread 0) and sets *total to op over the whole block.
// `warp_storage` holds BLOCK / 32 entries of shared memory. Contains __syncthreads(), the last
// one after every read of `warp_storage`, so the caller may reuse it at once.
template <int BLOCK, typename T, typename Op>
__device__ __forceinline__ T block_exclusive_scan(T v, T identity, T* warp_storage, T* total, Op op) {
    constexpr int WARPS = BLOCK / 32;
    const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const T x = warp_inclusive_scan<32>(v, op);
    T before = shfl<Shfl::Up>(x, 1u);
    if (lane == 0) before = identity;
    if (lane == 31) warp_storage[warp] = x;
    __syncthreads();
    if (warp == 0) {
        T w = lane < (u32)WARPS ? warp_storage[lane] : identity;
        w = warp_inclusive_scan<WARPS>(w, op);
        if (lane < (u32)WARPS) warp_storage[lane] = w;  // inclusive warp totals
    }
    __syncthreads();
    if (warp > 0) before = op(warp_storage[warp - 1], before);
    *total = warp_storage[WARPS - 1];
    __syncthreads();
    return before;
}

// op over a thread's items, starting from `init`.
template <int ITEMS, typename T, typename Op>
__device__ __forceinline__ T thread_reduce(const T (&items)[ITEMS], T init, Op op) {
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) init = op(init, items[r]);
    return init;
}

// out[r] = the inclusive (or exclusive) scan of a thread's items seeded with `prefix`; `out`
// may be the items themselves or shared memory.
template <int ITEMS, typename T, typename Op>
__device__ __forceinline__ void thread_scan(const T (&items)[ITEMS], T prefix, bool inclusive, Op op, T* out) {
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const T x = items[r];
        if (inclusive) {
            prefix = op(prefix, x);
            out[r] = prefix;
        } else {
            out[r] = prefix;
            prefix = op(prefix, x);
        }
    }
}

// Inclusive scan of a block's tile held ITEMS per thread (blocked): items become their
// inclusive scan over the tile, *total the tile's aggregate. `init` is op's identity.
template <int BLOCK, int ITEMS, typename T, typename Op>
__device__ __forceinline__ void block_inclusive_scan(T (&items)[ITEMS], T init, T* warp_storage, T* total,
                                                     Op op) {
    const T prefix = block_exclusive_scan<BLOCK>(thread_reduce(items, init, op), init, warp_storage, total, op);
    thread_scan(items, prefix, true, op, items);
}

}  // namespace warpath
