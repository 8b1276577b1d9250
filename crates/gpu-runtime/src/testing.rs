//! Helpers for tests of GPU code.

use crate::{Gpu, gpu};

/// Whether `WARPATH_REQUIRE_GPU=1` is set (then a missing GPU fails GPU tests).
pub fn gpu_required() -> bool {
    matches!(
        std::env::var("WARPATH_REQUIRE_GPU").as_deref(),
        Ok("1") | Ok("true") | Ok("yes")
    )
}

/// The GPU for a test, or `None` after printing `skipped: no CUDA device (...)`.
///
/// With `WARPATH_REQUIRE_GPU=1` a missing GPU panics instead, so the test fails: that is how
/// the GPU bundle proves the GPU tests really ran.
///
/// ```
/// let Some(gpu) = gpu_runtime::testing::gpu_for_test("doc example") else { return };
/// assert!(gpu.info().multiprocessors > 0);
/// ```
pub fn gpu_for_test(test: &str) -> Option<&'static Gpu> {
    match gpu() {
        Ok(g) => Some(g),
        Err(e) if gpu_required() => {
            panic!("WARPATH_REQUIRE_GPU=1 but there is no usable CUDA device for {test}: {e}")
        }
        Err(e) => {
            println!("skipped: no CUDA device ({e}) [{test}]");
            None
        }
    }
}
