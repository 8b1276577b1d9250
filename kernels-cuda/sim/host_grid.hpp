// The host side of the crates' cuda.rs as the CPU-simulation harnesses replay it: grid-stride
// launches sized as gpu_runtime::grid_stride_config sizes them, and fresh u32 buffers as
// alloc_uninit leaves them. Include after the kernels (.cu), which define u32 and u64.
#pragma once
#include "sim/cuda_sim.hpp"

#include <algorithm>
#include <bit>
#include <vector>

static const unsigned GARBAGE = 0xCDCDCDCDu;
static unsigned g_sms = 132;  // multiprocessors in Gpu::grid_stride (cap = 16 blocks per SM)

// gpu_runtime::grid_stride_config(n, block, sms, 16): ceil(n / block) blocks, capped, >= 1.
static unsigned grid_blocks(u64 n, unsigned block) {
    const u64 wanted = std::max<u64>(1, (n + block - 1) / block);
    return (unsigned)std::min<u64>(wanted, (u64)g_sms * 16);
}

// launch!(gpu, name, grid(gpu, n), ...): grid-stride over n with `block` (256) threads per block.
template <class F>
static void launch_grid(u64 n, F body, unsigned block = 256) {
    warpath_sim::launch(grid_blocks(n, block), block, 0, body);
}

// alloc_u32 (alloc_uninit of max(n, 1)): garbage, so a read of an unwritten entry shows.
static std::vector<u32> alloc_u32(u64 n) { return std::vector<u32>(std::max<u64>(n, 1), GARBAGE); }

// rounds_for(n): usize::BITS - n.leading_zeros() + 1.
static unsigned rounds_for(u64 n) { return (unsigned)std::bit_width(n) + 1; }
