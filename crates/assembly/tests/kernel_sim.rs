//! The compaction kernels run on the CPU by the CUDA simulator (logic only; see
//! `gpu_runtime::testing::run_cuda_sim` and `kernels-cuda/sim/test_assembly.cpp`).

#[test]
fn assembly_kernels_in_cpu_simulation() {
    gpu_runtime::testing::run_cuda_sim("test_assembly", std::time::Duration::from_secs(600));
}
