//! The sparse solver against the dense one (missing entries forbidden) and scipy's examples.

use ndarray::Array2;

use super::{Csr, min_weight_full_matching};
use crate::{AssignmentError, Sense, jonker_volgenant};

fn lcg(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state >> 33
}

/// `dense` with its missing entries (infinities) as the infinity that forbids a pair in
/// `sense`.
fn forbidding(dense: &Array2<f64>, sense: Sense) -> Array2<f64> {
    let forbid = if sense == Sense::Minimize {
        f64::INFINITY
    } else {
        f64::NEG_INFINITY
    };
    dense.mapv(|v| if v.is_finite() { v } else { forbid })
}

/// A random `r x c` sparse matrix as CSR arrays (density in percent, integer costs in
/// `[-max/3, max)`), and the same matrix dense with `+inf` where there is no entry.
fn random_csr(
    r: usize,
    c: usize,
    density: u64,
    max: u64,
    seed: u64,
) -> (Vec<usize>, Vec<usize>, Vec<i64>, Array2<f64>) {
    let mut s = seed;
    let (mut indptr, mut indices, mut data) = (vec![0], Vec::new(), Vec::new());
    let mut dense = Array2::from_elem((r, c), f64::INFINITY);
    for i in 0..r {
        for j in 0..c {
            if lcg(&mut s) % 100 < density {
                let v = (lcg(&mut s) % max) as i64 - (max / 3) as i64;
                indices.push(j);
                data.push(v);
                dense[[i, j]] = v as f64;
            }
        }
        indptr.push(indices.len());
    }
    (indptr, indices, data, dense)
}

/// The CSC arrays of a dense matrix with `+inf` for no entry.
fn csc_of(dense: &Array2<f64>) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let (r, c) = dense.dim();
    let (mut ptr, mut idx, mut val) = (vec![0], Vec::new(), Vec::new());
    for j in 0..c {
        for i in 0..r {
            if dense[[i, j]].is_finite() {
                idx.push(i);
                val.push(dense[[i, j]]);
            }
        }
        ptr.push(idx.len());
    }
    (ptr, idx, val)
}

#[test]
fn sparse_matches_dense_on_random_matrices() {
    let mut seed = 1;
    let mut feasible = 0;
    for (r, c) in [
        (1, 1),
        (3, 3),
        (5, 8),
        (8, 5),
        (20, 20),
        (30, 45),
        (45, 30),
        (60, 60),
    ] {
        for density in [15, 40, 100] {
            for max in [4u64, 1000] {
                seed += 1;
                let (ptr, idx, data, dense) = random_csr(r, c, density, max, seed);
                let m = Csr::new(r, c, &ptr[..], &idx[..], &data[..]).unwrap();
                let data32: Vec<i32> = data.iter().map(|&v| v as i32).collect();
                let m32 = Csr::new(r, c, &ptr[..], &idx[..], &data32[..]).unwrap();
                let dataf: Vec<f64> = data.iter().map(|&v| v as f64).collect();
                let mf = Csr::new(r, c, &ptr[..], &idx[..], &dataf[..]).unwrap();
                let (cp, ci, cv) = csc_of(&dense);
                let mc = Csr::from_csc(r, c, &cp[..], &ci[..], &cv[..]).unwrap();
                for sense in [Sense::Minimize, Sense::Maximize] {
                    let d = forbidding(&dense, sense);
                    let want = jonker_volgenant(d.view(), sense);
                    for got in [
                        min_weight_full_matching(&m, sense),
                        min_weight_full_matching(&m32, sense),
                        min_weight_full_matching(&mf, sense),
                        min_weight_full_matching(&mc, sense),
                    ] {
                        match (&want, &got) {
                            (Ok(w), Ok(g)) => {
                                assert_eq!(w.cost, g.cost, "{r} x {c}, {density}%, {sense:?}");
                                check(&d, g, sense);
                            }
                            (
                                Err(AssignmentError::Infeasible),
                                Err(AssignmentError::Infeasible),
                            ) => {}
                            _ => panic!("{r} x {c}, {density}%: dense {want:?}, sparse {got:?}"),
                        }
                    }
                    feasible += want.is_ok() as usize;
                }
            }
        }
    }
    assert!(feasible > 40, "{feasible} feasible cases");
}

/// A valid matching of edges whose cost is its total and whose duals are feasible on every
/// edge and tight on the matched ones.
fn check(d: &Array2<f64>, a: &crate::Assignment, sense: Sense) {
    let (r, c) = d.dim();
    let sign = if sense == Sense::Minimize { 1.0 } else { -1.0 };
    let du = a.duals.as_ref().unwrap();
    let mut used = vec![false; c];
    let mut total = 0.0;
    for (i, j) in a.row_to_col.iter().enumerate() {
        if let Some(j) = *j {
            assert!(d[[i, j]].is_finite() && !used[j]);
            used[j] = true;
            total += d[[i, j]];
            assert_eq!(du.row[i] + du.col[j], d[[i, j]]);
        }
    }
    assert_eq!(a.row_to_col.iter().flatten().count(), r.min(c));
    assert_eq!(total, a.cost);
    for ((i, j), &v) in d.indexed_iter() {
        if v.is_finite() {
            assert!(sign * (v - du.row[i] - du.col[j]) >= 0.0);
        }
    }
}

#[test]
fn scipy_examples() {
    // all weights equal: a perfect matching
    let m = Csr::new(
        3,
        3,
        &[0, 3, 4, 5][..],
        &[0, 1, 2, 0, 1][..],
        &[1, 1, 1, 1, 1][..],
    )
    .unwrap();
    assert_eq!(
        min_weight_full_matching(&m, Sense::Minimize)
            .unwrap()
            .row_to_col,
        vec![Some(2), Some(0), Some(1)]
    );
    // rectangular: [[0, 1, 1], [0, 2, 3]] without the zeros
    let m = Csr::new(2, 3, &[0, 2, 4][..], &[1, 2, 1, 2][..], &[1, 1, 2, 3][..]).unwrap();
    let a = min_weight_full_matching(&m, Sense::Minimize).unwrap();
    assert_eq!((a.row_to_col, a.cost), (vec![Some(2), Some(1)], 3.0));
    // [[0, 1], [3, 1], [1, 4]]: every column
    let m = Csr::new(
        3,
        2,
        &[0, 1, 3, 5][..],
        &[1, 0, 1, 0, 1][..],
        &[1, 3, 1, 1, 4][..],
    )
    .unwrap();
    let a = min_weight_full_matching(&m, Sense::Minimize).unwrap();
    assert_eq!(a.row_to_col, vec![Some(1), None, Some(0)]);
    // empty partitions
    for (r, c) in [(0, 0), (2, 0), (0, 3)] {
        let ptr = vec![0usize; r + 1];
        let m = Csr::<f64, usize>::new(r, c, &ptr[..], &[][..], &[][..]).unwrap();
        let a = min_weight_full_matching(&m, Sense::Minimize).unwrap();
        assert_eq!(a.row_to_col, vec![None; r]);
        assert_eq!(a.cost, 0.0);
    }
}

#[test]
fn infeasible_problems_of_scipys_suite() {
    let cases: [&[&[i64]]; 6] = [
        &[&[1, 1, 1], &[1, 0, 0], &[1, 0, 0]],
        &[&[1, 1, 1], &[0, 0, 1], &[0, 0, 1]],
        &[&[1, 0, 0, 1], &[1, 1, 0, 1], &[0, 0, 0, 0]],
        &[&[1, 0, 0], &[2, 0, 0]],
        &[&[0, 1, 0], &[0, 2, 0]],
        &[&[1, 0], &[2, 0], &[5, 0]],
    ];
    for case in cases {
        let (mut ptr, mut idx, mut val) = (vec![0usize], Vec::new(), Vec::new());
        for row in case {
            for (j, &v) in row.iter().enumerate() {
                if v != 0 {
                    idx.push(j);
                    val.push(v);
                }
            }
            ptr.push(idx.len());
        }
        let m = Csr::new(case.len(), case[0].len(), &ptr[..], &idx[..], &val[..]).unwrap();
        for sense in [Sense::Minimize, Sense::Maximize] {
            assert_eq!(
                min_weight_full_matching(&m, sense),
                Err(AssignmentError::Infeasible),
                "{case:?}"
            );
        }
    }
}

#[test]
fn bad_arrays_and_entries_are_refused() {
    assert!(matches!(
        Csr::new(2, 2, &[0usize, 1][..], &[0][..], &[1.0][..]),
        Err(AssignmentError::InvalidSparse(_))
    ));
    assert!(Csr::new(2, 2, &[0i32, 2, 1][..], &[0, 1][..], &[1.0, 2.0][..]).is_err());
    assert!(Csr::new(1, 2, &[0i64, 1][..], &[-1][..], &[1.0][..]).is_err());
    assert!(Csr::new(1, 2, &[0i64, 1][..], &[0, 1][..], &[1.0][..]).is_err());
    let m = Csr::new(1, 2, &[0, 2][..], &[0, 1][..], &[1.0, f64::NAN][..]).unwrap();
    assert!(matches!(
        min_weight_full_matching(&m, Sense::Minimize),
        Err(AssignmentError::InvalidCost { row: 0, col: 1, .. })
    ));
    // the forbidding infinity is no edge; the other one is refused
    let m = Csr::new(1, 2, &[0, 2][..], &[1, 0][..], &[f64::INFINITY, 3.0][..]).unwrap();
    assert_eq!(
        min_weight_full_matching(&m, Sense::Minimize)
            .unwrap()
            .row_to_col,
        vec![Some(0)]
    );
    assert!(matches!(
        min_weight_full_matching(&m, Sense::Maximize),
        Err(AssignmentError::InvalidCost { row: 0, col: 1, .. })
    ));
    let m = Csr::new(1, 2, &[0, 2][..], &[1, 0][..], &[i64::MAX, 3][..]).unwrap();
    assert!(matches!(
        min_weight_full_matching(&m, Sense::Minimize),
        Err(AssignmentError::CostOutOfRange { row: 0, col: 1, .. })
    ));
    // None is no edge in either sense
    let m = Csr::new(1, 2, &[0, 2][..], &[1, 0][..], &[None, Some(3i64)][..]).unwrap();
    for sense in [Sense::Minimize, Sense::Maximize] {
        assert_eq!(
            min_weight_full_matching(&m, sense).unwrap().row_to_col,
            vec![Some(0)]
        );
    }
}

#[test]
fn huge_integers_fall_back_to_f64_and_parallel_entries_take_the_cheaper() {
    let big = 1i64 << 52;
    let data = [big, 5, 1, 7, big];
    let m = Csr::new(2, 2, &[0, 3, 5][..], &[0, 1, 1, 0, 1][..], &data[..]).unwrap();
    let a = min_weight_full_matching(&m, Sense::Minimize).unwrap();
    assert_eq!(a.row_to_col, vec![Some(1), Some(0)]);
    assert_eq!(a.cost, 8.0);
    let a = min_weight_full_matching(&m, Sense::Maximize).unwrap();
    assert_eq!(a.cost, 2.0 * big as f64);
}

#[test]
fn a_long_chain_of_forced_augmentations() {
    // Row i may take column i or i + 1 (cheaper); the last column is only reachable from
    // the last row: every search walks the whole chain back.
    let n = 2000;
    let (mut ptr, mut idx, mut val) = (vec![0usize], Vec::new(), Vec::new());
    for i in 0..n {
        idx.push(i);
        val.push(2.0);
        if i + 1 < n {
            idx.push(i + 1);
            val.push(1.0);
        }
        ptr.push(idx.len());
    }
    let m = Csr::new(n, n, &ptr[..], &idx[..], &val[..]).unwrap();
    let a = min_weight_full_matching(&m, Sense::Minimize).unwrap();
    assert_eq!(a.cost, 2.0 * n as f64);
}

#[test]
fn dense_matrices_through_the_sparse_and_auto_solvers() {
    use crate::{Solver, choose, solve};
    use gpu_runtime::Exec;
    let mut seed = 40;
    for (r, c) in [(9, 9), (12, 20), (20, 12), (300, 300)] {
        for density in [5, 60] {
            seed += 1;
            let (_, _, _, dense) = random_csr(r, c, density, 50, seed);
            let mut d = dense.clone();
            for k in 0..r.min(c) {
                d[[k, k]] = 7.0; // feasible
            }
            for sense in [Sense::Minimize, Sense::Maximize] {
                let m = forbidding(&d, sense);
                let want = jonker_volgenant(m.view(), sense).unwrap();
                for solver in [Solver::Sparse, Solver::Auto] {
                    let got = solve(m.view(), solver, sense, Exec::Cpu).unwrap();
                    assert_eq!(got.cost, want.cost, "{r} x {c} {density}% {solver:?}");
                    check(&d, &got, sense);
                }
                let big = r * c >= crate::AUTO_SPARSE_MIN_ENTRIES;
                let expect = if big && density == 5 {
                    Solver::Sparse
                } else {
                    Solver::JonkerVolgenant
                };
                assert_eq!(choose(m.view(), sense), expect, "{r} x {c} {density}%");
            }
        }
    }
    // invalid entries are refused on the way, at their position
    let mut m = ndarray::Array2::from_elem((3, 3), 1.0);
    m[[2, 1]] = f64::NAN;
    assert!(matches!(
        solve(m.view(), Solver::Sparse, Sense::Minimize, Exec::Cpu),
        Err(AssignmentError::InvalidCost { row: 2, col: 1, .. })
    ));
}

/// A random square sparse problem with the diagonal (so a perfect matching exists).
fn feasible_csr(
    n: usize,
    density: u64,
    max: u64,
    seed: u64,
) -> (Vec<usize>, Vec<usize>, Vec<i64>, Array2<f64>) {
    let (_, _, _, mut dense) = random_csr(n, n, density, max, seed);
    for i in 0..n {
        dense[[i, i]] = ((i * 7) % max as usize) as f64;
    }
    let (mut p, mut idx, mut val) = (vec![0], Vec::new(), Vec::new());
    for i in 0..n {
        for j in 0..n {
            if dense[[i, j]].is_finite() {
                idx.push(j);
                val.push(dense[[i, j]] as i64);
            }
        }
        p.push(idx.len());
    }
    (p, idx, val, dense)
}

#[test]
fn sparse_auction_on_the_cpu_is_exact_on_integers() {
    use super::auction;
    use gpu_runtime::Exec;
    for (n, density) in [(1, 50), (2, 50), (9, 30), (40, 10), (300, 2), (300, 30)] {
        for max in [3u64, 1000] {
            let (p, idx, val, dense) = feasible_csr(n, density, max, n as u64 + max);
            let m = Csr::new(n, n, &p[..], &idx[..], &val[..]).unwrap();
            let (cp, ci, cv) = csc_of(&dense);
            let mc = Csr::from_csc(n, n, &cp[..], &ci[..], &cv[..]).unwrap();
            for sense in [Sense::Minimize, Sense::Maximize] {
                let want = min_weight_full_matching(&m, sense).unwrap().cost;
                for got in [
                    auction(&m, sense, Exec::Cpu),
                    auction(&mc, sense, Exec::Cpu),
                ] {
                    let got = got.unwrap();
                    assert_eq!(got.cost, want, "n = {n}, {density}%, max {max}, {sense:?}");
                    let total: f64 = got
                        .row_to_col
                        .iter()
                        .enumerate()
                        .map(|(i, j)| dense[[i, j.unwrap()]])
                        .sum();
                    assert_eq!(total, got.cost);
                }
            }
        }
    }
    // floats: within the documented gap
    let (p, idx, val, _) = feasible_csr(200, 5, 1000, 9);
    let f: Vec<f64> = val.iter().map(|&v| v as f64 / 7.0).collect();
    let m = Csr::new(200, 200, &p[..], &idx[..], &f[..]).unwrap();
    let want = min_weight_full_matching(&m, Sense::Minimize).unwrap().cost;
    let got = auction(&m, Sense::Minimize, Exec::Cpu).unwrap().cost;
    assert!(
        (got - want).abs() <= crate::AUCTION_FLOAT_GAP * 1000.0 / 7.0 * 2.0,
        "{got} vs {want}"
    );
}

#[test]
fn sparse_auction_refuses_what_it_cannot_solve() {
    use super::auction;
    use gpu_runtime::Exec;
    let m = Csr::new(2, 2, &[0, 2, 2][..], &[0, 1][..], &[1.0, 1.0][..]).unwrap();
    assert_eq!(
        auction(&m, Sense::Minimize, Exec::Cpu),
        Err(AssignmentError::Infeasible)
    );
    let m = Csr::new(2, 2, &[0, 1, 2][..], &[0, 0][..], &[1.0, 1.0][..]).unwrap();
    assert_eq!(
        auction(&m, Sense::Minimize, Exec::Cpu),
        Err(AssignmentError::Infeasible)
    );
    let m = Csr::new(1, 2, &[0, 1][..], &[0][..], &[1.0][..]).unwrap();
    assert!(matches!(
        auction(&m, Sense::Minimize, Exec::Cpu),
        Err(AssignmentError::NotSquare {
            rows: 1,
            cols: 2,
            ..
        })
    ));
    let m = Csr::new(1, 1, &[0, 1][..], &[0][..], &[f64::NAN][..]).unwrap();
    assert!(matches!(
        auction(&m, Sense::Minimize, Exec::Cpu),
        Err(AssignmentError::InvalidCost { row: 0, col: 0, .. })
    ));
}

/// The CSR auction on the GPU (`assignment_auction_bid_csr`), compared with the exact sparse
/// solver: the same optimum on integer costs. Skipped without a GPU; runs under the simulated
/// driver in CI.
#[test]
fn gpu_sparse_auction_matches_the_exact_solver() {
    use super::auction;
    use gpu_runtime::Exec;
    let Some(_gpu) = gpu_runtime::testing::gpu_for_test("assignment gpu_sparse_auction") else {
        return;
    };
    let sizes: &[usize] = if gpu_runtime::testing::simulated() {
        &[1, 2, 33, 97]
    } else {
        &[1, 2, 33, 257, 4099]
    };
    for &n in sizes {
        for (density, max) in [(5u64, 100u64), (40, 7)] {
            let (p, idx, val, _) = feasible_csr(n, density, max, n as u64 * 3 + density);
            let m = Csr::new(n, n, &p[..], &idx[..], &val[..]).unwrap();
            for sense in [Sense::Minimize, Sense::Maximize] {
                let want = min_weight_full_matching(&m, sense).unwrap().cost;
                let got = auction(&m, sense, Exec::Cuda).unwrap();
                assert_eq!(got.cost, want, "n = {n}, {density}%, {sense:?}");
            }
        }
    }
    let m = Csr::new(2, 2, &[0, 2, 2][..], &[0, 1][..], &[1.0, 1.0][..]).unwrap();
    assert_eq!(
        auction(&m, Sense::Minimize, Exec::Cuda),
        Err(AssignmentError::Infeasible)
    );
}

/// An `n x n` internal problem borrowing CSR arrays (not transposed, no offset).
fn borrowed_square<'a, E: Clone>(
    n: usize,
    indptr: &'a [usize],
    indices: &'a [usize],
    data: &'a [E],
    negated: bool,
) -> super::SparseProblem<'a, E, usize> {
    use std::borrow::Cow;
    super::SparseProblem {
        nr: n,
        nc: n,
        indptr: Cow::Borrowed(indptr),
        indices: Cow::Borrowed(indices),
        data: Cow::Borrowed(data),
        transposed: false,
        negated,
        offset: 0,
    }
}

/// The warm start (auction prices, then exact augmentations) gives the cold start's optimum,
/// with certified duals, on every shape of problem it takes and on ties.
#[test]
fn warm_start_from_the_auction_is_exact() {
    use super::lapjvsp::run_with;
    for (n, density, max) in [
        (1usize, 100u64, 5u64),
        (7, 40, 3),
        (60, 8, 1000),
        (200, 3, 50),
        (200, 20, 2),
    ] {
        let (p, idx, val, dense) = feasible_csr(n, density, max, n as u64 + density);
        let fval: Vec<f64> = val.iter().map(|&v| v as f64 * 0.37).collect();
        for negated in [false, true] {
            let sense = if negated {
                Sense::Maximize
            } else {
                Sense::Minimize
            };
            let ints: Vec<i64> = val.iter().map(|&v| if negated { -v } else { v }).collect();
            let floats: Vec<f64> = fval.iter().map(|&v| if negated { -v } else { v }).collect();
            let pi = borrowed_square(n, &p, &idx, &ints, negated);
            let pf = borrowed_square(n, &p, &idx, &floats, negated);
            let cold = run_with(&pi, true, &mut |_| {}, usize::MAX).unwrap();
            let warm = run_with(&pi, true, &mut |_| {}, 0).unwrap();
            assert_eq!(warm.cost, cold.cost, "n = {n}, {density}%, {sense:?}");
            check(&dense, &warm, sense);
            let cold = run_with(&pf, true, &mut |_| {}, usize::MAX).unwrap();
            let warm = run_with(&pf, true, &mut |_| {}, 0).unwrap();
            assert!(
                (warm.cost - cold.cost).abs() <= 1e-9 * cold.cost.abs().max(1.0),
                "n = {n}"
            );
        }
    }
    // infeasible: found by the matching check before the auction
    let (p, idx) = (vec![0usize, 2, 4, 4], vec![0usize, 1, 0, 1]);
    let val = [1i64, 2, 3, 4];
    let pi = borrowed_square(3, &p, &idx, &val, false);
    assert_eq!(
        run_with(&pi, true, &mut |_| {}, 0),
        Err(AssignmentError::Infeasible)
    );
}
