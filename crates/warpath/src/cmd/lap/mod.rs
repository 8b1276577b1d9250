//! `warpath lap` (in `solve`) and `warpath lap-experiment` (in `experiment`), from the
//! assignment crate: one file per subcommand; here the rows of `warpath demo` (each result
//! checked by the assignment crate's `verify`).

use std::time::Instant;

use assignment::generate::{exp_matrix, int_matrix, uniform_matrix};
use assignment::ndarray::Array2;
use assignment::{Sense, Solver, solve, verify};
use gpu_runtime::{Backend, Exec};

use crate::report::{DemoRow, DemoSize, Rows};

mod experiment;
mod solve;
mod sparse_input;

pub(crate) use experiment::{ExperimentArgs, run_experiment};
pub(crate) use solve::{Args, run};

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
                    Err(e) => row.with_note(e.to_string()),
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
