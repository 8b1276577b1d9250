//! Fuzz target: see `warpath_fuzz` for what it asserts. Run with `cargo xtask fuzz kmeans_matrix`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    warpath_fuzz::kmeans_matrix(data, "centroids.csv");
    warpath_fuzz::kmeans_matrix(data, "centroids.npy");
    warpath_fuzz::kmeans_matrix(data, "centroids.bin");
});
