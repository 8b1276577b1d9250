//! Tests of the implicit scheme: Crank–Nicolson against the explicit scheme, every solver
//! alike, Newton's convergence and its errors, the seed's variant, and the GPU against the CPU.

use super::*;
use crate::explicit_run;
use crate::test_support::{half_spaced, on_grid, stepped};
use gpu_runtime::GpuError;
use gpu_runtime::testing::runs_out_of_memory;

#[test]
fn agrees_with_explicit_for_small_dt() {
    let p = FhnParams {
        right: Boundary::Dirichlet(1.0),
        ..stepped(101, 50.0, 0.01)
    };
    let mut s = FhnState::rest(101);
    for (i, v) in s.v.iter_mut().enumerate() {
        let x = i as f64 * 0.5;
        *v = (-(x - 25.0) * (x - 25.0) / 10.0).exp();
    }
    s.apply_boundaries(&p);
    let mut e = s.clone();
    let stats = implicit_run(&p, &mut s, 500, NewtonOptions::default(), Exec::Cpu).unwrap();
    explicit_run(&p, &mut e, 500, Exec::Cpu).unwrap();
    let diff =
        s.v.iter()
            .zip(&e.v)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
    assert!(diff < 2e-3, "CN vs explicit differ by {diff}");
    assert!((s.t - 5.0).abs() < 1e-9);
    assert!(stats.max_iterations_per_step >= 1 && stats.max_iterations_per_step < 8);
    assert_eq!(s.v[100], 1.0);
}

#[test]
fn all_solvers_give_the_same_run() {
    let p = stepped(77, 38.0, 0.4);
    let mut base = FhnState::rest(77);
    base.v[30] = 1.0;
    base.v[31] = 0.8;
    let mut runs = Vec::new();
    for solver in [
        TridiagSolver::Thomas,
        TridiagSolver::CyclicReduction,
        TridiagSolver::Pcr,
    ] {
        let mut s = base.clone();
        implicit_run(
            &p,
            &mut s,
            30,
            NewtonOptions {
                solver,
                ..NewtonOptions::default()
            },
            Exec::Cpu,
        )
        .unwrap();
        runs.push(s);
    }
    for r in &runs[1..] {
        for (a, b) in r.v.iter().zip(&runs[0].v) {
            assert!((a - b).abs() < 1e-9);
        }
    }
}

#[test]
fn newton_non_convergence_is_an_error() {
    let p = stepped(41, 20.0, 0.5);
    let mut s = FhnState::rest(41);
    s.v[20] = 1.0;
    let opts = NewtonOptions {
        max_iter: 1,
        ..NewtonOptions::default()
    };
    match implicit_run(&p, &mut s, 3, opts, Exec::Cpu) {
        Err(PdeError::NewtonNotConverged {
            step: 0,
            iterations: 1,
            ..
        }) => {}
        other => panic!("expected NewtonNotConverged, got {other:?}"),
    }
    let bad = NewtonOptions {
        tol: 0.0,
        ..NewtonOptions::default()
    };
    assert!(matches!(
        implicit_run(&p, &mut s, 1, bad, Exec::Cpu),
        Err(PdeError::InvalidParameter { .. })
    ));
}

#[test]
fn update_norm_never_misses_a_non_finite_update() {
    assert_eq!(update_norm(&[]), 0.0);
    assert_eq!(update_norm(&[-3.0, 2.0, -0.0]), 3.0);
    assert_eq!(update_norm(&[1.0, f64::NEG_INFINITY, 2.0]), f64::INFINITY);
    // f64::max would skip the NaN and report 2.
    assert!(update_norm(&[1.0, f64::NAN, 2.0, f64::INFINITY]).is_nan());
}

fn gaussian_start(n: usize) -> FhnState {
    let mut s = FhnState::rest(n);
    for (i, (v, w)) in s.v.iter_mut().zip(&mut s.w).enumerate() {
        let x = i as f64 - n as f64 / 3.0;
        *v = (-x * x / 20.0).exp();
        *w = 0.02 * (0.1 * i as f64).sin();
    }
    s
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn gpu_out_of_memory_is_a_typed_error() {
    let p = FhnParams::default();
    let mut state = gaussian_start(p.n);
    let before = state.clone();
    let run = || {
        [implicit_run(
            &p,
            &mut state,
            3,
            NewtonOptions::default(),
            Exec::Cuda,
        )]
    };
    if !runs_out_of_memory(1024, run, |e| {
        matches!(e, PdeError::Gpu(GpuError::OutOfMemory { .. }))
    }) {
        return;
    }
    assert_eq!(
        state.v, before.v,
        "the state is untouched when the GPU run fails"
    );
}

#[test]
fn newton_trace_converges_quadratically_on_cpu_and_gpu() {
    let p = FhnParams {
        dt: 0.25,
        ..FhnParams::default()
    };
    let start = gaussian_start(p.n);
    let opts = NewtonOptions {
        tol: 1e-14,
        ..NewtonOptions::default()
    };
    let mut s = start.clone();
    let cpu = newton_trace(&p, &mut s, opts, Exec::Cpu).unwrap();
    assert!(cpu.len() >= 3 && *cpu.last().unwrap() <= 1e-14, "{cpu:?}");
    assert_eq!(s.t, p.dt);
    for w in cpu.windows(2).filter(|w| w[1] > 1e-13) {
        assert!(w[1] < w[0] * w[0] * 10.0, "{cpu:?}");
    }
    // the step equals implicit_run's
    let mut r = start.clone();
    implicit_run(&p, &mut r, 1, opts, Exec::Cpu).unwrap();
    assert_eq!(r.v, s.v);
    // too few iterations: the norms come back, the state does not advance
    let mut u = start.clone();
    let short = NewtonOptions {
        max_iter: 2,
        ..opts
    };
    let two = newton_trace(&p, &mut u, short, Exec::Cpu).unwrap();
    assert_eq!((two.len(), u.t), (2, 0.0));
    let Some(_gpu) = gpu_runtime::testing::gpu_for_test("pde newton_trace gpu") else {
        return;
    };
    let mut g = start.clone();
    let gpu = newton_trace(&p, &mut g, opts, Exec::Cuda).unwrap();
    assert_eq!(gpu.len(), cpu.len());
    for (a, b) in gpu.iter().zip(&cpu).filter(|(_, b)| **b > 1e-12) {
        assert!((a - b).abs() <= 1e-9 * b, "{gpu:?} {cpu:?}");
    }
    assert!(max_diff(&g.v, &s.v) < 1e-12);
}

#[test]
fn gpu_matches_cpu() {
    let Some(_gpu) = gpu_runtime::testing::gpu_for_test("pde implicit gpu_matches_cpu") else {
        return;
    };
    let src = |x: f64, t: f64| (1e-3 * (x + t).sin(), 1e-4 * (x - t).cos());
    for (n, left, right, solver, with_source) in [
        (
            3,
            Boundary::NoFlux,
            Boundary::NoFlux,
            TridiagSolver::Thomas,
            false,
        ),
        (
            257,
            Boundary::NoFlux,
            Boundary::Dirichlet(1.0),
            TridiagSolver::Pcr,
            false,
        ),
        (
            257,
            Boundary::NoFlux,
            Boundary::NoFlux,
            TridiagSolver::CyclicReduction,
            true,
        ),
        (
            1024,
            Boundary::Dirichlet(0.25),
            Boundary::Dirichlet(1.0),
            TridiagSolver::Thomas,
            false,
        ),
        (
            1025,
            Boundary::NoFlux,
            Boundary::Dirichlet(1.0),
            TridiagSolver::Thomas,
            true,
        ),
        (
            (1 << 16) + 1,
            Boundary::NoFlux,
            Boundary::NoFlux,
            TridiagSolver::Pcr,
            false,
        ),
    ] {
        let p = FhnParams {
            dt: 0.5,
            left,
            right,
            ..half_spaced(n)
        };
        let opts = NewtonOptions {
            solver,
            ..NewtonOptions::default()
        };
        let source = with_source.then_some(&src as Source<'_>);
        let mut cpu = gaussian_start(n);
        let mut gpu = cpu.clone();
        let sc = implicit_run_with_source(&p, &mut cpu, 6, opts, Exec::Cpu, source).unwrap();
        let sg = implicit_run_with_source(&p, &mut gpu, 6, opts, Exec::Cuda, source).unwrap();
        assert_eq!(sg.backend, Backend::Cuda);
        assert_eq!(sc.backend, Backend::Cpu);
        assert_eq!(
            sg.newton_iterations, sc.newton_iterations,
            "n {n} {solver:?}"
        );
        assert_eq!(gpu.t, cpu.t);
        let (dv, dw) = (max_diff(&gpu.v, &cpu.v), max_diff(&gpu.w, &cpu.w));
        assert!(
            dv < 1e-11 && dw < 1e-11,
            "n {n} {solver:?}: v {dv:e}, w {dw:e}"
        );
    }
    // Non-convergence is the same error on both paths, and the state is the last completed
    // step (here the start).
    let p = stepped(2049, 1024.0, 0.5);
    let opts = NewtonOptions {
        max_iter: 1,
        ..NewtonOptions::default()
    };
    let start = gaussian_start(p.n);
    for exec in [Exec::Cpu, Exec::Cuda] {
        let mut s = start.clone();
        match implicit_run(&p, &mut s, 3, opts, exec) {
            Err(PdeError::NewtonNotConverged {
                step: 0,
                iterations: 1,
                ..
            }) => {}
            other => panic!("{exec:?}: expected NewtonNotConverged, got {other:?}"),
        }
        assert_eq!(s, start, "{exec:?}");
    }
}

/// The seed's residual at node `i` (interior), written out from the post's equation.
fn seed_residual(
    p: &FhnParams,
    v: &[f64],
    w: &[f64],
    big_v: &[f64],
    big_w: &[f64],
    i: usize,
) -> f64 {
    let (dt, dx2) = (p.dt, p.dx() * p.dx());
    let f = |u: f64| u * (1.0 - u) * (u - p.a);
    big_v[i] / dt
        - 0.5 * ((big_v[i + 1] - 2.0 * big_v[i] + big_v[i - 1]) / dx2 + f(big_v[i]))
        - (v[i] / dt
            + 0.5 * ((v[i + 1] - 2.0 * v[i] + v[i - 1]) / dx2 + f(v[i]))
            + 0.5 * (-w[i] - big_w[i]))
}

fn seed_opts() -> NewtonOptions {
    NewtonOptions {
        tol: 1e-13,
        variant: ImplicitVariant::SeedLeapfrog,
        ..NewtonOptions::default()
    }
}

#[test]
fn seed_variant_steps_solve_the_seeds_equations() {
    let p = FhnParams {
        eps: 0.3,
        ..stepped(6, 2.5, 0.1)
    };
    let mut s = FhnState::rest(6);
    s.v = vec![0.9, 0.7, 0.4, 0.2, 0.1, 0.05];
    s.w = vec![0.01, 0.02, 0.0, -0.01, 0.03, 0.0];
    let (v0, w0) = (s.v.clone(), s.w.clone());
    // One run of two steps: the first starts w with forward Euler, the second leapfrogs.
    let mut one = s.clone();
    implicit_run(&p, &mut one, 1, seed_opts(), Exec::Cpu).unwrap();
    let (v1, w1) = (one.v.clone(), one.w.clone());
    let stats = implicit_run(&p, &mut s, 2, seed_opts(), Exec::Cpu).unwrap();
    assert_eq!(stats.backend, Backend::Cpu);
    assert!((s.t - 0.2).abs() < 1e-15);
    for i in 0..6 {
        let euler = w0[i] + p.dt * p.eps * (v0[i] - p.gamma * w0[i]);
        assert!((w1[i] - euler).abs() < 1e-15, "w^1 at {i}");
        let leap = 2.0 * p.dt * p.eps * (v1[i] - p.gamma * w1[i]) + w0[i];
        assert!((s.w[i] - leap).abs() < 1e-15, "w^2 at {i}");
    }
    for i in 1..5 {
        let r1 = seed_residual(&p, &v0, &w0, &v1, &w1, i);
        let r2 = seed_residual(&p, &v1, &w1, &s.v, &s.w, i);
        assert!(
            r1.abs() < 1e-10 && r2.abs() < 1e-10,
            "node {i}: {r1:e} {r2:e}"
        );
    }
    // the seed's ends: v_0 = v_1, v_{N-1} = v_{N-2}
    assert!((s.v[0] - s.v[1]).abs() < 1e-12 && (s.v[5] - s.v[4]).abs() < 1e-12);
    // ...and it differs from ours
    let mut ours = FhnState {
        v: v0,
        w: w0,
        t: 0.0,
    };
    implicit_run(&p, &mut ours, 2, NewtonOptions::default(), Exec::Cpu).unwrap();
    assert!(max_diff(&ours.v, &s.v) > 1e-4);
}

#[test]
fn seed_variant_newton_is_q_linear() {
    // The (1, 1) end rows are not the derivative of v_0 - v_1: convergence is linear.
    let p = FhnParams {
        dt: 0.25,
        ..FhnParams::default()
    };
    let mut s = gaussian_start(p.n);
    let opts = NewtonOptions {
        tol: 1e-14,
        max_iter: 200,
        ..seed_opts()
    };
    let norms = newton_trace(&p, &mut s, opts, Exec::Cpu).unwrap();
    assert!(*norms.last().unwrap() <= 1e-14, "{norms:?}");
    let ratios: Vec<f64> = norms
        .windows(2)
        .filter(|w| w[1] > 1e-12)
        .map(|w| w[1] / w[0])
        .collect();
    assert!(ratios.iter().all(|&r| r < 1.0), "{norms:?}");
    assert!(
        ratios.len() >= 4,
        "more than a quadratic handful: {norms:?}"
    );
}

#[test]
fn seed_variant_is_second_order_in_dt() {
    // The seed's Fig. 10: order 2 in dt.
    let base = on_grid(101, 50.0, 2.0);
    let run = |dt: f64| {
        let p = FhnParams { dt, ..base };
        let mut s = FhnState::rest(p.n);
        for (i, v) in s.v.iter_mut().enumerate() {
            let x = i as f64 * 0.5 - 25.0;
            *v = (-x * x / 10.0).exp();
        }
        implicit_run(&p, &mut s, p.steps(), seed_opts(), Exec::Cpu).unwrap();
        s.v
    };
    let reference = run(0.2 / 128.0);
    let errs: Vec<f64> = [0.2, 0.1, 0.05]
        .iter()
        .map(|&dt| max_diff(&run(dt), &reference))
        .collect();
    for e in errs.windows(2) {
        let order = (e[0] / e[1]).log2();
        assert!((1.7..2.4).contains(&order), "{errs:?}");
    }
}

#[test]
fn seed_variant_refuses_the_gpu_and_sources() {
    let p = FhnParams::default();
    let mut s = gaussian_start(p.n);
    let before = s.clone();
    for r in [
        implicit_run(&p, &mut s, 1, seed_opts(), Exec::Cuda).map(|_| ()),
        newton_trace(&p, &mut s, seed_opts(), Exec::Cuda).map(|_| ()),
        implicit_run_with_source(
            &p,
            &mut s,
            1,
            seed_opts(),
            Exec::Cpu,
            Some(&|_, _| (0.0, 0.0)),
        )
        .map(|_| ()),
    ] {
        assert!(
            matches!(
                r,
                Err(PdeError::InvalidParameter {
                    name: "implicit variant",
                    ..
                })
            ),
            "{r:?}"
        );
    }
    assert_eq!(s, before);
    // copy ends are the seed variant's own ends, so they are accepted there
    let q = FhnParams {
        left: Boundary::Copy,
        right: Boundary::Copy,
        ..p
    };
    implicit_run(&q, &mut s, 2, seed_opts(), Exec::Auto).unwrap();
    assert!(implicit_run(&q, &mut s, 1, NewtonOptions::default(), Exec::Cpu).is_err());
}

#[test]
fn large_dt_stays_bounded() {
    // 20x the explicit limit: CN stays bounded where forward Euler would blow up.
    let p = FhnParams {
        dt: 2.5,
        ..FhnParams::default()
    };
    let mut s = FhnState::rest(p.n);
    s.v[200] = 1.0;
    implicit_run(&p, &mut s, 40, NewtonOptions::default(), Exec::Cpu).unwrap();
    assert!(s.v.iter().all(|v| v.is_finite() && v.abs() < 2.0));
}
