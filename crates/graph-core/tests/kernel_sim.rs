//! The GPU Euler-circuit pipeline's kernels run on the CPU by the CUDA simulator (logic only;
//! see `gpu_runtime::testing::run_cuda_sim` and `kernels-cuda/sim/test_graph.cpp`).

#[test]
fn graph_kernels_in_cpu_simulation() {
    gpu_runtime::testing::run_cuda_sim("test_graph", std::time::Duration::from_secs(600));
}
