//! The native paths of the Jonker–Volgenant solver: every element type and instruction set
//! gives the same optimum, with exact duals.

use ndarray::Array2;

use super::core::solve_with;
use super::scan::Isa;
use crate::problem::{NativeProblem, Problem};
use crate::{Assignment, Sense, jonker_volgenant};

fn lcg(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state >> 33
}

fn ints(r: usize, c: usize, max: u64, seed: u64) -> Array2<i64> {
    let mut s = seed;
    Array2::from_shape_fn((r, c), |_| (lcg(&mut s) % max) as i64 - (max / 3) as i64)
}

/// A valid assignment of the right size whose duals certify its cost exactly.
fn certified(c: &Array2<f64>, a: &Assignment, sense: Sense) {
    let (r, k) = c.dim();
    let sign = if sense == Sense::Minimize { 1.0 } else { -1.0 };
    let d = a.duals.as_ref().expect("duals");
    let mut used = vec![false; k];
    let mut total = 0.0;
    for (i, j) in a.row_to_col.iter().enumerate() {
        if let Some(j) = *j {
            assert!(!used[j]);
            used[j] = true;
            total += c[[i, j]];
            assert_eq!(d.row[i] + d.col[j], c[[i, j]], "tight on ({i}, {j})");
        }
    }
    assert_eq!(a.row_to_col.iter().flatten().count(), r.min(k));
    assert_eq!(total, a.cost);
    for i in 0..r {
        for j in 0..k {
            assert!(
                sign * (c[[i, j]] - d.row[i] - d.col[j]) >= 0.0,
                "feasible at ({i}, {j})"
            );
        }
    }
    let dual: f64 = d.row.iter().sum::<f64>() + d.col.iter().sum::<f64>();
    assert_eq!(dual, a.cost);
}

#[test]
fn every_element_type_gives_the_same_optimum() {
    let mut seed = 3;
    for (r, c) in [
        (1, 1),
        (2, 3),
        (5, 5),
        (7, 4),
        (16, 16),
        (17, 33),
        (40, 40),
        (33, 9),
    ] {
        for max in [3u64, 100, 100_000] {
            seed += 1;
            let m = ints(r, c, max, seed);
            let f = m.mapv(|v| v as f64);
            for sense in [Sense::Minimize, Sense::Maximize] {
                let want = jonker_volgenant(f.view(), sense).unwrap();
                certified(&f, &want, sense);
                let by_i64 = jonker_volgenant(m.view(), sense).unwrap();
                let by_i32 = jonker_volgenant(m.mapv(|v| v as i32).view(), sense).unwrap();
                let by_f32 = jonker_volgenant(m.mapv(|v| v as f32).view(), sense).unwrap();
                let by_opt = jonker_volgenant(m.mapv(Some).view(), sense).unwrap();
                for a in [&by_i64, &by_i32, &by_f32, &by_opt] {
                    assert_eq!(a.cost, want.cost, "{r} x {c}, max {max}, {sense:?}");
                    certified(&f, a, sense);
                }
            }
        }
    }
}

#[test]
fn integer_matrices_stay_integer_and_huge_ones_go_to_i128() {
    let m = ints(20, 30, 1000, 9);
    let p = NativeProblem::new(m.view(), Sense::Maximize).unwrap();
    assert!(matches!(p, NativeProblem::I64(_)));
    let m32 = m.mapv(|v| v as i32);
    let p = NativeProblem::new(m32.view(), Sense::Minimize).unwrap();
    assert!(matches!(p, NativeProblem::I32(ref q) if matches!(q.c, std::borrow::Cow::Borrowed(_))));
    let mf = m.mapv(|v| v as f32);
    let p = NativeProblem::new(mf.view(), Sense::Minimize).unwrap();
    assert!(matches!(p, NativeProblem::F32(_)));
    // 2^50 x 4 (n + 2) is beyond the checked i64 range: solved in i128, exactly
    let big = m.mapv(|v| v * (1 << 40));
    let p = NativeProblem::new(big.view(), Sense::Minimize).unwrap();
    assert!(matches!(p, NativeProblem::I128(_)));
    for sense in [Sense::Minimize, Sense::Maximize] {
        let a = jonker_volgenant(big.view(), sense).unwrap();
        let b = jonker_volgenant(m.view(), sense).unwrap();
        assert_eq!(a.cost, b.cost * (1u64 << 40) as f64);
        assert_eq!(a.row_to_col, b.row_to_col, "{sense:?}");
    }
}

/// The exact optimum of an integer matrix with forbidden pairs (`None`), by enumerating
/// every assignment of the shorter side and summing in `i128`: `None` when every one uses a
/// forbidden pair.
fn exact_optimum(c: &Array2<Option<i64>>, sense: Sense) -> Option<i128> {
    let (r, k) = c.dim();
    let (short, long) = (r.min(k), r.max(k));
    let at = |i: usize, j: usize| if r <= k { c[[i, j]] } else { c[[j, i]] };
    let mut best: Option<i128> = None;
    let mut cols = vec![usize::MAX; short];
    let mut used = vec![false; long];
    fn walk(
        i: usize,
        sum: i128,
        cols: &mut [usize],
        used: &mut [bool],
        at: &dyn Fn(usize, usize) -> Option<i64>,
        sense: Sense,
        best: &mut Option<i128>,
    ) {
        if i == cols.len() {
            let better = match (*best, sense) {
                (None, _) => true,
                (Some(b), Sense::Minimize) => sum < b,
                (Some(b), Sense::Maximize) => sum > b,
            };
            if better {
                *best = Some(sum);
            }
            return;
        }
        for j in 0..used.len() {
            if let (false, Some(v)) = (used[j], at(i, j)) {
                used[j] = true;
                cols[i] = j;
                walk(i + 1, sum + v as i128, cols, used, at, sense, best);
                used[j] = false;
            }
        }
    }
    walk(0, 0, &mut cols, &mut used, &at, sense, &mut best);
    best
}

/// The exact total of an assignment (every pair allowed), in `i128`.
fn exact_total(c: &Array2<Option<i64>>, a: &Assignment) -> i128 {
    let (r, k) = c.dim();
    let mut used = vec![false; k];
    let mut total = 0i128;
    for (i, j) in a.row_to_col.iter().enumerate() {
        if let Some(j) = *j {
            assert!(!used[j], "column {j} twice");
            used[j] = true;
            total += c[[i, j]].expect("an allowed pair") as i128;
        }
    }
    assert_eq!(a.row_to_col.iter().flatten().count(), r.min(k));
    total
}

/// Integer matrices over the whole `i64` range (its extremes, 2^62, values just past 2^53,
/// random 64-bit values, ties) are solved exactly, in every shape and both senses, as `i64`,
/// `Option<i64>` (with forbidden pairs) and in a batch: the total in exact arithmetic is the
/// brute-force optimum's.
#[test]
fn the_whole_i64_range_is_solved_exactly() {
    let special = [
        i64::MIN,
        i64::MAX,
        i64::MIN + 1,
        i64::MAX - 1,
        1 << 62,
        -(1 << 62),
        (1 << 53) + 1,
        -(1 << 53) - 1,
        0,
        1,
        -1,
    ];
    let mut st = 99u64;
    let mut checked = 0;
    for (r, k) in [
        (1, 1),
        (1, 3),
        (3, 1),
        (2, 2),
        (3, 3),
        (2, 5),
        (5, 2),
        (4, 4),
        (5, 6),
        (6, 4),
    ] {
        for trial in 0..12 {
            let m = Array2::from_shape_fn((r, k), |_| {
                let x = lcg(&mut st);
                match trial % 3 {
                    0 => special[(x % special.len() as u64) as usize],
                    // full 64-bit random values
                    1 => ((x << 31) ^ lcg(&mut st) ^ (lcg(&mut st) << 62)) as i64,
                    // few distinct huge values: many ties
                    _ => [i64::MIN, i64::MAX, 1 << 62][(x % 3) as usize],
                }
            });
            for sense in [Sense::Minimize, Sense::Maximize] {
                let opt = m.mapv(Some);
                let want = exact_optimum(&opt, sense).expect("no forbidden pair");
                assert!(crate::integer_arithmetic(m.view(), sense));
                let a = jonker_volgenant(m.view(), sense).unwrap();
                assert_eq!(exact_total(&opt, &a), want, "{m:?} {sense:?}");
                assert_eq!(a.cost, want as f64);
                let stack = m.clone().insert_axis(ndarray::Axis(0));
                let b = crate::linear_sum_assignment_batch(stack.view(), sense).unwrap();
                assert_eq!(b.cols, a.pairs().1);
                // some pairs forbidden
                let holes = Array2::from_shape_fn((r, k), |(i, j)| {
                    (!lcg(&mut st).is_multiple_of(4) || i == j).then_some(m[[i, j]])
                });
                match (
                    exact_optimum(&holes, sense),
                    jonker_volgenant(holes.view(), sense),
                ) {
                    (Some(want), Ok(a)) => assert_eq!(exact_total(&holes, &a), want),
                    (None, Err(crate::AssignmentError::Infeasible)) => {}
                    (w, g) => panic!("{holes:?} {sense:?}: {w:?} against {g:?}"),
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 240);
    // the matrices of the issue, as scipy accepts them
    let m = ndarray::array![[i64::MAX, i64::MIN], [1 << 62, i64::MAX]];
    let a = jonker_volgenant(m.view(), Sense::Minimize).unwrap();
    assert_eq!(a.row_to_col, vec![Some(1), Some(0)]);
    let a = jonker_volgenant(m.view(), Sense::Maximize).unwrap();
    assert_eq!(a.row_to_col, vec![Some(0), Some(1)]);
}

#[test]
fn maximised_i32_matrices_keep_their_extremes() {
    let m = ndarray::array![
        [i32::MIN, i32::MAX, 0],
        [i32::MAX, i32::MIN, 5],
        [-7, 3, i32::MIN]
    ];
    let f = m.mapv(|v| v as f64);
    for sense in [Sense::Minimize, Sense::Maximize] {
        let a = jonker_volgenant(m.view(), sense).unwrap();
        let b = jonker_volgenant(f.view(), sense).unwrap();
        assert_eq!(a.cost, b.cost);
        certified(&f, &a, sense);
    }
}

#[test]
fn every_instruction_set_gives_the_same_solution() {
    let isas = Isa::testable();
    for (n, k, max) in [(60, 60, 5u64), (61, 75, 1000), (90, 90, 1 << 30), (3, 3, 2)] {
        let m = ints(n, k, max, n as u64);
        let p = Problem::new(m.view(), Sense::Minimize).unwrap();
        let q = match NativeProblem::new(m.view(), Sense::Minimize).unwrap() {
            NativeProblem::I64(q) => q,
            _ => unreachable!("small integers"),
        };
        let f = solve_with(&p, Isa::Portable).unwrap();
        let i = solve_with(&q, Isa::Portable).unwrap();
        for &isa in &isas {
            assert_eq!(solve_with(&p, isa).unwrap(), f, "{isa:?}, f64");
            assert_eq!(solve_with(&q, isa).unwrap(), i, "{isa:?}, i64");
        }
    }
}
