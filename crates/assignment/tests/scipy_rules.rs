//! Every solver against what scipy's `linear_sum_assignment` does with infinities, NaNs,
//! infeasible matrices and huge entries, under both senses. The record
//! (`tests/data/scipy_rules.txt`) was written by `scripts/check_scipy_rules.py`, which ran
//! scipy and an exact (rational) brute force on each matrix; see the script for the format.

use assignment::{
    Assignment, AssignmentError, Sense, Solver, brute_force_exec, jonker_volgenant, solve,
    solve_batch,
};
use gpu_runtime::Exec;
use ndarray::Array2;

/// What a solver must do with a case.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// Solve it with this optimal cost.
    Cost(f64),
    /// Refuse an entry (`NaN`, or the infinity that would always be optimal).
    Invalid,
    /// Report that no complete assignment avoids the forbidden pairs.
    Infeasible,
    /// Report that the optimal total is beyond f64.
    Overflow,
}

struct Case {
    id: usize,
    costs: Array2<f64>,
    sense: Sense,
    expect: Expect,
    /// scipy's assignment (`col of each row`) when it solved the case.
    scipy_cols: Option<Vec<i64>>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/scipy_rules.txt");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len() % 4, 0);
    lines
        .chunks(4)
        .map(|c| {
            let head: Vec<&str> = c[0].split_whitespace().collect();
            assert_eq!(head[0], "case");
            let (r, k): (usize, usize) = (head[2].parse().unwrap(), head[3].parse().unwrap());
            let sense = match head[4] {
                "minimize" => Sense::Minimize,
                "maximize" => Sense::Maximize,
                s => panic!("sense {s}"),
            };
            let vals: Vec<f64> = c[1]
                .split_whitespace()
                .map(|v| v.parse().unwrap())
                .collect();
            let costs = Array2::from_shape_vec((r, k), vals).unwrap();
            let scipy: Vec<&str> = c[2].split_whitespace().collect();
            let brute: Vec<&str> = c[3].split_whitespace().collect();
            let expect = match (brute[1], brute.get(2)) {
                ("ok", Some(v)) => Expect::Cost(v.parse().unwrap()),
                ("overflow", _) => Expect::Overflow,
                ("error", Some(&"invalid")) => Expect::Invalid,
                ("error", Some(&"infeasible")) => Expect::Infeasible,
                other => panic!("{other:?}"),
            };
            // scipy agrees with the exact brute force on every recorded case (the script says
            // so); its own result is checked here too
            let scipy_cols = match scipy[1] {
                "ok" => {
                    let cost: f64 = scipy[2].parse().unwrap();
                    match &expect {
                        Expect::Cost(v) => assert!((cost - v).abs() <= 1e-12 * v.abs().max(1.0)),
                        Expect::Overflow => assert!(cost.is_infinite()),
                        e => panic!("scipy solved a case expected to be {e:?}"),
                    }
                    Some(scipy[3..].iter().map(|v| v.parse().unwrap()).collect())
                }
                _ => {
                    let kind = match scipy[2] {
                        "invalid" => Expect::Invalid,
                        _ => Expect::Infeasible,
                    };
                    assert_eq!(kind, expect);
                    None
                }
            };
            Case {
                id: head[1].parse().unwrap(),
                costs,
                sense,
                expect,
                scipy_cols,
            }
        })
        .collect()
}

/// The assignment is complete, avoids forbidden pairs, and its cost is the sum of its entries.
fn check_assignment(case: &Case, a: &Assignment) {
    let (r, k) = case.costs.dim();
    let mut used = vec![false; k];
    let mut sum = 0.0;
    for (i, j) in a.row_to_col.iter().enumerate() {
        if let Some(j) = *j {
            assert!(!used[j], "case {}: column {j} twice", case.id);
            used[j] = true;
            let v = case.costs[[i, j]];
            assert!(v.is_finite(), "case {}: forbidden pair ({i}, {j})", case.id);
            sum += v;
        }
    }
    assert_eq!(used.iter().filter(|u| **u).count(), r.min(k));
    assert!(
        (sum - a.cost).abs() <= 1e-12 * sum.abs().max(1.0),
        "case {}: cost {} vs its entries' sum {sum}",
        case.id,
        a.cost
    );
}

fn check(case: &Case, solver: Solver, got: Result<Assignment, AssignmentError>, tol: f64) {
    let id = case.id;
    match (&case.expect, &got) {
        (Expect::Cost(v), Ok(a)) => {
            check_assignment(case, a);
            assert!(
                (a.cost - v).abs() <= tol * v.abs().max(1.0),
                "case {id} {solver:?}: cost {} vs optimum {v}",
                a.cost
            );
        }
        (Expect::Invalid, Err(AssignmentError::InvalidCost { row, col, .. })) => {
            let v = case.costs[[*row, *col]];
            let forbidding = match case.sense {
                Sense::Minimize => f64::INFINITY,
                Sense::Maximize => f64::NEG_INFINITY,
            };
            assert!(
                v.is_nan() || (v.is_infinite() && v != forbidding),
                "case {id}: {v}"
            );
        }
        (Expect::Infeasible, Err(AssignmentError::Infeasible)) => {
            assert!(
                got.unwrap_err()
                    .to_string()
                    .contains("cost matrix is infeasible")
            );
        }
        (Expect::Overflow, Err(AssignmentError::CostOverflow { .. })) => {}
        (e, g) => panic!(
            "case {id} {solver:?} {:?}: expected {e:?}, got {g:?}\n{}",
            case.sense, case.costs
        ),
    }
}

#[test]
fn exact_solvers_follow_scipy() {
    let cases = cases();
    assert!(cases.len() >= 300);
    for case in &cases {
        let c = case.costs.view();
        check(
            case,
            Solver::JonkerVolgenant,
            jonker_volgenant(c, case.sense),
            1e-12,
        );
        for s in [Solver::Hungarian, Solver::BruteForce] {
            check(case, s, solve(c, s, case.sense, Exec::Cpu), 1e-12);
        }
        check(
            case,
            Solver::BruteForce,
            brute_force_exec(c, case.sense, Exec::Auto),
            1e-12,
        );
        // the auction is exact on integers only: within its float gap of the optimum
        let range = c
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let n = c.nrows().max(c.ncols()) as f64;
        let gap = (range.1 - range.0).max(1.0) * n * 1e-8;
        let got = solve(c, Solver::Auction, case.sense, Exec::Cpu);
        if let (Expect::Cost(v), Ok(a)) = (&case.expect, &got) {
            check_assignment(case, a);
            assert!((a.cost - v).abs() <= gap, "case {} auction", case.id);
        } else {
            check(case, Solver::Auction, got, 0.0);
        }
        // scipy's own assignment costs what ours does
        if let (Some(cols), Expect::Cost(_), Ok(a)) = (
            &case.scipy_cols,
            &case.expect,
            &jonker_volgenant(c, case.sense),
        ) {
            let theirs: f64 = cols
                .iter()
                .enumerate()
                .filter(|(_, j)| **j >= 0)
                .map(|(i, &j)| case.costs[[i, j as usize]])
                .sum();
            assert!((theirs - a.cost).abs() <= 1e-12 * theirs.abs().max(1.0));
        }
    }
}

#[test]
fn heuristics_and_batches_validate_the_same_way() {
    for case in cases() {
        let c = case.costs.view();
        for s in [Solver::Greedy, Solver::Random { seed: 3 }] {
            let got = solve(c, s, case.sense, Exec::Cpu);
            match (&case.expect, got) {
                (Expect::Invalid, Err(AssignmentError::InvalidCost { .. })) => {}
                (Expect::Invalid, other) => panic!("case {} {s:?}: {other:?}", case.id),
                (_, Err(AssignmentError::InvalidCost { .. })) => {
                    panic!("case {} {s:?}: a valid matrix refused", case.id)
                }
                (_, Ok(a)) => check_assignment(&case, &a),
                _ => {} // infeasible, incomplete or overflowing: heuristics may say either
            }
        }
        let batch = solve_batch(&[c, c], Solver::JonkerVolgenant, case.sense, Exec::Cpu);
        for got in batch {
            check(&case, Solver::JonkerVolgenant, got, 1e-12);
        }
    }
}

/// scipy's `test_constant_cost_matrix` (its issue 11602): on a constant matrix each solver but
/// the auction
/// returns the identity, `row i -> column i`, square or rectangular, in both senses. The
/// auction is left out: its ties fall to the order of the (parallel) bids, as documented.
#[test]
fn constant_cost_matrices_give_the_identity_as_in_scipy() {
    use assignment::{Sense, Solver, solve};
    use gpu_runtime::Exec;
    for (r, c) in [
        (8usize, 8usize),
        (1, 1),
        (3, 5),
        (5, 3),
        (1, 4),
        (64, 64),
        (40, 70),
    ] {
        for value in [1.0f64, 0.0, -2.5, 1e300] {
            let m = ndarray::Array2::<f64>::from_elem((r, c), value);
            for solver in [
                Solver::JonkerVolgenant,
                Solver::Hungarian,
                Solver::BruteForce,
                Solver::Greedy,
            ] {
                if solver == Solver::BruteForce && r.max(c) > 8 {
                    continue;
                }
                for sense in [Sense::Minimize, Sense::Maximize] {
                    let a = solve(m.view(), solver, sense, Exec::Cpu).unwrap();
                    let k = r.min(c);
                    let identity: Vec<usize> = (0..k).collect();
                    assert_eq!(
                        a.pairs(),
                        (identity.clone(), identity),
                        "{r}x{c} of {value}, {solver:?}, {sense:?}"
                    );
                }
            }
        }
    }
}
