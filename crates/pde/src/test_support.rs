//! What the tests of several modules share.

use std::fmt::Debug;

use crate::{FhnParams, Scenario, Scheme, Simulation, simulate};
use gpu_runtime::Exec;

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

/// The default parameters, run to `t_end`.
pub(crate) fn until(t_end: f64) -> FhnParams {
    FhnParams {
        t_end,
        ..FhnParams::default()
    }
}

/// The default parameters on `n` nodes over `length`, run to `t_end`.
pub(crate) fn on_grid(n: usize, length: f64, t_end: f64) -> FhnParams {
    FhnParams {
        n,
        length,
        ..until(t_end)
    }
}

/// `scenario` with the explicit scheme on the CPU, keeping `snapshots + 1` snapshots.
pub(crate) fn simulate_explicit(scenario: Scenario, p: FhnParams, snapshots: usize) -> Simulation {
    simulate(
        scenario,
        p,
        Scheme::Explicit,
        Exec::Cpu,
        snapshots,
        &mut |_, _| {},
    )
    .unwrap()
}
