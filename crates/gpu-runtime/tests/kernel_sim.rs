//! The runtime kernels, run on the CPU by the CUDA simulator (logic only; see
//! `gpu_runtime::testing::run_cuda_sim`).

#[test]
fn runtime_kernels_in_cpu_simulation() {
    gpu_runtime::testing::run_cuda_sim("test_runtime", std::time::Duration::from_secs(120));
}
