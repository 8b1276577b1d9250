// gpu-runtime's kernels: the self tests that prove PTX loads and launches work, and the
// iota and fill shared by every crate.
#include "common.cuh"
#include "block/fill.cuh"

// The one iota and fill every crate uses (through gpu_runtime::iota and gpu_runtime::fill).
extern "C" __global__ void runtime_iota_u32(u32* out, u64 n) { warpath::grid_iota(out, n); }
extern "C" __global__ void runtime_fill_u32(u32* out, u32 value, u64 n) { warpath::grid_fill(out, n, value); }

extern "C" __global__ void runtime_axpy_f32(float a, const float* __restrict__ x, float* __restrict__ y, u64 n) {
    WARPATH_GRID_STRIDE(i, n) { y[i] = __fadd_rn(__fmul_rn(a, x[i]), y[i]); }  // unfused: bit-identical to the CPU
}
