//! Tests of the tridiagonal solvers: against a dense solve and each other, on adversarial
//! systems, their errors, strided batches, and the GPU against the CPU.

use super::*;
use gpu_runtime::GpuError;
use gpu_runtime::testing::runs_out_of_memory;
use proptest::prelude::*;

/// A random diagonally dominant system (margin `dom`), deterministic in `seed`.
pub(crate) fn system<T: Real>(n: usize, seed: u64, dom: f64) -> [Vec<T>; 4] {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut rnd = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut a = vec![T::ZERO; n];
    let mut b = vec![T::ZERO; n];
    let mut c = vec![T::ZERO; n];
    let mut d = vec![T::ZERO; n];
    for i in 0..n {
        let (ai, ci) = (rnd(), rnd());
        a[i] = T::from_f64(ai);
        c[i] = T::from_f64(ci);
        let sign = if rnd() < 0.0 { -1.0 } else { 1.0 };
        b[i] = T::from_f64(sign * (ai.abs() + ci.abs() + dom + rnd().abs()));
        d[i] = T::from_f64(rnd() * 10.0);
    }
    [a, b, c, d]
}

fn close<T: Real>(x: &[T], y: &[T], tol: f64) -> bool {
    x.len() == y.len()
        && x.iter()
            .zip(y)
            .all(|(p, q)| (p.to_f64() - q.to_f64()).abs() <= tol * (1.0 + q.to_f64().abs()))
}

const SIZES: [usize; 13] = [0, 1, 2, 3, 31, 32, 33, 97, 1023, 1024, 1025, 4099, 65_537];

#[test]
fn thomas_cr_pcr_agree_with_dense_on_small_systems() {
    for n in [1usize, 2, 3, 4, 5, 7, 8, 9, 16, 31, 32, 33, 61] {
        for seed in 0..4 {
            let [a, b, c, d] = system::<f64>(n, seed + 10 * n as u64, 0.1);
            let dense = solve_dense(&a, &b, &c, &d).unwrap();
            let solvers = [thomas::<f64>, cyclic_reduction::<f64>, pcr::<f64>];
            for (name, f) in ["thomas", "cr", "pcr"].into_iter().zip(solvers) {
                assert!(
                    close(&f(&a, &b, &c, &d).unwrap(), &dense, 1e-10),
                    "{name} {n}"
                );
            }
        }
    }
}

/// Checks cyclic reduction and PCR against Thomas (relative `tol`) on the `T` system of size
/// `n` (messages `cr{suffix}`, `pcr{suffix}`); returns the system and cyclic reduction's
/// solution.
fn agree_with_thomas<T: Real>(n: usize, tol: f64, suffix: &str) -> ([Vec<T>; 4], Vec<T>) {
    let [a, b, c, d] = system::<T>(n, n as u64, 0.5);
    let t = thomas(&a, &b, &c, &d).unwrap();
    let x = cyclic_reduction(&a, &b, &c, &d).unwrap();
    assert!(close(&x, &t, tol), "cr{suffix} {n}");
    assert!(
        close(&pcr(&a, &b, &c, &d).unwrap(), &t, tol),
        "pcr{suffix} {n}"
    );
    ([a, b, c, d], x)
}

#[test]
fn cr_and_pcr_agree_with_thomas_f64_and_f32() {
    for n in SIZES {
        agree_with_thomas::<f64>(n, 1e-11, "");
        let ([a, b, c, d], x) = agree_with_thomas::<f32>(n, 1e-4, "32");
        // the solution really solves the system
        for i in 0..n {
            let mut r = b[i] * x[i] - d[i];
            if i > 0 {
                r += a[i] * x[i - 1];
            }
            if i + 1 < n {
                r += c[i] * x[i + 1];
            }
            assert!(
                r.abs() < 1e-3 * (1.0 + d[i].abs()),
                "residual {r} at {i}, n {n}"
            );
        }
    }
}

#[test]
fn adversarial_systems() {
    for n in [1usize, 2, 31, 32, 33, 1023, 1024, 1025, 4099] {
        // diagonal only (a = c = 0): x = d / b exactly
        let z = vec![0.0f64; n];
        let b: Vec<f64> = (0..n)
            .map(|i| if i % 2 == 0 { 2.0 } else { -4.0 })
            .collect();
        let d: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let want: Vec<f64> = d.iter().zip(&b).map(|(d, b)| d / b).collect();
        for f in [thomas::<f64>, cyclic_reduction::<f64>, pcr::<f64>] {
            assert_eq!(f(&z, &b, &z, &d).unwrap(), want, "n {n}");
        }
        // all equal rows, and the same system scaled by 1e150 (no overflow in the solvers)
        let (a, c) = (vec![-1.0f64; n], vec![-1.0f64; n]);
        let b = vec![3.0f64; n];
        let d = vec![1.0f64; n];
        let t = thomas(&a, &b, &c, &d).unwrap();
        let s = 1e150;
        let sc = |v: &[f64]| v.iter().map(|x| x * s).collect::<Vec<_>>();
        for f in [thomas::<f64>, cyclic_reduction::<f64>, pcr::<f64>] {
            let x = f(&sc(&a), &sc(&b), &sc(&c), &sc(&d)).unwrap();
            assert!(close(&x, &t, 1e-12), "scaled n {n}");
        }
    }
}

#[test]
fn errors() {
    assert!(matches!(
        thomas(&[0.0], &[1.0, 2.0], &[0.0, 0.0], &[1.0, 1.0]),
        Err(TridiagError::LengthMismatch { .. })
    ));
    // zero pivot in row 0 and a singular matrix later
    for f in [thomas::<f64>, cyclic_reduction::<f64>, pcr::<f64>] {
        assert!(matches!(
            f(&[0.0, 1.0], &[0.0, 1.0], &[1.0, 0.0], &[1.0, 1.0]),
            Err(TridiagError::ZeroPivot { .. })
        ));
    }
    // [1 1; 1 1] is singular
    assert!(matches!(
        thomas(&[0.0, 1.0], &[1.0, 1.0], &[1.0, 0.0], &[1.0, 2.0f64]),
        Err(TridiagError::ZeroPivot { row: 1 })
    ));
    assert!(matches!(
        solve_dense(&[0.0, 1.0], &[1.0, 1.0], &[1.0, 0.0], &[1.0, 2.0f64]),
        Err(TridiagError::ZeroPivot { .. })
    ));
    let mut x = vec![0.0f64; 8];
    let v = vec![1.0f64; 8];
    let mut layout = |m, stride, batch| {
        let solver = TridiagSolver::Thomas;
        solve_strided_batch(&v, &v, &v, &v, &mut x, m, stride, batch, solver, Exec::Cpu)
    };
    assert!(matches!(
        layout(3, 2, 2),
        Err(TridiagError::BatchLayout { .. })
    ));
    assert!(matches!(
        layout(3, 4, 3),
        Err(TridiagError::BatchLayout { needed: 11, .. })
    ));
}

#[test]
fn strided_batch_matches_single_solves() {
    // Every system size with every gap between systems and every batch size.
    let layouts = [1, 3, 33, 401, 1025].into_iter().flat_map(|m| {
        [0, 1, 5, 7]
            .into_iter()
            .flat_map(move |gap| [2, 3, 5, 9, 17].map(move |batch| (m, m + gap, batch)))
    });
    for (m, stride, batch) in layouts {
        for solver in [
            TridiagSolver::Thomas,
            TridiagSolver::CyclicReduction,
            TridiagSolver::Pcr,
        ] {
            let len = stride * (batch - 1) + m;
            let [a, b, c, d] = system::<f64>(len, (m * batch) as u64, 0.3);
            let mut x = vec![-7.0; len];
            solve_strided_batch(&a, &b, &c, &d, &mut x, m, stride, batch, solver, Exec::Cpu)
                .unwrap();
            for k in 0..batch {
                let r = k * stride..k * stride + m;
                let t = thomas(&a[r.clone()], &b[r.clone()], &c[r.clone()], &d[r.clone()]).unwrap();
                assert!(close(&x[r], &t, 1e-11), "m {m} batch {k}");
                if k + 1 < batch {
                    assert!(
                        x[k * stride + m..(k + 1) * stride]
                            .iter()
                            .all(|&v| v == -7.0)
                    );
                }
            }
        }
    }
}

#[test]
fn gpu_out_of_memory_is_a_typed_error() {
    let [a, b, c, d] = system::<f64>(5000, 1, 0.5);
    let solvers = [
        TridiagSolver::Pcr,
        TridiagSolver::CyclicReduction,
        TridiagSolver::Thomas,
    ];
    let run = || solvers.map(|solver| solve(&a, &b, &c, &d, solver, Exec::Cuda).map(|r| r.1));
    runs_out_of_memory(4096, run, |e| {
        matches!(e, TridiagError::Gpu(GpuError::OutOfMemory { .. }))
    });
}

#[test]
fn gpu_matches_cpu() {
    let Some(_gpu) = gpu_runtime::testing::gpu_for_test("pde tridiag gpu_matches_cpu") else {
        return;
    };
    for n in [1, 2]
        .into_iter()
        .chain(gpu_runtime::testing::EDGE_SIZES)
        .chain([65_537, (1 << 20) + 1])
        // Under the simulated driver (kernels on one CPU core): several blocks, not millions.
        .filter(|&n| n <= gpu_runtime::testing::gpu_test_size(usize::MAX, 4099))
    {
        let [a, b, c, d] = system::<f64>(n, n as u64, 0.5);
        let t = thomas(&a, &b, &c, &d).unwrap();
        for solver in [
            TridiagSolver::Pcr,
            TridiagSolver::CyclicReduction,
            TridiagSolver::Thomas,
        ] {
            let (x, be) = solve(&a, &b, &c, &d, solver, Exec::Cuda).unwrap();
            assert_eq!(be, Backend::Cuda);
            assert!(close(&x, &t, 1e-10), "f64 n {n} {solver:?}");
        }
        let [a, b, c, d] = system::<f32>(n, n as u64, 0.5);
        let t = thomas(&a, &b, &c, &d).unwrap();
        let (x, _) = solve(&a, &b, &c, &d, TridiagSolver::Pcr, Exec::Cuda).unwrap();
        assert!(close(&x, &t, 1e-4), "f32 n {n}");
    }
    for (m, stride, batch) in [
        (1, 1, 3),
        (31, 32, 100),
        (401, 401, 1000),
        (1024, 1024, 7),
        (1025, 1100, 5),
        (5000, 5000, 3),
    ] {
        batch_pcr_on_gpu_matches_thomas::<f64>(m, stride, batch, 1e-10);
        batch_pcr_on_gpu_matches_thomas::<f32>(m, stride, batch, 1e-4);
    }
}

/// The GPU's PCR on a strided batch against the CPU's Thomas on the same batch.
fn batch_pcr_on_gpu_matches_thomas<T: Real>(m: usize, stride: usize, batch: usize, tol: f64) {
    let len = stride * (batch - 1) + m;
    let [a, b, c, d] = system::<T>(len, m as u64, 0.3);
    let solve = |solver, exec| {
        let mut x = vec![T::ZERO; len];
        solve_strided_batch(&a, &b, &c, &d, &mut x, m, stride, batch, solver, exec).unwrap();
        x
    };
    let xc = solve(TridiagSolver::Thomas, Exec::Cpu);
    let xg = solve(TridiagSolver::Pcr, Exec::Cuda);
    assert!(
        close(&xg, &xc, tol),
        "batch {} m {m}",
        std::any::type_name::<T>()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn prop_solvers_agree(n in 0usize..700, seed in any::<u64>(), dom in 0.01f64..2.0) {
        let [a, b, c, d] = system::<f64>(n, seed, dom);
        let t = thomas(&a, &b, &c, &d).unwrap();
        prop_assert!(close(&cyclic_reduction(&a, &b, &c, &d).unwrap(), &t, 1e-8));
        prop_assert!(close(&pcr(&a, &b, &c, &d).unwrap(), &t, 1e-8));
        for rows in [1usize, 5, 32, 512] {
            prop_assert!(close(&cr_pcr_hybrid(&a, &b, &c, &d, rows).unwrap(), &t, 1e-8));
        }
        if n <= 40 {
            prop_assert!(close(&solve_dense(&a, &b, &c, &d).unwrap(), &t, 1e-8));
        }
    }
}
