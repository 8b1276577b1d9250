// Warp and block reductions, for any type and associative operator (block/ops.cuh: Sum, Min,
// Max, or a functor over a struct of partial results). Every lane of the warp (every thread of
// the block) must call them; blockDim.x a multiple of 32, at most 1024.
#pragma once
#include "ops.cuh"

namespace warpath {

// Tree reduction over each segment of `width` lanes (a power of two <= 32) by shuffle-down: the
// result is valid in the segment's first lane only.
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op, int width = 32) {
#pragma unroll
    for (int o = width / 2; o > 0; o >>= 1) v = op(v, shfl<Shfl::Down>(v, (unsigned)o, width));
    return v;
}

// Butterfly reduction over each segment of `width` lanes by shuffle-xor: every lane of the
// segment gets the result.
template <typename T, typename Op>
__device__ __forceinline__ T warp_allreduce(T v, Op op, int width = 32) {
#pragma unroll
    for (int o = width / 2; o > 0; o >>= 1) v = op(v, shfl<Shfl::Xor>(v, (unsigned)o, width));
    return v;
}

// Block reduction: warps reduce by shuffle, then thread 0 folds the warp results in warp order
// (a fixed order, so float sums are deterministic on a device). BLOCK = blockDim.x when the
// kernel fixes it (the fold is unrolled), 0 to read blockDim.x. `warp_storage` holds
// blockDim.x / 32 entries of shared memory. The result is valid in thread 0 only; the caller
// must __syncthreads() before reusing `warp_storage`.
template <int BLOCK = 0, typename T, typename Op>
__device__ __forceinline__ T block_reduce(T v, T* warp_storage, Op op) {
    const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    v = warp_reduce(v, op);
    if (lane == 0) warp_storage[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        if (BLOCK > 0) {
#pragma unroll
            for (int w = 1; w < BLOCK / 32; ++w) v = op(v, warp_storage[w]);
        } else {
            for (u32 w = 1; w < (blockDim.x >> 5); ++w) v = op(v, warp_storage[w]);
        }
    }
    return v;
}

// Adds the number of active lanes whose `pred` holds to *count, with one atomic per warp. Any
// subset of the warp may call it (it votes over __activemask()).
__device__ __forceinline__ void warp_count_add(bool pred, u32* count) {
    const unsigned active = __activemask();
    const unsigned votes = __ballot_sync(active, pred);
    const unsigned lane = threadIdx.x & 31u;
    if (lane == (unsigned)(__ffs(active) - 1) && votes != 0) atomicAdd(count, (u32)__popc(votes));
}

}  // namespace warpath
