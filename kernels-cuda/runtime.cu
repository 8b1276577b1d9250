// gpu-runtime's self-test kernels: they prove that PTX loads and launches work.
#include "common.cuh"
#include "block/fill.cuh"

extern "C" __global__ void runtime_iota_u32(u32* out, u64 n) { warpath::grid_iota(out, n); }

extern "C" __global__ void runtime_axpy_f32(float a, const float* __restrict__ x, float* __restrict__ y, u64 n) {
    WARPATH_GRID_STRIDE(i, n) { y[i] = __fadd_rn(__fmul_rn(a, x[i]), y[i]); }  // unfused: bit-identical to the CPU
}
