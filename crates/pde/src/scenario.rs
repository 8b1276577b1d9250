//! Built-in scenarios, a simulation driver that records snapshots, and front / pulse speed
//! measurement.

use gpu_runtime::{Backend, Exec};

use crate::PdeError;
use crate::adaptive::{AdaptiveOptions, AdaptiveStats, adaptive_run};
use crate::implicit::{ImplicitStats, NewtonOptions, implicit_run};
use crate::params::{Boundary, FhnParams, FhnState};

/// The seed's experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// `v(x, 0) = exp(-(x - L/2)^2 / 10)` (at `x = 100` for `L = 200`): two pulses travel
    /// apart.
    Gaussian,
    /// The rest state driven by `v(L, t) = 1`: a train of pulses travels left.
    PulseTrain,
    /// The Nagumo equation (`eps = 0`) from its exact travelling front
    /// `v = 1 / (1 + exp((x - L/4) / sqrt 2))`, which moves right at `(1 - 2a) / sqrt 2`.
    Front,
}

impl Scenario {
    /// `base` with what the scenario needs: a Dirichlet input for pulse trains; `eps = 0`,
    /// `w = 0` and `v_range = (0, 1)` for the front.
    pub fn params(self, base: FhnParams) -> FhnParams {
        match self {
            Scenario::Gaussian => base,
            Scenario::PulseTrain => FhnParams {
                right: Boundary::Dirichlet(1.0),
                ..base
            },
            Scenario::Front => FhnParams {
                eps: 0.0,
                v_range: (0.0, 1.0),
                left: Boundary::NoFlux,
                right: Boundary::NoFlux,
                ..base
            },
        }
    }

    /// The initial state on `p`'s grid.
    pub fn initial_state(self, p: &FhnParams) -> FhnState {
        let mut s = FhnState::rest(p.n);
        let x = p.grid();
        match self {
            Scenario::Gaussian => {
                let c = p.length / 2.0;
                for (v, x) in s.v.iter_mut().zip(&x) {
                    *v = (-(x - c) * (x - c) / 10.0).exp();
                }
            }
            Scenario::PulseTrain => {}
            Scenario::Front => {
                for (v, x) in s.v.iter_mut().zip(&x) {
                    *v = nagumo_front(*x, 0.0, p.a, p.length / 4.0);
                }
            }
        }
        s.apply_boundaries(p);
        s
    }

    /// Which crossing of `v = 1/2` to track: the right-most (fronts and the right-moving
    /// pulse of the Gaussian) or the left-most (pulse trains, which come from `x = L`).
    pub fn tracks_rightmost(self) -> bool {
        !matches!(self, Scenario::PulseTrain)
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Gaussian => "gaussian",
            Scenario::PulseTrain => "pulse-train",
            Scenario::Front => "front",
        }
    }
}

/// The exact Nagumo travelling front `1 / (1 + exp((x - x0 - c t) / sqrt 2))` with
/// `c = (1 - 2a) / sqrt 2`.
///
/// ```
/// assert_eq!(pde::nagumo_front(5.0, 0.0, 0.1, 5.0), 0.5);
/// ```
pub fn nagumo_front(x: f64, t: f64, a: f64, x0: f64) -> f64 {
    let c = nagumo_speed(a);
    1.0 / (1.0 + ((x - x0 - c * t) / std::f64::consts::SQRT_2).exp())
}

/// The exact speed `(1 - 2a) / sqrt 2` of the Nagumo front.
pub fn nagumo_speed(a: f64) -> f64 {
    (1.0 - 2.0 * a) / std::f64::consts::SQRT_2
}

/// Where `v` crosses `level`, interpolated linearly: the right-most crossing when `rightmost`,
/// else the left-most; `None` when `v` never crosses.
///
/// # Complexity
/// `O(n)`.
///
/// # Examples
/// ```
/// let x = [0.0, 1.0, 2.0, 3.0];
/// let v = [1.0, 1.0, 0.0, 0.0];
/// assert_eq!(pde::crossing(&x, &v, 0.5, true), Some(1.5));
/// ```
pub fn crossing(x: &[f64], v: &[f64], level: f64, rightmost: bool) -> Option<f64> {
    let at = |i: usize| {
        let (a, b) = (v[i] - level, v[i + 1] - level);
        if (a >= 0.0) != (b >= 0.0) {
            Some(x[i] + (x[i + 1] - x[i]) * a / (a - b))
        } else {
            None
        }
    };
    let m = x.len().min(v.len());
    if m < 2 {
        return None;
    }
    if rightmost {
        (0..m - 1).rev().find_map(at)
    } else {
        (0..m - 1).find_map(at)
    }
}

/// The least-squares slope of `(t, position)` pairs from the second half of the record (after
/// the start-up transient), ignoring positions within `edge` of either end of `[0, length]`;
/// `None` with fewer than three usable points.
///
/// # Complexity
/// `O(len)`.
///
/// # Examples
/// ```
/// let track = [(0.0, 10.0), (1.0, 10.5), (2.0, 11.0), (3.0, 11.5), (4.0, 12.0), (5.0, 12.5)];
/// assert!((pde::fit_speed(&track, 100.0, 5.0).unwrap() - 0.5).abs() < 1e-12);
/// ```
pub fn fit_speed(track: &[(f64, f64)], length: f64, edge: f64) -> Option<f64> {
    let half = track.len() / 2;
    let pts: Vec<(f64, f64)> = track[half..]
        .iter()
        .copied()
        .filter(|&(_, x)| x > edge && x < length - edge)
        .collect();
    if pts.len() < 3 {
        return None;
    }
    let k = pts.len() as f64;
    let mt = pts.iter().map(|p| p.0).sum::<f64>() / k;
    let mx = pts.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mt) * (p.0 - mt)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mt) * (p.1 - mx)).sum();
    if sxx == 0.0 { None } else { Some(sxy / sxx) }
}

/// Which time-stepping scheme a simulation uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scheme {
    /// Forward Euler on the uniform grid ([`crate::explicit_run`]).
    Explicit,
    /// Forward Euler on an adaptive grid ([`adaptive_run`]).
    Adaptive(AdaptiveOptions),
    /// Crank–Nicolson with Newton ([`implicit_run`]).
    Implicit(NewtonOptions),
}

/// A finished simulation: snapshots, the tracked front and its speed.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// The parameters that ran (after the scenario's adjustments).
    pub params: FhnParams,
    /// Node positions.
    pub x: Vec<f64>,
    /// Snapshot times (the first is the initial state, the last the final state).
    pub times: Vec<f64>,
    /// `v` at each snapshot.
    pub v: Vec<Vec<f64>>,
    /// `w` at each snapshot.
    pub w: Vec<Vec<f64>>,
    /// `(t, position)` of the tracked `v = 1/2` crossing at each snapshot where there is one.
    pub track: Vec<(f64, f64)>,
    /// The measured front / pulse speed (positive to the right), if it could be fitted.
    pub speed: Option<f64>,
    /// Where it ran.
    pub backend: Backend,
    /// Newton statistics of the implicit scheme.
    pub implicit: Option<ImplicitStats>,
    /// Node statistics of the adaptive scheme (the last chunk's counts are merged).
    pub adaptive: Option<AdaptiveStats>,
    /// Total steps.
    pub steps: u64,
}

/// Runs `scenario` with `scheme` to `p.t_end`, keeping `snapshots + 1` snapshots (and the
/// front position at each); fewer when the run has fewer steps or when they would hold more
/// than 2^27 values of `v`, and, for the explicit scheme on grids large enough for its
/// time-blocked CPU path, at most one per 32 steps (snapshots fall on multiples of 32 steps,
/// so that they never cut a time block short). `progress(done, total)` is called after each
/// chunk of steps.
///
/// # Complexity
/// The scheme's cost, plus `O(n)` per snapshot.
///
/// # Errors
/// The scheme's errors (e.g. [`PdeError::Unstable`] for an explicit `dt` above the limit).
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, Scenario, Scheme, simulate, nagumo_speed};
/// let p = FhnParams { t_end: 60.0, ..FhnParams::default() };
/// let sim = simulate(Scenario::Front, p, Scheme::Explicit, Exec::Cpu, 60, &mut |_, _| {})?;
/// let c = nagumo_speed(0.1);
/// assert!((sim.speed.unwrap() - c).abs() < 0.02 * c);
/// # Ok::<(), pde::PdeError>(())
/// ```
pub fn simulate(
    scenario: Scenario,
    base: FhnParams,
    scheme: Scheme,
    exec: Exec,
    snapshots: usize,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Simulation, PdeError> {
    let p = scenario.params(base);
    p.validate()?;
    if let Scheme::Explicit = scheme {
        p.check_explicit_dt(p.dx())?;
    }
    let mut state = scenario.initial_state(&p);
    let total = p.steps();
    // At most one snapshot per step, and at most 2^27 stored values of v (1 GiB, as much
    // again for w), so a large grid cannot exhaust memory through snapshots.
    let max_by_memory = ((1u64 << 27) / p.n as u64).max(1);
    let snaps = (snapshots.max(1) as u64)
        .min(total.max(1))
        .min(max_by_memory);
    let x = p.grid();
    let rightmost = scenario.tracks_rightmost();
    let mut sim = Simulation {
        params: p,
        x: x.clone(),
        times: vec![0.0],
        v: vec![state.v.clone()],
        w: vec![state.w.clone()],
        track: Vec::new(),
        speed: None,
        backend: Backend::Cpu,
        implicit: None,
        adaptive: None,
        steps: total,
    };
    if let Some(pos) = crossing(&x, &state.v, 0.5, rightmost) {
        sim.track.push((0.0, pos));
    }
    // On large grids the explicit CPU path fuses 32 steps per pass over memory: snapshots are
    // taken at multiples of that (fewer of them when the run is short), never cutting a pass
    // short, so a run with snapshots is as fast as one without.
    let quantum = match scheme {
        Scheme::Explicit => crate::explicit::explicit_step_quantum(&p, exec),
        _ => 1,
    };
    let mut scratch = crate::explicit::ExplicitScratch::default();
    let mut done = 0u64;
    for k in 1..=snaps {
        let mut upto = (total as u128 * k as u128 / snaps as u128) as u64;
        if upto < total {
            upto = upto.next_multiple_of(quantum).min(total);
        }
        let chunk = upto.saturating_sub(done);
        if chunk == 0 {
            continue;
        }
        match scheme {
            Scheme::Explicit => {
                sim.backend = crate::explicit::explicit_run_reusing(
                    &p,
                    &mut state,
                    chunk,
                    exec,
                    &mut scratch,
                )?;
            }
            Scheme::Adaptive(opts) => {
                let st = adaptive_run(&p, &mut state, chunk, &opts)?;
                sim.adaptive = Some(match sim.adaptive {
                    None => st,
                    Some(acc) => AdaptiveStats {
                        uniform_nodes: acc.uniform_nodes,
                        mean_nodes: (acc.mean_nodes * acc.steps as f64
                            + st.mean_nodes * st.steps as f64)
                            / (acc.steps + st.steps) as f64,
                        min_nodes: acc.min_nodes.min(st.min_nodes),
                        max_nodes: acc.max_nodes.max(st.max_nodes),
                        regrids: acc.regrids + st.regrids,
                        steps: acc.steps + st.steps,
                    },
                });
            }
            Scheme::Implicit(opts) => {
                let st = implicit_run(&p, &mut state, chunk, opts, exec)?;
                sim.backend = st.backend;
                sim.implicit = Some(match sim.implicit {
                    None => st,
                    Some(acc) => ImplicitStats {
                        steps: acc.steps + st.steps,
                        newton_iterations: acc.newton_iterations + st.newton_iterations,
                        max_iterations_per_step: acc
                            .max_iterations_per_step
                            .max(st.max_iterations_per_step),
                        backend: st.backend,
                    },
                });
            }
        }
        done = upto;
        sim.times.push(state.t);
        sim.v.push(state.v.clone());
        sim.w.push(state.w.clone());
        if let Some(pos) = crossing(&x, &state.v, 0.5, rightmost) {
            sim.track.push((state.t, pos));
        }
        progress(done, total);
    }
    sim.speed = fit_speed(&sim.track, p.length, 0.05 * p.length);
    Ok(sim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explicit_run;

    #[test]
    fn snapshot_count_is_capped() {
        let p = FhnParams {
            n: 41,
            length: 20.0,
            t_end: 0.5,
            ..FhnParams::default()
        };
        let sim = simulate(
            Scenario::Gaussian,
            p,
            Scheme::Explicit,
            Exec::Cpu,
            1_000_000,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(sim.times.len(), 11); // 10 steps: one snapshot each, plus the start
        let sim = simulate(
            Scenario::Gaussian,
            FhnParams { t_end: 0.0, ..p },
            Scheme::Explicit,
            Exec::Cpu,
            5,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(sim.times, vec![0.0]);
    }

    /// Snapshots on a time-blocked grid fall on whole blocks and give the same final state.
    #[test]
    fn snapshots_do_not_cut_time_blocks_short() {
        let n = (1 << 15) + 1 + crate::FUSED_MAX_N.max(1 << 15);
        let p = FhnParams {
            n,
            length: (n - 1) as f64 * 0.5,
            t_end: 100.0 * 0.05,
            ..FhnParams::default()
        };
        let sim = simulate(
            Scenario::Gaussian,
            p,
            Scheme::Explicit,
            Exec::Cpu,
            10,
            &mut |_, _| {},
        )
        .unwrap();
        let steps: Vec<u64> = sim
            .times
            .iter()
            .map(|t| (t / p.dt).round() as u64)
            .collect();
        assert_eq!(steps, vec![0, 32, 64, 96, 100]);
        let mut s = Scenario::Gaussian.initial_state(&p);
        explicit_run(&p, &mut s, 100, Exec::Cpu).unwrap();
        assert_eq!(sim.v.last().unwrap(), &s.v);
    }

    #[test]
    fn crossing_and_speed_fit() {
        let x = [0.0, 1.0, 2.0, 3.0, 4.0];
        let v = [0.0, 1.0, 1.0, 0.0, 0.0];
        assert_eq!(crossing(&x, &v, 0.5, true), Some(2.5));
        assert_eq!(crossing(&x, &v, 0.5, false), Some(0.5));
        assert_eq!(crossing(&x, &[0.0; 5], 0.5, true), None);
        assert_eq!(crossing(&[], &[], 0.5, true), None);
        let track: Vec<(f64, f64)> = (0..20).map(|i| (i as f64, 10.0 + 0.5 * i as f64)).collect();
        assert!((fit_speed(&track, 100.0, 5.0).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(fit_speed(&track[..2], 100.0, 5.0), None);
    }

    #[test]
    fn front_speed_matches_exact_for_every_scheme() {
        let c = nagumo_speed(0.1);
        let p = FhnParams {
            t_end: 80.0,
            ..FhnParams::default()
        };
        for scheme in [
            Scheme::Explicit,
            Scheme::Adaptive(AdaptiveOptions::default()),
            Scheme::Implicit(NewtonOptions::default()),
        ] {
            let sim = simulate(Scenario::Front, p, scheme, Exec::Cpu, 40, &mut |_, _| {}).unwrap();
            let s = sim.speed.unwrap();
            assert!((s - c).abs() < 0.02 * c, "{scheme:?}: {s} vs {c}");
            assert_eq!(sim.times.len(), 41);
        }
    }

    #[test]
    fn gaussian_splits_and_pulse_train_moves_left() {
        let p = FhnParams {
            t_end: 60.0,
            ..FhnParams::default()
        };
        let sim = simulate(
            Scenario::Gaussian,
            p,
            Scheme::Explicit,
            Exec::Cpu,
            30,
            &mut |_, _| {},
        )
        .unwrap();
        let last = sim.v.last().unwrap();
        // symmetric: two pulses
        for i in 0..p.n {
            assert!((last[i] - last[p.n - 1 - i]).abs() < 1e-9);
        }
        assert!(sim.speed.unwrap() > 0.2);
        let p = FhnParams {
            t_end: 150.0,
            ..FhnParams::default()
        };
        let sim = simulate(
            Scenario::PulseTrain,
            p,
            Scheme::Explicit,
            Exec::Cpu,
            50,
            &mut |_, _| {},
        )
        .unwrap();
        assert!(sim.speed.unwrap() < -0.2, "{:?}", sim.speed);
        assert!(sim.v.iter().all(|v| v[p.n - 1] == 1.0));
    }
}
