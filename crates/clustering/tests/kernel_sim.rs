//! The k-means kernels (fused small path and tiled path) run on the CPU by the CUDA simulator
//! (logic only; see `gpu_runtime::testing::run_cuda_sim` and
//! `kernels-cuda/sim/test_clustering.cpp`).

#[test]
fn clustering_kernels_in_cpu_simulation() {
    gpu_runtime::testing::run_cuda_sim("test_clustering", std::time::Duration::from_secs(600));
}
