// Fill and iota: grid-wide (one launch covers [0, n)) and block-wide (the threads of one block
// cover [0, n), e.g. to clear shared memory; the caller synchronises afterwards).
#pragma once
#include "../common.cuh"

namespace warpath {

// out[i] = value for i < n, grid-stride.
template <typename T>
__device__ __forceinline__ void grid_fill(T* out, u64 n, T value) {
    WARPATH_GRID_STRIDE(i, n) { out[i] = value; }
}

// out[i] = i (truncated to T) for i < n, grid-stride.
template <typename T>
__device__ __forceinline__ void grid_iota(T* out, u64 n) {
    WARPATH_GRID_STRIDE(i, n) { out[i] = (T)i; }
}

// out[i] = value for i < n, strided over the threads of the calling block.
template <typename T, typename N>
__device__ __forceinline__ void block_fill(T* out, N n, T value) {
    for (N i = threadIdx.x; i < n; i += blockDim.x) out[i] = value;
}

}  // namespace warpath
