// Kernels that misbehave on purpose, compiled only into the simulated CUDA driver, so that its
// own tests (crates/gpu-runtime/tests/sim_driver.rs) can check how it reports kernel faults.
// They are not in kernels-cuda/*.cu: no GPU ever runs them. The tests load them from a small
// hand-written PTX module that declares the same entries.
#include "sim/cuda_sim.hpp"
#include "sim/driver_registry.hpp"
#include "common.cuh"

// Writes out[i] = i for i < n with no bounds check: n beyond the buffer overruns it.
extern "C" __global__ void sim_selftest_fill(u32* out, u64 n) {
    WARPATH_GRID_STRIDE(i, n) { out[i] = (u32)i; }
}

// out[i] = in[i] + 1 for i < n: reads beyond `in` when n exceeds it.
extern "C" __global__ void sim_selftest_copy(const u32* in, u32* out, u64 n) {
    WARPATH_GRID_STRIDE(i, n) { out[i] = in[i] + 1; }
}

// Lane 0 waits at a warp barrier while the others wait at the block barrier: a deadlock.
extern "C" __global__ void sim_selftest_deadlock(u32* out) {
    if (threadIdx.x == 0) __syncwarp();
    else __syncthreads();
    out[threadIdx.x] = 1;
}

// Spins until *flag becomes non-zero, which never happens: the watchdog ends it.
extern "C" __global__ void sim_selftest_spin(const u32* flag) {
    while (*(const volatile u32*)flag == 0) {
    }
}

// The same as sim_selftest_fill; its PTX declares `.maxntid 128, 1, 1`.
extern "C" __global__ void sim_selftest_bounded(u32* out, u64 n) {
    WARPATH_GRID_STRIDE(i, n) { out[i] = (u32)i; }
}

// The same as sim_selftest_fill, registered below as needing 128 registers a thread (as if ptxas
// had said so), so a block of more than 512 threads cannot be launched.
extern "C" __global__ void sim_selftest_heavy(u32* out, u64 n) {
    WARPATH_GRID_STRIDE(i, n) { out[i] = (u32)i; }
}

// Writes n u32 of dynamic shared memory: more than the launch gave it overruns it.
extern "C" __global__ void sim_selftest_shared(u32* out, u32 n) {
    WARPATH_DYNAMIC_SHARED(u32, s);
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) s[i] = i;
    __syncthreads();
    if (threadIdx.x == 0) out[0] = s[n - 1];
}

// out[0] = a / b: an integer division by zero when b == 0.
extern "C" __global__ void sim_selftest_divide(u32* out, u32 a, u32 b) { out[0] = a / b; }

WARPATH_SIM_KERNEL("sim_selftest", sim_selftest_fill);
WARPATH_SIM_KERNEL("sim_selftest", sim_selftest_copy);
WARPATH_SIM_KERNEL("sim_selftest", sim_selftest_deadlock);
WARPATH_SIM_KERNEL("sim_selftest", sim_selftest_spin);
WARPATH_SIM_KERNEL("sim_selftest", sim_selftest_divide);
WARPATH_SIM_KERNEL("sim_selftest", sim_selftest_bounded);
WARPATH_SIM_KERNEL("sim_selftest", sim_selftest_shared);
WARPATH_SIM_KERNEL("sim_selftest", sim_selftest_heavy);
WARPATH_SIM_RESOURCES(sim_selftest_heavy, 128, 0);
