//! The auction kernels run on the CPU by the CUDA simulator (logic only; see
//! `gpu_runtime::testing::run_cuda_sim` and `kernels-cuda/sim/test_assignment.cpp`), in both
//! thread orders: the round kernels driven as `solve_cuda` drives them (bidder count in device
//! memory, double-buffered, read back once per batch of rounds, no-op rounds after it reaches
//! 0), compared with a sequential Jacobi auction and the exact optimum; and the batch kernel.

#[test]
fn assignment_kernels_in_cpu_simulation() {
    gpu_runtime::testing::run_cuda_sim("test_assignment", std::time::Duration::from_secs(600));
}
