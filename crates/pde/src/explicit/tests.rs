//! Tests of the explicit scheme: the fused, parallel, batch and time-blocked paths against
//! the reference step, the stability limit, the seed's copied ends, bad inputs, and the GPU
//! against the CPU.

use super::*;
use crate::test_support::{half_spaced, stepped};
use gpu_runtime::GpuError;
use gpu_runtime::testing::runs_out_of_memory;
use proptest::prelude::*;

fn reference_steps(p: &FhnParams, s: &mut FhnState, steps: u64) {
    let mut vn = vec![0.0; p.n];
    let mut wn = vec![0.0; p.n];
    for _ in 0..steps {
        explicit_step_reference(p, &s.v, &s.w, &mut vn, &mut wn).unwrap();
        std::mem::swap(&mut s.v, &mut vn);
        std::mem::swap(&mut s.w, &mut wn);
    }
    s.t += steps as f64 * p.dt;
}

fn bumpy(n: usize, seed: u64) -> FhnState {
    let mut s = FhnState::rest(n);
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.v[i] = (x % 1000) as f64 / 1000.0 * 1.1 - 0.1;
        s.w[i] = (x % 977) as f64 / 977.0 * 0.2;
    }
    s
}

/// A [`bumpy`] start on `p`'s grid with `p`'s boundaries applied, and that start advanced
/// `steps` steps by the reference.
fn bumpy_and_reference(p: &FhnParams, seed: u64, steps: u64) -> (FhnState, FhnState) {
    let mut s = bumpy(p.n, seed);
    s.apply_boundaries(p);
    let mut r = s.clone();
    reference_steps(p, &mut r, steps);
    (s, r)
}

/// Grid sizes from `n`, step counts from `steps` and any seed for [`bumpy`].
fn bumpy_runs(
    n: std::ops::Range<usize>,
    steps: std::ops::Range<u64>,
) -> impl Strategy<Value = (usize, u64, u64)> {
    (n, steps, any::<u64>())
}

#[test]
fn fused_and_parallel_match_reference_bit_for_bit() {
    for (n, right) in [
        (3, Boundary::NoFlux),
        (4, Boundary::Dirichlet(1.0)),
        (31, Boundary::NoFlux),
        (32, Boundary::Dirichlet(1.0)),
        (33, Boundary::NoFlux),
        (401, Boundary::Dirichlet(1.0)),
        (1023, Boundary::NoFlux),
        (1024, Boundary::NoFlux),
        (1025, Boundary::NoFlux),
        (PARALLEL_THRESHOLD + 7, Boundary::Dirichlet(0.5)),
        (3 * CHUNK + 5, Boundary::NoFlux),
        (2 * CHUNK, Boundary::Dirichlet(0.3)),
        (CHUNK + 1, Boundary::NoFlux),
    ] {
        let p = FhnParams {
            right,
            left: if n % 2 == 0 {
                Boundary::Dirichlet(0.2)
            } else {
                Boundary::NoFlux
            },
            ..half_spaced(n)
        };
        let steps = if n > 20_000 { 3 } else { 37 };
        let (mut s, r) = bumpy_and_reference(&p, n as u64, steps);
        let mut s2 = s.clone();
        explicit_run(&p, &mut s, steps, Exec::Cpu).unwrap();
        assert_eq!(s.v, r.v, "v, n = {n}");
        assert_eq!(s.w, r.w, "w, n = {n}");
        // the other CPU path on the same data
        let k = Coeffs::new(&p, p.dx());
        if n < PARALLEL_THRESHOLD {
            run_parallel(
                &k,
                &mut s2.v,
                &mut s2.w,
                steps,
                &mut ExplicitScratch::default(),
            );
        } else {
            run_serial(&k, &mut s2.v, &mut s2.w, steps);
        }
        assert_eq!(s2.v, r.v, "other path v, n = {n}");
    }
}

#[test]
fn batch_matches_single_runs() {
    let p = half_spaced(97);
    let batch = 5;
    let mut v = Vec::new();
    let mut w = Vec::new();
    let mut singles = Vec::new();
    for b in 0..batch {
        let s = bumpy(97, b as u64 + 1);
        v.extend_from_slice(&s.v);
        w.extend_from_slice(&s.w);
        singles.push(s);
    }
    explicit_run_batch(&p, &mut v, &mut w, batch, 21, Exec::Cpu).unwrap();
    for (b, s) in singles.iter_mut().enumerate() {
        reference_steps(&p, s, 21);
        assert_eq!(&v[b * 97..(b + 1) * 97], &s.v[..]);
        assert_eq!(&w[b * 97..(b + 1) * 97], &s.w[..]);
    }
    assert!(matches!(
        explicit_run_batch(&p, &mut v[..10], &mut w, batch, 1, Exec::Cpu),
        Err(PdeError::LengthMismatch { .. })
    ));
    let mut e: [f64; 0] = [];
    let mut e2: [f64; 0] = [];
    assert_eq!(
        explicit_run_batch(&p, &mut e, &mut e2, 0, 5, Exec::Cpu).unwrap(),
        Backend::Cpu
    );
}

#[test]
fn dt_above_limit_is_an_error_that_states_the_limit() {
    let p = FhnParams::default();
    let lim = p.stability_limit(p.dx()).dt_max;
    let bad = FhnParams {
        dt: lim * 1.001,
        ..p
    };
    let mut s = FhnState::rest(p.n);
    match explicit_run(&bad, &mut s, 1, Exec::Cpu) {
        Err(PdeError::Unstable { limit, .. }) => assert_eq!(limit, lim),
        other => panic!("expected Unstable, got {other:?}"),
    }
    let msg = explicit_run(&bad, &mut s, 1, Exec::Cpu)
        .unwrap_err()
        .to_string();
    assert!(msg.contains(&format!("{lim:.6}")), "{msg}");
    let ok = FhnParams { dt: lim, ..p };
    explicit_run(&ok, &mut s, 1, Exec::Cpu).unwrap();
}

/// Nagumo (eps = 0) at v = 1, where f'(1) = a - 1 is the minimum of f' over [0, 1]: the
/// checkerboard mode's amplification is exactly 1 + dt (-4/dx^2 + a - 1), so the limit is
/// sharp. Just below it a perturbation decays; just above it grows without bound.
#[test]
fn just_below_the_limit_is_bounded_just_above_blows_up() {
    let p0 = FhnParams {
        n: 64,
        length: 63.0 * 0.5,
        ..FhnParams::nagumo(0.1)
    };
    let lim = p0.stability_limit(p0.dx());
    assert!((lim.reaction - 0.9).abs() < 1e-12);
    let start = |n: usize| {
        let mut s = FhnState::rest(n);
        for (i, v) in s.v.iter_mut().enumerate() {
            *v = 1.0 + if i % 2 == 0 { 1e-6 } else { -1e-6 };
        }
        s
    };
    let below = FhnParams {
        dt: lim.dt_max * 0.98,
        ..p0
    };
    let mut s = start(64);
    explicit_run(&below, &mut s, 3000, Exec::Cpu).unwrap();
    let dev = s.v.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
    assert!(
        dev < 1e-6,
        "below the limit the perturbation must not grow: {dev}"
    );

    // Just above: the checkerboard grows by |1 - 2.04| = 1.04 per step until the cubic
    // term takes over (10^4-fold growth from 1e-6 means the steady state is lost).
    let above = FhnParams {
        dt: lim.dt_max * 1.02,
        ..p0
    };
    let mut s = start(64);
    assert!(explicit_run(&above, &mut s, 1, Exec::Cpu).is_err());
    explicit_run_unchecked(&above, &mut s, 400, Exec::Cpu).unwrap();
    let dev = max_dev(&s.v);
    assert!(
        dev > 1e-2,
        "above the limit the perturbation must grow: {dev}"
    );
    // Further above, the oscillation no longer saturates: values diverge.
    let far = FhnParams {
        dt: lim.dt_max * 1.25,
        ..p0
    };
    let mut s = start(64);
    explicit_run_unchecked(&far, &mut s, 3000, Exec::Cpu).unwrap();
    assert!(max_dev(&s.v) > 1e6, "{}", max_dev(&s.v));
}

fn max_dev(v: &[f64]) -> f64 {
    v.iter().map(|v| (v - 1.0).abs()).fold(
        0.0,
        |m: f64, x| {
            if x.is_nan() { f64::INFINITY } else { m.max(x) }
        },
    )
}

#[test]
fn decaying_activity_never_produces_subnormals() {
    // Tiny activity decays towards rest; without the flush it would pass through the
    // subnormal range (below 2.2e-308) on its way to zero.
    let p = FhnParams {
        a: 0.5,
        eps: 0.1,
        gamma: 1.0,
        ..stepped(65, 32.0, 0.1)
    };
    let mut s = FhnState::rest(65);
    for (i, v) in s.v.iter_mut().enumerate() {
        *v = 1e-20 * (1.0 + i as f64);
    }
    s.w[3] = 1e-22;
    let mut rounds = 0;
    while s.v.iter().chain(&s.w).any(|&x| x != 0.0) {
        explicit_run(&p, &mut s, 10, Exec::Cpu).unwrap();
        assert!(
            s.v.iter().chain(&s.w).all(|x| !x.is_subnormal()),
            "subnormal at t = {}",
            s.t
        );
        rounds += 1;
        assert!(rounds < 5000, "activity never reached exact zero");
    }
    let mut r = FhnState::rest(65);
    r.v[0] = 1e-31;
    let mut vn = vec![1.0; 65];
    let mut wn = vec![1.0; 65];
    explicit_step_reference(&p, &r.v, &r.w, &mut vn, &mut wn).unwrap();
    assert!(vn.iter().all(|&x| x == 0.0));
}

#[test]
fn copy_ends_follow_the_seeds_formulas() {
    // The seed's scheme written out: interior nodes by the stencil, then v_0 = v_1 and
    // v_{N-1} = v_{N-2} (and w likewise).
    let p = FhnParams {
        left: Boundary::Copy,
        right: Boundary::Copy,
        ..stepped(41, 20.0, 0.05)
    };
    let mut s = bumpy(p.n, 7);
    s.apply_boundaries(&p);
    assert_eq!((s.v[0], s.w[0]), (s.v[1], s.w[1]));
    let (mut v, mut w) = (s.v.clone(), s.w.clone());
    let r = p.dt / (p.dx() * p.dx());
    for _ in 0..50 {
        let (mut vn, mut wn) = (v.clone(), w.clone());
        for i in 1..p.n - 1 {
            vn[i] = r * (v[i + 1] - 2.0 * v[i] + v[i - 1])
                + v[i]
                + p.dt * (v[i] * (1.0 - v[i]) * (v[i] - p.a) - w[i]);
            wn[i] = p.dt * p.eps * (v[i] - p.gamma * w[i]) + w[i];
        }
        (vn[0], wn[0]) = (vn[1], wn[1]);
        (vn[p.n - 1], wn[p.n - 1]) = (vn[p.n - 2], wn[p.n - 2]);
        (v, w) = (vn, wn);
    }
    explicit_run(&p, &mut s, 50, Exec::Auto).unwrap();
    for i in 0..p.n {
        assert!(
            (s.v[i] - v[i]).abs() < 1e-13 && (s.w[i] - w[i]).abs() < 1e-13,
            "{i}"
        );
    }
    // a batch of two runs the same way
    let mut s0 = bumpy(p.n, 7);
    s0.apply_boundaries(&p);
    let mut bv = [s0.v.clone(), s0.v.clone()].concat();
    let mut bw = [s0.w.clone(), s0.w.clone()].concat();
    explicit_run_batch(&p, &mut bv, &mut bw, 2, 50, Exec::Cpu).unwrap();
    assert_eq!(&bv[p.n..], &s.v[..]);
    // ends differ from the mirrored ghost node's
    let mut m = s0.clone();
    let mirror = FhnParams {
        left: Boundary::NoFlux,
        right: Boundary::NoFlux,
        ..p
    };
    explicit_run(&mirror, &mut m, 50, Exec::Cpu).unwrap();
    assert!((m.v[0] - s.v[0]).abs() > 1e-9);
    // only the explicit scheme takes copy ends
    let e = crate::implicit_run(&p, &mut s0.clone(), 1, Default::default(), Exec::Cpu);
    assert!(matches!(
        e,
        Err(PdeError::InvalidParameter {
            name: "boundary",
            ..
        })
    ));
    let e = crate::adaptive_run(&p, &mut s0, 1, &Default::default());
    assert!(matches!(
        e,
        Err(PdeError::InvalidParameter {
            name: "boundary",
            ..
        })
    ));
}

#[test]
fn bad_inputs_are_errors() {
    let p = FhnParams::default();
    let mut s = FhnState::rest(10);
    assert!(matches!(
        explicit_run(&p, &mut s, 1, Exec::Cpu),
        Err(PdeError::LengthMismatch {
            expected: 401,
            got: 10
        })
    ));
    for bad in [
        FhnParams { n: 2, ..p },
        FhnParams { dt: -1.0, ..p },
        FhnParams { eps: f64::NAN, ..p },
        FhnParams { length: 0.0, ..p },
    ] {
        let mut s = FhnState::rest(bad.n);
        assert!(matches!(
            explicit_run(&bad, &mut s, 1, Exec::Cpu),
            Err(PdeError::InvalidParameter { .. })
        ));
    }
}

#[test]
fn gpu_out_of_memory_is_a_typed_error() {
    let p = FhnParams::default();
    let mut s = bumpy(p.n, 1);
    s.apply_boundaries(&p);
    let (mut v, mut w) = (s.v.clone(), s.w.clone());
    let run = || [explicit_run_batch(&p, &mut v, &mut w, 1, 10, Exec::Cuda)];
    if !runs_out_of_memory(1024, run, |e| {
        matches!(e, PdeError::Gpu(GpuError::OutOfMemory { .. }))
    }) {
        return;
    }
    assert_eq!(
        (v, w),
        (s.v, s.w),
        "the state is untouched when the GPU run fails"
    );
}

#[test]
fn gpu_matches_cpu() {
    let Some(_gpu) = gpu_runtime::testing::gpu_for_test("pde explicit gpu_matches_cpu") else {
        return;
    };
    for (n, batch) in [
        (3, 1),
        (31, 3),
        (33, 1),
        (401, 7),
        (1025, 2),
        (crate::FUSED_MAX_N, 2),
        (crate::FUSED_MAX_N + 1, 3),
        ((1 << 20) + 1, 1),
    ]
    .into_iter()
    // Under the simulated driver (kernels on one CPU core) the unfused path is covered by
    // FUSED_MAX_N + 1; the 2^20 + 1 case would take minutes.
    .filter(|&(n, _)| n <= gpu_runtime::testing::gpu_test_size(usize::MAX, crate::FUSED_MAX_N + 1))
    {
        let p = FhnParams {
            right: Boundary::Dirichlet(1.0),
            ..half_spaced(n)
        };
        let mut v = Vec::new();
        let mut w = Vec::new();
        for b in 0..batch {
            let mut s = bumpy(n, (n + b) as u64);
            s.apply_boundaries(&p);
            v.extend_from_slice(&s.v);
            w.extend_from_slice(&s.w);
        }
        let (mut cv, mut cw) = (v.clone(), w.clone());
        let steps = if n > 100_000 { 5 } else { 300 };
        explicit_run_batch(&p, &mut cv, &mut cw, batch, steps, Exec::Cpu).unwrap();
        assert_eq!(
            explicit_run_batch(&p, &mut v, &mut w, batch, steps, Exec::Cuda).unwrap(),
            Backend::Cuda
        );
        for (g, c) in v.iter().zip(&cv).chain(w.iter().zip(&cw)) {
            assert!(
                (g - c).abs() <= 1e-9 * (1.0 + c.abs()),
                "n = {n}: {g} vs {c}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn prop_time_blocked_parallel_matches_reference(
        (n, steps, seed) in bumpy_runs(3..12_000, 0..70),
    ) {
        let p = FhnParams {
            left: Boundary::Dirichlet(0.3),
            ..half_spaced(n)
        };
        let (mut s, r) = bumpy_and_reference(&p, seed, steps);
        run_parallel(
            &Coeffs::new(&p, p.dx()),
            &mut s.v,
            &mut s.w,
            steps,
            &mut ExplicitScratch::default(),
        );
        prop_assert_eq!(s.v, r.v);
        prop_assert_eq!(s.w, r.w);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn prop_fast_path_matches_reference(
        (n, steps, seed) in bumpy_runs(3..300, 0..40),
        dirichlet in any::<bool>(),
    ) {
        let p = FhnParams {
            right: if dirichlet { Boundary::Dirichlet(1.0) } else { Boundary::NoFlux },
            ..half_spaced(n)
        };
        let (mut s, r) = bumpy_and_reference(&p, seed, steps);
        explicit_run(&p, &mut s, steps, Exec::Cpu).unwrap();
        prop_assert_eq!(s.v, r.v);
        prop_assert_eq!(s.w, r.w);
    }
}
