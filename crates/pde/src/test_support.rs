//! What the tests of several modules share.

use std::fmt::Debug;

/// Runs `run` with the simulated device's memory limited to `bytes` and asserts that each of
/// its results is an error that `out_of_memory` accepts; false (nothing run) without the
/// simulated driver.
pub(crate) fn runs_out_of_memory<T: Debug, E: Debug, const N: usize>(
    bytes: u64,
    run: impl FnOnce() -> [Result<T, E>; N],
    out_of_memory: impl Fn(&E) -> bool,
) -> bool {
    let results = gpu_runtime::testing::with_simulated_memory_limit(bytes, run);
    for r in results.iter().flatten() {
        assert!(r.as_ref().is_err_and(&out_of_memory), "{r:?}");
    }
    results.is_some()
}
