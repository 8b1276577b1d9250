// Shared helpers for warpath's CUDA kernels. Included by every kernels-cuda/*.cu file.
// Also compiles as plain C++ under kernels-cuda/sim/cuda_sim.hpp (WARPATH_CUDA_SIM), which runs
// the kernels on the CPU for logic tests: use the macros below instead of `extern __shared__`
// and inline `asm`, which the simulator cannot see through.
#pragma once

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// Grid-stride loop over [0, n) with a 64-bit index, matching Gpu::grid_stride on the host.
#define WARPATH_GRID_STRIDE(i, n)                                                   \
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (u64)(n);          \
         i += (u64)gridDim.x * blockDim.x)

#ifndef WARPATH_CUDA_SIM
// `type* name` pointing at the launch's dynamic shared memory (16-byte aligned).
#define WARPATH_DYNAMIC_SHARED(type, name)                                          \
    extern __shared__ __align__(16) unsigned char warpath_dyn_smem_##name[];         \
    type* name = reinterpret_cast<type*>(warpath_dyn_smem_##name)

// Bit i set for every lane i below the calling lane.
__device__ __forceinline__ unsigned warpath_lanemask_lt() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}
#endif

// `WARPATH_SHARE_WITH_HOST(NAME, ...)` on a line of its own (no semicolon) lists `#define`d
// constants that Rust needs too: `cargo xtask kernels` writes them, with the values the
// compiler computes, into the generated launchers (`kernels-cuda/ptx/<module>.rs`), so each is
// declared once, here in CUDA.
#define WARPATH_SHARE_WITH_HOST(...)
// Kernel names: every `extern "C" __global__` entry is `<module>_<operation>[_<type>...]`, where
// <module> is the .cu file's stem and each <type> one of u8 u16 u32 u64 i8 i16 i32 i64 f32 f64
// (or w32 / w64 where only the width matters), one per element type that varies:
// primitives_scan_u32, runtime_iota_u32, pde_fhn_step_f64, primitives_onesweep_pairs_w64_w32.
// Entries that differ only in their element types (a family: primitives_scan_u32 ... _f64) get
// one generic Rust launcher, `primitives_scan::<T, U>`, that picks the entry from the types of
// its arguments; so declare a signature's pointers with the element types the host uses
// (i64* for a signed sum even if the kernel adds in u64).
