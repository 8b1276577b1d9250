//! The look-back scan and Onesweep radix sort kernels run on the CPU by the CUDA simulator
//! (logic only; see `gpu_runtime::testing::run_cuda_sim` and
//! `kernels-cuda/sim/test_primitives.cpp`).

#[test]
fn primitives_kernels_in_cpu_simulation() {
    gpu_runtime::testing::run_cuda_sim("test_primitives", std::time::Duration::from_secs(600));
}
