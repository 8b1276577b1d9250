//! `fhn-fig1-constant` and `fhn-fig2-gaussian` (the seed's Figs 1 and 2): the pulse train a
//! constant input starts and the two pulses a Gaussian impulse splits into, with both end
//! discretisations.

use gpu_runtime::Exec;
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, Row};

use super::{fail, seed_experiment};
use crate::Scenario;
use crate::params::{Boundary, FhnParams};
use crate::scenario::{Scheme, simulate};

/// The two discretisations of a no-flux end: ours (a mirrored ghost node) and the seed's
/// (`v_0 = v_1`).
const ENDS: [(&str, Boundary); 2] = [("mirror", Boundary::NoFlux), ("copy", Boundary::Copy)];

/// The note on the two end discretisations, for both figures.
const ENDS_NOTE: &str = "Ends: ours are no-flux with a mirrored ghost node (v_{-1} = v_1, second \
    order; rows `ends = mirror`); the seed writes v_0 = v_1 (the end copies its neighbour, first \
    order; rows `ends = copy`, `warpath fhn --ends copy`).";

/// The note on the stability limit, ours and the seed's, for both figures.
const LIMIT_NOTE: &str = "Stability limit: the seed uses 2 dt <= dx^2; ours also counts the \
    reaction term's stiffness, dt <= 2 / (4/dx^2 + K) with K = max(0, -min f'(v)) over \
    v in [-0.4, 1] (0.1156 instead of 0.125 at dx = 0.5; the seed's is \
    `--stability-limit seed`, LimitRule::DiffusionOnly). dt = 0.05 here is below both.";

/// Profile rows `{kind: "profile", ends, t, x, v}` of `sim` at the snapshots nearest `times`,
/// every `stride`-th node.
fn profile_rows(
    sim: &crate::Simulation,
    ends: &str,
    times: &[f64],
    stride: usize,
    out: &mut Vec<Row>,
) {
    for &t in times {
        let Some(k) = (0..sim.times.len()).min_by(|&a, &b| {
            (sim.times[a] - t)
                .abs()
                .total_cmp(&(sim.times[b] - t).abs())
        }) else {
            continue;
        };
        let ts = (sim.times[k] * 100.0).round() / 100.0;
        for i in (0..sim.x.len()).step_by(stride.max(1)) {
            out.push(
                Row::new()
                    .with("kind", "profile")
                    .with("ends", ends)
                    .with("t", ts)
                    .with("x", sim.x[i])
                    .with("v", sim.v[k][i]),
            );
        }
    }
}

/// Positions of the pulses in `v`: local maxima above 1/2 inside the domain.
fn pulses(x: &[f64], v: &[f64]) -> Vec<f64> {
    (1..v.len().saturating_sub(1))
        .filter(|&i| v[i] > 0.5 && v[i] >= v[i - 1] && v[i] > v[i + 1])
        .map(|i| x[i])
        .collect()
}

/// Times at which `v` at node `i` rises through 1/2 (interpolated between snapshots).
fn rises(sim: &crate::Simulation, i: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for k in 1..sim.times.len() {
        let (a, b) = (sim.v[k - 1][i] - 0.5, sim.v[k][i] - 0.5);
        if a < 0.0 && b >= 0.0 {
            let (t0, t1) = (sim.times[k - 1], sim.times[k]);
            out.push(t0 + (t1 - t0) * (-a) / (b - a));
        }
    }
    out
}

/// The explicit scheme on the CPU from `p` with both ends set to `b`, `snaps` snapshots
/// (`what` names the run in the error).
fn explicit_with_ends(
    scenario: Scenario,
    p: FhnParams,
    b: Boundary,
    snaps: usize,
    what: &str,
) -> Result<crate::Simulation, ExperimentError> {
    let base = FhnParams {
        left: b,
        right: b,
        ..p
    };
    simulate(
        scenario,
        base,
        Scheme::Explicit,
        Exec::Cpu,
        snaps,
        &mut |_, _| {},
    )
    .map_err(fail(what))
}

/// `fhn-fig1-constant`: the seed's Fig. 1. The resting axon (`v_0 = 0`) with `v(L, t) = 1`,
/// the seed's parameters, explicit scheme, to `t = 306.19` (the time the seed shows), with
/// both end discretisations: the profiles `v(x)` at four times (every 8th node), and per
/// variant the pulses in the domain at the end, the period of the train at `x = 150` and the
/// fitted speed.
///
/// # Errors
/// A run failing (none expected).
pub fn fig1_constant(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = seed_experiment(
        "fhn-fig1-constant",
        "Fig. 1: a constant impulse v(t, L) = 1 at the end of an unexcited axon \
        (v_0(x) = 0) gives rise to oscillatory behaviour: excitation and relaxation, waves \
        travelling right to left, the state shown at t = 306.19. a = 0.01, gamma = 2, \
        eps = 0.01, N = 401, dx = 0.5, 2 dt < dx^2; explicit scheme.",
    );
    e.seed_rows
        .push(Row::new().with("kind", "summary").with("t_end", 306.19));
    let t_end = 306.19;
    let p = FhnParams {
        t_end,
        ..FhnParams::default()
    };
    let snaps = (t_end / 0.5).round() as usize; // one snapshot per 0.5 time units
    let times = [76.55, 153.1, 229.64, t_end];
    let probe = ((150.0 / p.dx()).round() as usize).min(p.n - 1);
    for (ends, b) in ENDS {
        ctx.progress(&format!("constant input, {ends} ends"));
        let sim = explicit_with_ends(Scenario::Constant, p, b, snaps, "the constant-input run")?;
        if ends == "mirror" {
            profile_rows(&sim, ends, &times, 8, &mut e.rows);
        }
        let last = sim.v.last().map(Vec::as_slice).unwrap_or(&[]);
        let at = pulses(&sim.x, last);
        let r = rises(&sim, probe);
        let period = (r.len() >= 2).then(|| (r[r.len() - 1] - r[0]) / (r.len() - 1) as f64);
        e.rows.push(
            Row::new()
                .with("kind", "summary")
                .with("ends", ends)
                .with("t_end", sim.times.last().copied().unwrap_or(0.0))
                .with("pulses_in_domain", at.len())
                .with(
                    "pulse_positions",
                    at.iter()
                        .map(|x| format!("{x:.1}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                )
                .with("period_at_x150", period)
                .with("speed", sim.speed)
                .with("v_min", last.iter().copied().fold(f64::INFINITY, f64::min))
                .with(
                    "v_max",
                    last.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ),
        );
    }
    e.notes.push(ENDS_NOTE.into());
    e.notes.push(LIMIT_NOTE.into());
    e.notes.push(
        "`warpath fhn --scenario constant` is this run (add `--ends copy` for the seed's ends); \
         `--scenario pulse-train` is a periodic stimulus instead (v(L, t) = 1 for 5 of every \
         100 time units), which starts one pulse per stimulus for other parameters too."
            .into(),
    );
    e.notes.push(
        "The seed draws a space-time picture; the chart shows v(x) at four times (every 8th \
         node), the table summarises the train: pulses in the domain at t = 306.19, the time \
         between pulses at x = 150 and the fitted speed (negative: leftwards)."
            .into(),
    );
    e.figure = Some(profiles_figure(
        "v(x) at t = 76.55, 153.1, 229.64, 306.19 (constant input at x = 200)",
    ));
    Ok(e)
}

/// `fhn-fig2-gaussian`: the seed's Fig. 2. The Gaussian `exp(-(x - 100)^2 / 10)` with the
/// seed's parameters, explicit scheme, to `t = 300`, with both end discretisations: profiles
/// at four times, and per variant the time the centre collapses (first falls below 1/2 after
/// the start), the pulse speed and the time the pulses vanish (`max v < 1/2`).
///
/// # Errors
/// A run failing (none expected).
pub fn fig2_gaussian(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = seed_experiment(
        "fhn-fig2-gaussian",
        "Fig. 2: the impulse v_0(x) = exp(-(x - 100)^2 / 10) at t = 0 grows axially \
        before its peak collapses at t = 37.85, giving rise to two stable impulses that travel \
        in opposite directions before vanishing at t = 242.98 at the boundaries, leaving the \
        axon at rest. Same parameters as Fig. 1.",
    );
    e.seed_rows.push(
        Row::new()
            .with("kind", "summary")
            .with("t_collapse", 37.85)
            .with("t_vanish", 242.98),
    );
    let p = FhnParams {
        t_end: 300.0,
        ..FhnParams::default()
    };
    let snaps = 600;
    let times = [0.0, 37.85, 100.0, 200.0];
    let centre = p.n / 2;
    for (ends, b) in ENDS {
        ctx.progress(&format!("Gaussian impulse, {ends} ends"));
        let sim = explicit_with_ends(Scenario::Gaussian, p, b, snaps, "the Gaussian run")?;
        if ends == "mirror" {
            profile_rows(&sim, ends, &times, 8, &mut e.rows);
        }
        let collapse = (1..sim.times.len())
            .find(|&k| sim.v[k][centre] < 0.5)
            .map(|k| sim.times[k]);
        let vanish = (1..sim.times.len())
            .find(|&k| sim.v[k].iter().all(|&v| v < 0.5))
            .map(|k| sim.times[k]);
        e.rows.push(
            Row::new()
                .with("kind", "summary")
                .with("ends", ends)
                .with("t_collapse", collapse)
                .with("t_vanish", vanish)
                .with("speed", sim.speed)
                .with(
                    "v_max_end",
                    sim.v
                        .last()
                        .map(|v| v.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
                ),
        );
    }
    e.notes.push(ENDS_NOTE.into());
    e.notes.push(LIMIT_NOTE.into());
    e.notes.push(
        "t_collapse: the first snapshot (every 0.5) where v at x = 100 is below 1/2; t_vanish: \
         the first where v < 1/2 everywhere. The seed does not define its two times; these \
         are our reading of them."
            .into(),
    );
    e.figure = Some(profiles_figure("v(x) at t = 0, 37.85, 100, 200"));
    Ok(e)
}

/// The chart of `v(x)` profiles, one line per snapshot time, titled `title`.
fn profiles_figure(title: &str) -> FigureSpec {
    FigureSpec::lines("x", &["v"])
        .title(title)
        .series(&["t"])
        .labels("x", "v")
}
