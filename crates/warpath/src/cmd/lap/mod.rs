//! `warpath lap` (in `solve`) and `warpath lap-experiment` (in `experiment`), from the
//! assignment crate: one file per subcommand; here the independent check of a solution that
//! `lap` and the demo share, and the rows of `warpath demo`.

use std::time::Instant;

use assignment::experiments::{exp_matrix, int_matrix, uniform_matrix};
use assignment::ndarray::{Array2, ArrayView2};
use assignment::{
    Assignment, Cost, CostClass, Sense, Solver, brute_force, jonker_volgenant, solve,
};
use gpu_runtime::{Backend, Exec};

use crate::report::{DemoRow, DemoSize, Rows};

mod experiment;
mod solve;
mod sparse_input;

pub(crate) use experiment::{ExperimentArgs, run_experiment};
pub(crate) use solve::{Args, run};

/// Independent check of a result: a valid complete assignment whose cost is the sum of its
/// entries; for exact solvers, optimal (the dual certificate when there is one, brute force
/// for tiny problems, otherwise agreement with Jonker–Volgenant).
fn verify<T: Cost>(
    c: ArrayView2<'_, T>,
    a: &Assignment,
    solver: Solver,
    sense: Sense,
) -> Result<(), String> {
    let (r, k) = c.dim();
    // the entries as f64, NaN for a forbidden pair (integers here are at most 2^53: exact)
    let value = |i: usize, j: usize| match c[[i, j]].classify_cost(sense) {
        CostClass::Finite(v) => v,
        _ => f64::NAN,
    };
    if a.row_to_col.len() != r {
        return Err("wrong number of rows".into());
    }
    let mut used = vec![false; k];
    let mut entries = Vec::with_capacity(r.min(k));
    for (i, j) in a.row_to_col.iter().enumerate() {
        if let Some(j) = *j {
            if j >= k || used[j] {
                return Err(format!("column {j} invalid or used twice"));
            }
            used[j] = true;
            if !value(i, j).is_finite() {
                return Err(format!("forbidden pair ({i}, {j}) used"));
            }
            entries.push(value(i, j));
        }
    }
    let count = entries.len();
    // Summed at the scale of the largest entry, so that huge costs whose total is finite
    // (the library accepts them) cannot overflow the check.
    let big = entries.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let total = if big > 0.0 {
        entries.iter().map(|v| v / big).sum::<f64>() * big
    } else {
        0.0
    };
    if count != r.min(k) {
        return Err(format!("{count} pairs assigned, {} needed", r.min(k)));
    }
    let scale = c
        .iter()
        .filter_map(|v| match v.classify_cost(sense) {
            CostClass::Finite(v) => Some(v),
            _ => None,
        })
        .fold(1.0f64, |m, v| m.max(v.abs()));
    let tol = 1e-9 * scale * (r + k + 1) as f64;
    if (total - a.cost).abs() > tol {
        return Err(format!(
            "reported cost {} but the pairs sum to {total}",
            a.cost
        ));
    }
    let exact = solver.is_exact() || solver == Solver::Auction;
    if !exact {
        return Ok(());
    }
    let sign = if sense == Sense::Minimize { 1.0 } else { -1.0 };
    if let Some(d) = &a.duals {
        for i in 0..r {
            for j in 0..k {
                let v = value(i, j);
                if v.is_finite() && sign * (v - d.row[i] - d.col[j]) < -tol {
                    return Err(format!("dual constraint violated at ({i}, {j})"));
                }
            }
        }
        let dual: f64 = d.row.iter().sum::<f64>() + d.col.iter().sum::<f64>();
        if (dual - a.cost).abs() > tol {
            return Err(format!("duality gap: dual {dual} vs cost {}", a.cost));
        }
        return Ok(());
    }
    let reference = if r.max(k) <= 8 {
        brute_force(c, sense)
    } else {
        jonker_volgenant(c, sense)
    }
    .map_err(|e| e.to_string())?;
    // The auction on non-integer costs is within AUCTION_FLOAT_GAP * range of the optimum.
    let range = c
        .iter()
        .filter_map(|v| match v.classify_cost(sense) {
            CostClass::Finite(v) => Some(v),
            _ => None,
        })
        .fold((f64::INFINITY, f64::NEG_INFINITY), |m, v| {
            (m.0.min(v), m.1.max(v))
        });
    let allowed = tol + assignment::AUCTION_FLOAT_GAP * (range.1 - range.0).max(0.0) * 2.0;
    if (reference.cost - a.cost).abs() > allowed {
        return Err(format!(
            "cost {} but the optimum is {}",
            a.cost, reference.cost
        ));
    }
    Ok(())
}

/// Rows for `warpath demo`: every solver on a built-in input, each verified independently.
pub(crate) fn demo(size: DemoSize, rows: &mut Rows) {
    let (n_jv, n_cubic, n_auction) = match size {
        DemoSize::Small => (1000, 300, 300),
        DemoSize::Large => (5000, 1000, 2000),
    };
    let mut run = |label: &str, c: &Array2<f64>, solver: Solver, exec: Exec, backend: Backend| {
        let t = Instant::now();
        let n = c.nrows() as u64;
        match solve(c.view(), solver, Sense::Minimize, exec) {
            Ok(a) => {
                let elapsed = t.elapsed();
                let check = verify(c.view(), &a, solver, Sense::Minimize);
                let row = DemoRow::new(label, n, backend, elapsed, check.is_ok());
                rows.push(match check {
                    Ok(()) => row.with_note(format!("cost {:.4}", a.cost)),
                    Err(e) => row.with_note(e),
                });
            }
            Err(e) => rows.push(DemoRow::failed(label, n, e)),
        }
    };
    let big = uniform_matrix(n_jv, n_jv, 7);
    run(
        "assignment: jonker-volgenant",
        &big,
        Solver::JonkerVolgenant,
        Exec::Cpu,
        Backend::Cpu,
    );
    // Greedy sorts all n^2 entries (24 bytes each): keep it at most 2000 x 2000.
    let g = if n_jv > 2000 {
        uniform_matrix(2000, 2000, 7)
    } else {
        big
    };
    run(
        "assignment: greedy",
        &g,
        Solver::Greedy,
        Exec::Cpu,
        Backend::Cpu,
    );
    let mid = uniform_matrix(n_cubic, n_cubic, 8);
    run(
        "assignment: hungarian",
        &mid,
        Solver::Hungarian,
        Exec::Cpu,
        Backend::Cpu,
    );
    let ints = int_matrix(n_auction, n_auction, 1000, 9).mapv(|v| v as f64);
    run(
        "assignment: auction (integer, exact)",
        &ints,
        Solver::Auction,
        Exec::Cpu,
        Backend::Cpu,
    );
    if gpu_runtime::gpu().is_ok() {
        run(
            "assignment: auction (integer, exact)",
            &ints,
            Solver::Auction,
            Exec::Cuda,
            Backend::Cuda,
        );
    }
    let tiny = exp_matrix(8, 8, 10);
    run(
        "assignment: brute force",
        &tiny,
        Solver::BruteForce,
        Exec::Cpu,
        Backend::Cpu,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_catches_wrong_assignments() {
        let c = Array2::from_shape_vec((2, 2), vec![1.0, 2.0, 3.0, 1.0]).unwrap();
        let best = solve(
            c.view(),
            Solver::JonkerVolgenant,
            Sense::Minimize,
            Exec::Cpu,
        )
        .unwrap();
        assert_eq!(
            verify(c.view(), &best, Solver::JonkerVolgenant, Sense::Minimize),
            Ok(())
        );
        let mut worse = best.clone();
        worse.row_to_col = vec![Some(1), Some(0)];
        worse.cost = 5.0;
        worse.duals = None;
        // a valid assignment, but not optimal: fine for greedy, not for an exact solver
        assert_eq!(
            verify(c.view(), &worse, Solver::Greedy, Sense::Minimize),
            Ok(())
        );
        assert!(verify(c.view(), &worse, Solver::Hungarian, Sense::Minimize).is_err());
        let mut wrong_cost = worse.clone();
        wrong_cost.cost = 4.0;
        assert!(verify(c.view(), &wrong_cost, Solver::Greedy, Sense::Minimize).is_err());
        let mut twice = worse;
        twice.row_to_col = vec![Some(0), Some(0)];
        assert!(verify(c.view(), &twice, Solver::Greedy, Sense::Minimize).is_err());
    }
}
