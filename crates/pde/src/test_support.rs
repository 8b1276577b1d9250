//! What the tests of several modules share.

use crate::{FhnParams, Scenario, Scheme, Simulation, simulate};
use gpu_runtime::Exec;

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

/// The default parameters on `n` nodes over `length`, stepped by `dt`.
pub(crate) fn stepped(n: usize, length: f64, dt: f64) -> FhnParams {
    FhnParams {
        n,
        length,
        dt,
        ..FhnParams::default()
    }
}

/// The default parameters on `n` nodes half a length unit apart.
pub(crate) fn half_spaced(n: usize) -> FhnParams {
    FhnParams {
        n,
        length: (n - 1) as f64 * 0.5,
        ..FhnParams::default()
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
