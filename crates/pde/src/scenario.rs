//! Built-in scenarios, a simulation driver that records snapshots, and front / pulse speed
//! measurement.

use gpu_runtime::{Backend, Exec};
use rayon::prelude::*;

use crate::PdeError;
use crate::adaptive::{AdaptiveOptions, AdaptiveStats, adaptive_run};
use crate::implicit::{ImplicitStats, NewtonOptions, implicit_run};
use crate::params::{Boundary, FhnParams, FhnState, invalid};

/// The seed's experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// `v(x, 0) = exp(-(x - L/2)^2 / 10)` (at `x = 100` for `L = 200`): two pulses travel
    /// apart.
    Gaussian,
    /// The rest state stimulated periodically at `x = L` ([`Stimulus::PULSE_TRAIN`]: `v(L, t)`
    /// held at 1 for 5 time units of every 100): every stimulus starts a pulse, and the pulses
    /// travel left as a train, one wavelength (about 63 with the seed's parameters) apart.
    PulseTrain,
    /// The seed's Fig. 1: the rest state with a constant input `v(L, t) = 1` (a Dirichlet end
    /// at all times). With the seed's parameters it starts a train of pulses travelling left,
    /// one about every 110.6 time units; with others (e.g. `a = 0.1, gamma = 0.5`) a single pulse.
    Constant,
    /// The Nagumo equation (`eps = 0`) from its exact travelling front
    /// `v = 1 / (1 + exp((x - L/4) / sqrt 2))`, which moves right at `(1 - 2a) / sqrt 2`.
    Front,
}

/// A periodic stimulus at `x = L`: `v(L, t)` is held at `value` during the first `duration`
/// of every `period` (from `t = 0`), and the end is no-flux in between. Each stimulus starts a
/// pulse when the end has recovered from the previous one, so a period above the recovery time
/// gives one pulse per period; a constant input ([`Scenario::Constant`], `v(L, t) = 1` at all
/// times) instead starts a train only for some parameters (with the seed's it does, one pulse
/// per 110.6 time units once settled; with `a = 0.1, gamma = 0.5` it starts one pulse).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stimulus {
    /// The value `v(L, t)` is held at while the stimulus is on.
    pub value: f64,
    /// Time from one stimulus to the next (`> 0`).
    pub period: f64,
    /// How long each stimulus lasts (`0 < duration <= period`; `duration == period` is a
    /// constant input).
    pub duration: f64,
}

impl Stimulus {
    /// The pulse-train scenario's stimulus: `v(L, t) = 1` for 5 time units every 100. With the
    /// seed's parameters (the [`FhnParams`] defaults) the end recovers in under 100 time units,
    /// so every stimulus starts a pulse; with `a = 0.1, gamma = 0.5` every other one does.
    pub const PULSE_TRAIN: Stimulus = Stimulus {
        value: 1.0,
        period: 100.0,
        duration: 5.0,
    };

    /// Whether the stimulus is on at time `t >= 0`.
    ///
    /// ```
    /// use pde::Stimulus;
    /// let s = Stimulus::PULSE_TRAIN;
    /// assert!(s.is_on(0.0) && s.is_on(4.99) && !s.is_on(5.0) && s.is_on(100.0));
    /// ```
    pub fn is_on(&self, t: f64) -> bool {
        t.rem_euclid(self.period) < self.duration
    }

    /// The first time after `t` at which the stimulus switches on or off.
    fn next_switch(&self, t: f64) -> f64 {
        let start = t - t.rem_euclid(self.period);
        if self.is_on(t) {
            start + self.duration
        } else {
            start + self.period
        }
    }

    /// Checks the stimulus' domain.
    ///
    /// # Errors
    /// [`PdeError::InvalidParameter`] naming the first bad field.
    pub fn validate(&self) -> Result<(), PdeError> {
        if !self.value.is_finite() {
            return invalid("stimulus value", self.value, "must be finite");
        }
        if !(self.period.is_finite() && self.period > 0.0) {
            return invalid("stimulus period", self.period, "must be finite and > 0");
        }
        if !(self.duration > 0.0 && self.duration <= self.period) {
            return invalid(
                "stimulus duration",
                self.duration,
                "must be > 0 and at most the period",
            );
        }
        Ok(())
    }
}

impl Scenario {
    /// `base` with what the scenario needs: `eps = 0`, `w = 0` and `v_range = (0, 1)` for the
    /// front; `v(L, t) = 1` for the constant input; the pulse train's stimulated end is no-flux between stimuli (the stimulus
    /// itself, [`Scenario::stimulus`], is applied by [`simulate`]). A no-flux end a scenario
    /// sets keeps `base`'s discretisation: [`Boundary::Copy`] (the seed's) where `base` has it.
    pub fn params(self, base: FhnParams) -> FhnParams {
        match self {
            Scenario::Gaussian => base,
            Scenario::PulseTrain => FhnParams {
                right: no_flux(base.right),
                ..base
            },
            Scenario::Constant => FhnParams {
                right: Boundary::Dirichlet(1.0),
                ..base
            },
            Scenario::Front => FhnParams {
                eps: 0.0,
                v_range: (0.0, 1.0),
                left: no_flux(base.left),
                right: no_flux(base.right),
                ..base
            },
        }
    }

    /// The initial state on `p`'s grid.
    pub fn initial_state(self, p: &FhnParams) -> FhnState {
        let mut s = FhnState::rest(p.n);
        // x_i = i dx as in `p.grid()`, computed here rather than held
        let dx = p.dx();
        match self {
            Scenario::Gaussian => {
                let c = p.length / 2.0;
                s.v.par_iter_mut().enumerate().for_each(|(i, v)| {
                    let x = i as f64 * dx;
                    *v = (-(x - c) * (x - c) / 10.0).exp();
                });
            }
            Scenario::PulseTrain | Scenario::Constant => {}
            Scenario::Front => {
                s.v.par_iter_mut().enumerate().for_each(|(i, v)| {
                    *v = nagumo_front(i as f64 * dx, 0.0, p.a, p.length / 4.0);
                });
            }
        }
        s.apply_boundaries(p);
        s
    }

    /// The periodic stimulus at `x = L` the scenario applies: [`Stimulus::PULSE_TRAIN`] for
    /// the pulse train, none for the others.
    pub fn stimulus(self) -> Option<Stimulus> {
        match self {
            Scenario::PulseTrain => Some(Stimulus::PULSE_TRAIN),
            Scenario::Gaussian | Scenario::Constant | Scenario::Front => None,
        }
    }

    /// Which crossing of `v = 1/2` to track: the right-most (fronts and the right-moving
    /// pulse of the Gaussian) or the left-most (the leading pulse of a train, which comes from
    /// `x = L`).
    pub fn tracks_rightmost(self) -> bool {
        !matches!(self, Scenario::PulseTrain | Scenario::Constant)
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Gaussian => "gaussian",
            Scenario::PulseTrain => "pulse-train",
            Scenario::Constant => "constant",
            Scenario::Front => "front",
        }
    }
}

/// A no-flux end of the kind `b` is: `Copy` stays `Copy`, anything else becomes `NoFlux`.
fn no_flux(b: Boundary) -> Boundary {
    match b {
        Boundary::Copy => Boundary::Copy,
        _ => Boundary::NoFlux,
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
    crossing_at(|i| x[i], x.len().min(v.len()), v, level, rightmost)
}

/// [`crossing`] over the first `m` nodes, node `i` at `x(i)`.
fn crossing_at(
    x: impl Fn(usize) -> f64,
    m: usize,
    v: &[f64],
    level: f64,
    rightmost: bool,
) -> Option<f64> {
    let at = |i: usize| {
        let (a, b) = (v[i] - level, v[i + 1] - level);
        if (a >= 0.0) != (b >= 0.0) {
            let (xa, xb) = (x(i), x(i + 1));
            Some(xa + (xb - xa) * a / (a - b))
        } else {
            None
        }
    };
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
/// The tracked crossing of a pulse train jumps back whenever its leading pulse leaves the
/// domain (to the pulse's back, then to the next pulse's front): the record is cut at such
/// jumps (a step that differs from the median step by more than four times the median step and
/// more than `edge`) and where it leaves the usable range, and the longest piece is fitted.
///
/// # Complexity
/// `O(len log len)`.
///
/// # Examples
/// ```
/// let track = [(0.0, 10.0), (1.0, 10.5), (2.0, 11.0), (3.0, 11.5), (4.0, 12.0), (5.0, 12.5)];
/// assert!((pde::fit_speed(&track, 100.0, 5.0).unwrap() - 0.5).abs() < 1e-12);
/// // a train moving left at 0.5: the leading pulse leaves, the next one is tracked
/// let train: Vec<(f64, f64)> = (0..40).map(|i| (i as f64, 90.0 - (0.5 * i as f64) % 30.0)).collect();
/// assert!((pde::fit_speed(&train, 100.0, 5.0).unwrap() + 0.5).abs() < 1e-9);
/// ```
pub fn fit_speed(track: &[(f64, f64)], length: f64, edge: f64) -> Option<f64> {
    let half = track.len() / 2;
    let inside = |x: f64| x > edge && x < length - edge;
    let late = &track[half..];
    // the median step between consecutive usable points
    let mut steps: Vec<f64> = late
        .windows(2)
        .filter(|w| inside(w[0].1) && inside(w[1].1))
        .map(|w| w[1].1 - w[0].1)
        .collect();
    if steps.len() < 2 {
        return None;
    }
    steps.sort_by(f64::total_cmp);
    let median = steps[steps.len() / 2];
    let jump = |d: f64| (d - median).abs() > (4.0 * median.abs()).max(edge);
    // pieces of consecutive usable points without a jump; the longest is fitted
    let (mut best, mut start) = (0..0, 0);
    for i in 0..=late.len() {
        let cut =
            i == late.len() || !inside(late[i].1) || (i > start && jump(late[i].1 - late[i - 1].1));
        if cut {
            if i - start > best.len() {
                best = start..i;
            }
            start = if i < late.len() && inside(late[i].1) {
                i
            } else {
                i + 1
            };
        }
    }
    let pts = &late[best];
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
    /// The parameters that ran (after the scenario's adjustments; between stimuli).
    pub params: FhnParams,
    /// The stimulus applied at `x = L`, if any.
    pub stimulus: Option<Stimulus>,
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
/// chunk of steps. The scenario's stimulus ([`Scenario::stimulus`]) is applied at `x = L`; see
/// [`simulate_with_stimulus`] for another one.
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
/// let c = nagumo_speed(p.a);
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
    simulate_with_stimulus(
        scenario,
        base,
        scenario.stimulus(),
        scheme,
        exec,
        snapshots,
        progress,
    )
}

/// [`simulate`] with `stimulus` at `x = L` instead of the scenario's own (`None`: none). While
/// the stimulus is on, the right end is `Dirichlet(stimulus.value)`; in between it is the
/// scenario's condition. A step is stimulated when its midpoint is in an on-phase, so the
/// switching times are exact to half a step whatever `dt`.
///
/// # Complexity
/// As [`simulate`]; every switch of the stimulus starts a new run of the scheme (for the GPU
/// paths: an upload and a download of the state).
///
/// # Errors
/// As [`simulate`], and [`PdeError::InvalidParameter`] for a stimulus outside its domain
/// ([`Stimulus::validate`]).
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, Scenario, Scheme, Stimulus, simulate_with_stimulus};
/// // a stimulus every 150 time units instead of 100
/// let s = Stimulus { period: 150.0, ..Stimulus::PULSE_TRAIN };
/// let p = FhnParams { t_end: 20.0, ..FhnParams::default() };
/// let sim = simulate_with_stimulus(Scenario::PulseTrain, p, Some(s), Scheme::Explicit,
///                                  Exec::Cpu, 4, &mut |_, _| {})?;
/// assert_eq!(sim.stimulus, Some(s));
/// assert!(sim.v[1][p.n - 1] > 0.5); // the end was excited
/// # Ok::<(), pde::PdeError>(())
/// ```
pub fn simulate_with_stimulus(
    scenario: Scenario,
    base: FhnParams,
    stimulus: Option<Stimulus>,
    scheme: Scheme,
    exec: Exec,
    snapshots: usize,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Simulation, PdeError> {
    let mut kept = KeepSnapshots::default();
    let run = simulate_streamed(
        scenario, base, stimulus, scheme, exec, snapshots, &mut kept, progress,
    )?;
    Ok(Simulation {
        x: run.params.grid(),
        params: run.params,
        stimulus: run.stimulus,
        times: kept.times,
        v: kept.v,
        w: kept.w,
        track: run.track,
        speed: run.speed,
        backend: run.backend,
        implicit: run.implicit,
        adaptive: run.adaptive,
        steps: run.steps,
    })
}

/// Receives a simulation's snapshots as they are taken ([`simulate_streamed`]), so that a
/// caller keeps only what its outputs need: all of them ([`KeepSnapshots`], what [`simulate`]
/// does), none (`()`), or each written to files and dropped ([`crate::SnapshotWriter`]).
pub trait SnapshotSink {
    /// Called once before the first snapshot with the parameters that run (after the
    /// scenario's adjustments; node `i` is at `i * params.dx()`) and the number of snapshots
    /// that will follow. The default does nothing.
    ///
    /// # Errors
    /// Whatever the sink reports; the simulation stops with it.
    fn begin(&mut self, params: &FhnParams, count: usize) -> Result<(), PdeError> {
        let _ = (params, count);
        Ok(())
    }

    /// Called with the state at each snapshot time, the initial state first and the final
    /// state last; `v` and `w` hold `params.n` values each and are only borrowed.
    ///
    /// # Errors
    /// Whatever the sink reports; the simulation stops with it.
    fn snapshot(&mut self, t: f64, v: &[f64], w: &[f64]) -> Result<(), PdeError>;
}

/// Takes no snapshot: the simulation only tracks the front and measures its speed.
impl SnapshotSink for () {
    fn snapshot(&mut self, _: f64, _: &[f64], _: &[f64]) -> Result<(), PdeError> {
        Ok(())
    }
}

/// Keeps every snapshot in memory (`16 n` bytes each).
#[derive(Debug, Clone, Default)]
pub struct KeepSnapshots {
    /// Snapshot times.
    pub times: Vec<f64>,
    /// `v` at each snapshot.
    pub v: Vec<Vec<f64>>,
    /// `w` at each snapshot.
    pub w: Vec<Vec<f64>>,
}

impl SnapshotSink for KeepSnapshots {
    fn begin(&mut self, _: &FhnParams, count: usize) -> Result<(), PdeError> {
        self.times.reserve(count);
        self.v.reserve(count);
        self.w.reserve(count);
        Ok(())
    }

    fn snapshot(&mut self, t: f64, v: &[f64], w: &[f64]) -> Result<(), PdeError> {
        self.times.push(t);
        self.v.push(v.to_vec());
        self.w.push(w.to_vec());
        Ok(())
    }
}

/// What [`simulate_streamed`] returns: the final state, the tracked front and its speed, and
/// the scheme's statistics; the snapshots went to the sink.
#[derive(Debug, Clone)]
pub struct StreamedRun {
    /// The parameters that ran (after the scenario's adjustments; between stimuli).
    pub params: FhnParams,
    /// The stimulus applied at `x = L`, if any.
    pub stimulus: Option<Stimulus>,
    /// The final state (`state.t` is the end time).
    pub state: FhnState,
    /// How many snapshots the sink received.
    pub snapshots: usize,
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

/// The step counts at which snapshots 1, 2, ... are taken (snapshot 0 is the initial state):
/// `snapshots` of them spread evenly over `total` steps, at most one per step and at most
/// `2^27 / n` (the memory [`simulate`] would spend on them), each rounded up to a multiple of
/// `quantum` (the explicit scheme's time block) except the last, duplicates dropped.
fn snapshot_stops(
    total: u64,
    n: usize,
    snapshots: usize,
    quantum: u64,
) -> impl Iterator<Item = u64> {
    let max_by_memory = ((1u64 << 27) / n.max(1) as u64).max(1);
    let snaps = (snapshots.max(1) as u64)
        .min(total.max(1))
        .min(max_by_memory);
    let mut done = 0u64;
    (1..=snaps).filter_map(move |k| {
        let mut upto = (total as u128 * k as u128 / snaps as u128) as u64;
        if upto < total {
            upto = upto.next_multiple_of(quantum).min(total);
        }
        (upto > done).then(|| {
            done = upto;
            upto
        })
    })
}

/// [`simulate_with_stimulus`] that hands each snapshot to `sink` instead of keeping it: the
/// memory is the scheme's own (for the explicit scheme on a large grid on the CPU, the state
/// and 3% more; see [`crate::explicit_run`]), whatever `p.t_end` and `snapshots`. The snapshots are taken at the same steps as by
/// [`simulate`], the front is tracked at each of them and its speed fitted the same way, so
/// [`StreamedRun::speed`] equals [`Simulation::speed`] for the same arguments.
///
/// # Complexity
/// The scheme's cost, plus `O(n)` per snapshot (the sink's cost aside); `O(snapshots)`
/// auxiliary space besides the scheme's.
///
/// # Errors
/// As [`simulate_with_stimulus`], and whatever the sink reports.
///
/// # Examples
/// ```
/// use gpu_runtime::Exec;
/// use pde::{FhnParams, Scenario, Scheme, nagumo_speed, simulate_streamed};
/// let p = FhnParams { t_end: 60.0, ..FhnParams::default() };
/// // `()` keeps no snapshot; the front is tracked all the same
/// let run = simulate_streamed(Scenario::Front, p, None, Scheme::Explicit, Exec::Cpu, 60,
///                             &mut (), &mut |_, _| {})?;
/// let c = nagumo_speed(p.a);
/// assert!((run.speed.unwrap() - c).abs() < 0.02 * c);
/// assert_eq!(run.snapshots, 61);
/// # Ok::<(), pde::PdeError>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn simulate_streamed(
    scenario: Scenario,
    base: FhnParams,
    stimulus: Option<Stimulus>,
    scheme: Scheme,
    exec: Exec,
    snapshots: usize,
    sink: &mut dyn SnapshotSink,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<StreamedRun, PdeError> {
    let p = scenario.params(base);
    p.validate()?;
    if let Some(s) = &stimulus {
        s.validate()?;
    }
    let stimulated = stimulus.map(|s| FhnParams {
        right: Boundary::Dirichlet(s.value),
        ..p
    });
    if let Scheme::Explicit = scheme {
        p.check_explicit_dt(p.dx())?;
        if let Some(sp) = &stimulated {
            sp.check_explicit_dt(sp.dx())?;
        }
    }
    let total = p.steps();
    // On large grids the explicit CPU path fuses 32 steps per pass over memory: snapshots are
    // taken at multiples of that (fewer of them when the run is short), never cutting a pass
    // short, so a run with snapshots is as fast as one without.
    let quantum = match scheme {
        Scheme::Explicit => crate::explicit::explicit_step_quantum(&p, exec),
        _ => 1,
    };
    let stops = || snapshot_stops(total, p.n, snapshots, quantum);
    sink.begin(&p, 1 + stops().count())?;
    let mut state = scenario.initial_state(&p);
    if let (Some(s), Some(sp)) = (stimulus, &stimulated)
        && s.is_on(0.5 * p.dt)
    {
        state.apply_boundaries(sp); // stimulated from t = 0: the first snapshot shows it
    }
    let dx = p.dx();
    let rightmost = scenario.tracks_rightmost();
    let mut run = StreamedRun {
        params: p,
        stimulus,
        state: FhnState::rest(0),
        snapshots: 1,
        track: Vec::new(),
        speed: None,
        backend: Backend::Cpu,
        implicit: None,
        adaptive: None,
        steps: total,
    };
    let track = |state: &FhnState, run: &mut StreamedRun| {
        if let Some(pos) = crossing_at(|i| i as f64 * dx, p.n, &state.v, 0.5, rightmost) {
            run.track.push((state.t, pos));
        }
    };
    sink.snapshot(0.0, &state.v, &state.w)?;
    track(&state, &mut run);
    let mut scratch = crate::explicit::ExplicitScratch::default();
    let mut done = 0u64;
    for upto in stops() {
        // the chunk, cut where the stimulus switches
        while done < upto {
            let (params, steps) = match (stimulus, &stimulated) {
                (Some(s), Some(sp)) => {
                    let mid = (done as f64 + 0.5) * p.dt;
                    let switch = (s.next_switch(mid) / p.dt - 0.5).ceil().max(0.0) as u64;
                    let steps = switch.clamp(done + 1, upto) - done;
                    if s.is_on(mid) {
                        state.apply_boundaries(sp);
                        (sp, steps)
                    } else {
                        (&p, steps)
                    }
                }
                _ => (&p, upto - done),
            };
            advance(
                params,
                &mut state,
                steps,
                scheme,
                exec,
                &mut run,
                &mut scratch,
            )?;
            done += steps;
        }
        sink.snapshot(state.t, &state.v, &state.w)?;
        run.snapshots += 1;
        track(&state, &mut run);
        progress(done, total);
    }
    run.speed = fit_speed(&run.track, p.length, 0.05 * p.length);
    run.state = state;
    Ok(run)
}

/// Runs `steps` steps of `scheme` and merges its statistics into `sim`; the explicit scheme
/// reuses `scratch`'s work arrays from one chunk to the next.
fn advance(
    p: &FhnParams,
    state: &mut FhnState,
    steps: u64,
    scheme: Scheme,
    exec: Exec,
    sim: &mut StreamedRun,
    scratch: &mut crate::explicit::ExplicitScratch,
) -> Result<(), PdeError> {
    match scheme {
        Scheme::Explicit => {
            sim.backend = crate::explicit::explicit_run_reusing(p, state, steps, exec, scratch)?;
        }
        Scheme::Adaptive(opts) => {
            let st = adaptive_run(p, state, steps, &opts)?;
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
            let st = implicit_run(p, state, steps, opts, exec)?;
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
    Ok(())
}

#[cfg(test)]
mod tests;
