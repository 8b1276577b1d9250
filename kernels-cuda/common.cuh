// Shared helpers for warpath's CUDA kernels. Included by every kernels-cuda/*.cu file.
#pragma once

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// Grid-stride loop over [0, n) with a 64-bit index, matching Gpu::grid_stride on the host.
#define WARPATH_GRID_STRIDE(i, n)                                                   \
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (u64)(n);          \
         i += (u64)gridDim.x * blockDim.x)
