//! The pde kernels run on the CPU by the CUDA simulator (logic only; see
//! `gpu_runtime::testing::run_cuda_sim` and `kernels-cuda/sim/test_pde.cpp`).

#[test]
fn pde_kernels_in_cpu_simulation() {
    gpu_runtime::testing::run_cuda_sim("test_pde", std::time::Duration::from_secs(600));
}
