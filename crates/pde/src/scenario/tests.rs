//! Tests of the scenarios and the simulation driver: snapshots (kept and streamed), the speed
//! fits, the pulse train and its stimulus, and the GPU against the CPU.

use super::*;
use crate::explicit_run;
use crate::test_support::{half_spaced, on_grid, simulate_explicit, until};

#[test]
fn constant_input_holds_the_end_at_one_and_sends_pulses_left() {
    let p = until(250.0);
    let sim = simulate_explicit(Scenario::Constant, p, 50);
    assert_eq!(sim.params.right, Boundary::Dirichlet(1.0));
    assert!(sim.v.iter().all(|v| v[p.n - 1] == 1.0));
    assert!(sim.speed.unwrap() < -0.5, "{:?}", sim.speed);
    // the seed's ends are kept where the scenario needs no flux
    let copy = FhnParams {
        left: Boundary::Copy,
        right: Boundary::Copy,
        ..p
    };
    let q = Scenario::Constant.params(copy);
    assert_eq!(
        (q.left, q.right),
        (Boundary::Copy, Boundary::Dirichlet(1.0))
    );
    assert_eq!(Scenario::Front.params(copy).right, Boundary::Copy);
    assert_eq!(Scenario::Constant.name(), "constant");
}

#[test]
fn snapshot_count_is_capped() {
    let p = on_grid(41, 20.0, 0.5);
    let sim = simulate_explicit(Scenario::Gaussian, p, 1_000_000);
    assert_eq!(sim.times.len(), 11); // 10 steps: one snapshot each, plus the start
    let sim = simulate_explicit(Scenario::Gaussian, FhnParams { t_end: 0.0, ..p }, 5);
    assert_eq!(sim.times, vec![0.0]);
}

/// Snapshots on a time-blocked grid fall on whole blocks and give the same final state.
#[test]
fn snapshots_do_not_cut_time_blocks_short() {
    let n = (1 << 15) + 1 + crate::FUSED_MAX_N.max(1 << 15);
    let p = FhnParams {
        t_end: 100.0 * 0.05,
        ..half_spaced(n)
    };
    let sim = simulate_explicit(Scenario::Gaussian, p, 10);
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
    let c = nagumo_speed(FhnParams::default().a);
    let p = until(80.0);
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

/// The speed measured on the fly (`simulate_streamed`, nothing kept) is the speed the
/// kept snapshots give (the front tracked on each stored snapshot and fitted), for every
/// scenario and scheme, and on a grid large enough for the time-blocked path.
#[test]
fn streamed_speed_equals_the_speed_of_kept_snapshots() {
    let large = on_grid(40_001, 20_000.0, 20.0);
    let mut cases = vec![(Scenario::Gaussian, large, Scheme::Explicit, 7)];
    for sc in [
        Scenario::Gaussian,
        Scenario::PulseTrain,
        Scenario::Constant,
        Scenario::Front,
    ] {
        for (scheme, dt) in [
            (Scheme::Explicit, 0.05),
            (Scheme::Adaptive(AdaptiveOptions::default()), 0.05),
            (Scheme::Implicit(NewtonOptions::default()), 0.25),
        ] {
            let p = FhnParams {
                t_end: 60.0,
                dt,
                ..FhnParams::default()
            };
            cases.push((sc, p, scheme, 30));
        }
    }
    let mut fitted = 0;
    for (sc, p, scheme, snaps) in cases {
        let kept = simulate(sc, p, scheme, Exec::Cpu, snaps, &mut |_, _| {}).unwrap();
        let rightmost = sc.tracks_rightmost();
        let track: Vec<(f64, f64)> = kept
            .times
            .iter()
            .zip(&kept.v)
            .filter_map(|(&t, v)| crossing(&kept.x, v, 0.5, rightmost).map(|x| (t, x)))
            .collect();
        let from_snapshots = fit_speed(&track, p.length, 0.05 * p.length);
        let streamed = simulate_streamed(
            sc,
            p,
            sc.stimulus(),
            scheme,
            Exec::Cpu,
            snaps,
            &mut (),
            &mut |_, _| {},
        )
        .unwrap();
        let case = format!("{sc:?} {scheme:?} n = {}", p.n);
        assert_eq!(streamed.track, track, "{case}");
        assert_eq!(streamed.speed, from_snapshots, "{case}");
        assert_eq!(kept.speed, from_snapshots, "{case}");
        assert_eq!(&streamed.state.v, kept.v.last().unwrap(), "{case}");
        assert_eq!(streamed.snapshots, kept.times.len(), "{case}");
        fitted += usize::from(from_snapshots.is_some());
    }
    assert!(fitted >= 10, "only {fitted} cases measured a speed");
}

#[test]
fn a_sink_error_stops_the_run() {
    struct Refuse;
    impl SnapshotSink for Refuse {
        fn snapshot(&mut self, t: f64, _: &[f64], _: &[f64]) -> Result<(), PdeError> {
            if t > 0.0 {
                Err(PdeError::Output("disk full".into()))
            } else {
                Ok(())
            }
        }
    }
    let p = until(5.0);
    let e = simulate_streamed(
        Scenario::Gaussian,
        p,
        None,
        Scheme::Explicit,
        Exec::Cpu,
        4,
        &mut Refuse,
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("disk full"), "{e}");
}

#[test]
fn gaussian_splits_into_two_pulses() {
    let p = until(60.0);
    let sim = run(
        Scenario::Gaussian,
        p,
        Scenario::Gaussian.stimulus(),
        Scheme::Explicit,
        30,
    )
    .unwrap();
    let last = sim.v.last().unwrap();
    // symmetric: two pulses
    for i in 0..p.n {
        assert!((last[i] - last[p.n - 1 - i]).abs() < 1e-9);
    }
    assert!(sim.speed.unwrap() > 0.2);
    assert_eq!(pulses(&sim.x, last, 10.0).len(), 2);
}

/// `scenario` on the CPU with `stimulus` at `x = L`.
fn run(
    scenario: Scenario,
    p: FhnParams,
    stimulus: Option<Stimulus>,
    scheme: Scheme,
    snapshots: usize,
) -> Result<Simulation, PdeError> {
    simulate_with_stimulus(
        scenario,
        p,
        stimulus,
        scheme,
        Exec::Cpu,
        snapshots,
        &mut |_, _| {},
    )
}

/// The pulse train with its own stimulus, on the CPU.
fn train(p: FhnParams, scheme: Scheme, snapshots: usize) -> Simulation {
    run(
        Scenario::PulseTrain,
        p,
        Scenario::PulseTrain.stimulus(),
        scheme,
        snapshots,
    )
    .unwrap()
}

/// Positions of the pulses in `v`: local maxima above 1/2, more than `edge` from the ends.
fn pulses(x: &[f64], v: &[f64], edge: f64) -> Vec<f64> {
    (1..v.len() - 1)
        .filter(|&i| v[i] > 0.5 && v[i] >= v[i - 1] && v[i] > v[i + 1])
        .map(|i| x[i])
        .filter(|&p| p > edge && p < x[x.len() - 1] - edge)
        .collect()
}

/// Times at which `v` at node `i` rises through 1/2: one per pulse passing the node.
fn arrivals(sim: &Simulation, i: usize) -> Vec<f64> {
    sim.v
        .windows(2)
        .zip(sim.times.windows(2))
        .filter(|(v, _)| v[0][i] < 0.5 && v[1][i] >= 0.5)
        .map(|(_, t)| t[1])
        .collect()
}

/// The pulse train is a train: with the seed's parameters every stimulus (one per 100
/// time units) starts a pulse, and the pulses pass two probes in turn, one period apart,
/// travelling left at one speed.
#[test]
fn pulse_train_sends_a_pulse_every_period() {
    let p = until(600.0);
    let sim = train(p, Scheme::Explicit, 600);
    assert_eq!(sim.stimulus, Some(Stimulus::PULSE_TRAIN));
    let (near, far) = (300, 100); // x = 150 and x = 50
    let (a, b) = (arrivals(&sim, near), arrivals(&sim, far));
    assert!(a.len() >= 5, "pulses passing x = 150: {a:?}");
    assert!(b.len() >= 3, "pulses passing x = 50: {b:?}");
    for w in a.windows(2).chain(b.windows(2)) {
        let gap = w[1] - w[0];
        assert!(
            (gap - 100.0).abs() <= 3.0,
            "one pulse per period: {a:?} {b:?}"
        );
    }
    // the same pulses, 100 length units further left, later by 100 / speed
    let speed = 100.0 / (b[0] - a[0]);
    assert!((0.55..0.75).contains(&speed), "{speed}");
    let fitted = sim.speed.unwrap();
    assert!((fitted + speed).abs() < 0.05, "{fitted} vs -{speed}");
    // several pulses in the domain at once, one wavelength apart
    let last = pulses(&sim.x, sim.v.last().unwrap(), 5.0);
    assert!(last.len() >= 3, "{last:?}");
    for w in last.windows(2) {
        assert!((w[1] - w[0] - 100.0 * speed).abs() < 8.0, "{last:?}");
    }
    // the end is held at 1 during a stimulus, free between stimuli
    let at = |t: f64| {
        sim.times
            .iter()
            .position(|&s| (s - t).abs() < 1e-6)
            .unwrap()
    };
    assert_eq!(sim.v[0][p.n - 1], 1.0, "stimulated from t = 0");
    assert_eq!(sim.v[at(203.0)][p.n - 1], 1.0);
    assert!(sim.v[at(250.0)][p.n - 1] < 0.5);
}

/// Every scheme makes the train, and so does another stimulus period; with the old
/// defaults (a = 0.1, gamma = 0.5) the end needs longer to recover, so a stimulus every 200
/// time units starts a train there.
#[test]
fn pulse_train_for_every_scheme_and_stimulus() {
    let p = until(300.0);
    for scheme in [
        Scheme::Adaptive(AdaptiveOptions::default()),
        Scheme::Implicit(NewtonOptions::default()),
    ] {
        let p = if let Scheme::Implicit(_) = scheme {
            FhnParams { dt: 0.25, ..p }
        } else {
            p
        };
        let sim = train(p, scheme, 300);
        let a = arrivals(&sim, 300);
        assert!(a.len() >= 2, "{scheme:?}: {a:?}");
        assert!((a[1] - a[0] - 100.0).abs() <= 3.0, "{scheme:?}: {a:?}");
    }
    let slow = Stimulus {
        period: 200.0,
        ..Stimulus::PULSE_TRAIN
    };
    let old = FhnParams {
        a: 0.1,
        gamma: 0.5,
        t_end: 650.0,
        ..FhnParams::default()
    };
    let sim = run(Scenario::PulseTrain, old, Some(slow), Scheme::Explicit, 650).unwrap();
    let a = arrivals(&sim, 300);
    assert!(a.len() >= 3, "{a:?}");
    assert!((a[1] - a[0] - 200.0).abs() <= 3.0, "{a:?}");
    // a constant input there starts one pulse only (the scenario's old behaviour)
    let constant = Stimulus {
        period: 100.0,
        duration: 100.0,
        ..Stimulus::PULSE_TRAIN
    };
    let sim = run(
        Scenario::PulseTrain,
        old,
        Some(constant),
        Scheme::Explicit,
        650,
    )
    .unwrap();
    assert_eq!(arrivals(&sim, 300).len(), 1);
    assert!(sim.v.iter().all(|v| v[p.n - 1] == 1.0));
}

/// The stimulated run on the GPU (explicit and implicit, one run of the scheme per
/// stimulus phase) agrees with the CPU.
#[test]
fn gpu_pulse_train_matches_cpu() {
    let Some(_gpu) = gpu_runtime::testing::gpu_for_test("pde gpu_pulse_train_matches_cpu") else {
        return;
    };
    let p = until(12.0);
    for scheme in [Scheme::Explicit, Scheme::Implicit(NewtonOptions::default())] {
        let sc = Scenario::PulseTrain;
        let run_on = |exec| simulate(sc, p, scheme, exec, 6, &mut |_, _| {}).unwrap();
        let (cpu, gpu) = (run_on(Exec::Cpu), run_on(Exec::Cuda));
        assert_eq!(gpu.backend, Backend::Cuda);
        assert_eq!(cpu.times, gpu.times);
        for (a, b) in cpu.v.iter().zip(&gpu.v) {
            for (x, y) in a.iter().zip(b) {
                assert!((x - y).abs() <= 1e-9, "{scheme:?}: {x} vs {y}");
            }
        }
        assert_eq!(gpu.v[1][p.n - 1], 1.0); // t = 2: stimulated
        assert!(gpu.v[3][p.n - 1] < 1.0); // t = 6: free
    }
}

#[test]
fn stimulus_is_validated_and_switches_on_time() {
    let p = until(1.0);
    for bad in [
        Stimulus {
            period: 0.0,
            ..Stimulus::PULSE_TRAIN
        },
        Stimulus {
            duration: 0.0,
            ..Stimulus::PULSE_TRAIN
        },
        Stimulus {
            duration: 101.0,
            ..Stimulus::PULSE_TRAIN
        },
        Stimulus {
            value: f64::NAN,
            ..Stimulus::PULSE_TRAIN
        },
    ] {
        let e = run(Scenario::PulseTrain, p, Some(bad), Scheme::Explicit, 1);
        assert!(
            matches!(e, Err(PdeError::InvalidParameter { .. })),
            "{bad:?}"
        );
    }
    let s = Stimulus::PULSE_TRAIN;
    assert_eq!(s.next_switch(0.0), 5.0);
    assert_eq!(s.next_switch(5.0), 100.0);
    assert_eq!(s.next_switch(250.0), 300.0);
    // a stimulus of 5 time units is 100 steps of 0.05 and 50 steps of 0.1, whatever the
    // snapshot count: the end is excited for exactly those steps
    for (dt, on_steps) in [(0.05, 100usize), (0.1, 50)] {
        let p = FhnParams {
            t_end: 10.0,
            dt,
            ..FhnParams::default()
        };
        let sim = train(p, Scheme::Explicit, 1000);
        let held = sim.v[1..].iter().filter(|v| v[p.n - 1] == 1.0).count();
        assert_eq!(held, on_steps, "dt {dt}");
    }
}
