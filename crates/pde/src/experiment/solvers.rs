//! `fhn-solvers-cpu-gpu` (the seed's Figs 13 and 14): seconds per Crank–Nicolson step and per
//! Jacobian solve against `n`, per tridiagonal solver, on the CPU and the GPU.

use std::time::Instant;

use gpu_runtime::Exec;
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, GpuUse, Row, median};

use super::{fail, seed_experiment, solver_name};
use crate::implicit::NewtonOptions;
use crate::params::{FhnParams, reaction_derivative};
use crate::tridiag::{self, TridiagSolver};
use crate::{Scenario, implicit_run};

/// The Crank–Nicolson Jacobian at the rest state for `n` nodes, `dx = 0.5`, `dt = 0.25`
/// (the matrix every Newton iteration solves, up to the reaction term on the diagonal), and a
/// right-hand side.
fn rest_jacobian(n: usize) -> [Vec<f64>; 4] {
    let (dt, dx) = (0.25, 0.5);
    let h = dt / 2.0;
    let off = -h / (dx * dx);
    let mut a = vec![off; n];
    let mut c = vec![off; n];
    a[0] = 0.0;
    c[n - 1] = 0.0;
    a[n - 1] = 2.0 * off;
    c[0] = 2.0 * off;
    let b: Vec<f64> = (0..n)
        .map(|i| {
            let v = 0.5 + 0.5 * (i as f64 * 0.01).sin();
            1.0 + 2.0 * h / (dx * dx) - h * reaction_derivative(v, 0.01)
        })
        .collect();
    let d: Vec<f64> = (0..n).map(|i| ((i % 17) as f64 - 8.0) * 1e-3).collect();
    [a, b, c, d]
}

/// `fhn-solvers-cpu-gpu`: the seed's Figs 13 and 14. Against `n` (`2^10 ..= 2^22`; quick
/// `2^16`), `dx = 0.5`, `dt = 0.25`: seconds per Crank–Nicolson step of the Gaussian scenario
/// (10 steps; on the GPU device-resident, one upload and one download) with Thomas, cyclic
/// reduction and PCR on the CPU and PCR and cyclic reduction on the GPU (Fig. 13); and the
/// seconds of one Jacobian solve alone (the median of 5; on the GPU CUDA-event time without
/// transfers, and with them) (Fig. 14).
///
/// # Errors
/// A run failing (none expected).
pub fn solvers_cpu_gpu(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = solvers_experiment();
    let hi = ctx.pick(16u32, 22);
    let gpu = ctx.gpu_rows();
    let simulated = ctx.gpu == GpuUse::Simulated;
    let cpu_solvers = [
        TridiagSolver::Thomas,
        TridiagSolver::CyclicReduction,
        TridiagSolver::Pcr,
    ];
    let gpu_solvers = [TridiagSolver::Pcr, TridiagSolver::CyclicReduction];
    let steps = 10u64;
    for k in (10..=hi).step_by(2) {
        let n = 1usize << k;
        ctx.progress(&format!("n = 2^{k}"));
        let p = FhnParams {
            n,
            length: (n - 1) as f64 * 0.5,
            dt: 0.25,
            ..FhnParams::default()
        };
        // CPU PCR is O(n log n) per solve: up to 2^18 nodes
        let mut runs: Vec<(TridiagSolver, Exec)> = cpu_solvers
            .iter()
            .filter(|&&s| s != TridiagSolver::Pcr || n <= 1 << 18)
            .map(|&s| (s, Exec::Cpu))
            .collect();
        if gpu && !(simulated && n > 1 << 10) {
            runs.extend(gpu_solvers.iter().map(|&s| (s, Exec::Cuda)));
        }
        let [a, b, c, d] = rest_jacobian(n);
        let reference = tridiag::thomas(&a, &b, &c, &d)
            .map_err(|e| ExperimentError::from_display("the reference solve", e))?;
        for (solver, exec) in runs {
            let on_gpu = exec == Exec::Cuda;
            // Fig. 13: whole implicit steps.
            let s = Scenario::Gaussian.initial_state(&p);
            let opts = NewtonOptions {
                solver,
                ..NewtonOptions::default()
            };
            let st_steps = if simulated && on_gpu { 2 } else { steps };
            let mut per = Vec::new();
            let mut st = None;
            for _ in 0..if n >= 1 << 18 || simulated { 1 } else { 3 } {
                let mut s = s.clone();
                let t0 = Instant::now();
                st = Some(
                    implicit_run(&p, &mut s, st_steps, opts, exec)
                        .map_err(fail("an implicit run"))?,
                );
                per.push(t0.elapsed().as_secs_f64() / st_steps as f64);
            }
            let per_step = median(&mut per);
            let st = st.expect("one run at least");
            e.rows.push(
                Row::new()
                    .with("kind", "run")
                    .with("n", n)
                    .with("solver", solver_name(solver))
                    .on_backend(ctx, on_gpu)
                    .secs("step_s", per_step)
                    .with("newton_per_step", st.mean_iterations()),
            );
            // Fig. 14: one Jacobian solve.
            let repeats = if n >= 1 << 20 { 3 } else { 5 };
            let (mut solve, mut with_tx) = (Vec::new(), Vec::new());
            let mut max_err = 0.0f64;
            for _ in 0..repeats {
                let x = if on_gpu {
                    let g = gpu_runtime::gpu()
                        .map_err(|e| ExperimentError::from_display("the GPU", e))?;
                    let (x, tm) = crate::tridiag_gpu_timing(g, &a, &b, &c, &d, solver)
                        .map_err(|e| ExperimentError::from_display("a GPU solve", e))?;
                    solve.push(tm.solve_only);
                    with_tx.push(tm.with_transfers);
                    x
                } else {
                    let t0 = Instant::now();
                    let (x, _) = tridiag::solve(&a, &b, &c, &d, solver, Exec::Cpu)
                        .map_err(|e| ExperimentError::from_display("a CPU solve", e))?;
                    solve.push(t0.elapsed().as_secs_f64());
                    x
                };
                max_err = x
                    .iter()
                    .zip(&reference)
                    .fold(max_err, |m, (p, q)| m.max((p - q).abs()));
                if simulated && on_gpu {
                    break;
                }
            }
            let mut row = Row::new()
                .with("kind", "solve")
                .with("n", n)
                .with("solver", solver_name(solver))
                .on_backend(ctx, on_gpu)
                .secs("solve_s", median(&mut solve));
            if on_gpu {
                row = row.secs("solve_with_transfers_s", median(&mut with_tx));
            }
            e.rows.push(row.with("max_error_vs_thomas", max_err));
        }
    }
    solvers_notes(&mut e, gpu);
    Ok(e)
}

/// The `fhn-solvers-cpu-gpu` experiment with the seed's words and ratios, before any run.
fn solvers_experiment() -> Experiment {
    let mut e = seed_experiment(
        "fhn-solvers-cpu-gpu",
        "Fig. 13: sequential Thomas and cyclic reduction perform equally well on the \
        CPU (whole implicit runs); parallel cyclic reduction on the GPU shows no significant \
        gain. Fig. 14: the Jacobian solve alone (no initialisation or transfers), parallel \
        cyclic reduction on the GPU is 4-5x faster than both sequential CPU solvers. (C# on an \
        i7-2360QM, CUDAfy on a GeForce GT 525m; the adjustments go back to the host every \
        Newton iteration.)",
    );
    for ratio in [4.0, 5.0] {
        e.seed_rows.push(
            Row::new()
                .with("kind", "ratio")
                .with("solve_gpu_cr_vs_cpu", ratio),
        );
    }
    e
}

/// The notes and the chart of `fhn-solvers-cpu-gpu`: what runs where, how the Jacobian is
/// checked, and whether there were GPU rows (`gpu`).
fn solvers_notes(e: &mut Experiment, gpu: bool) {
    e.notes.push(
        "On the GPU our implicit run is device-resident (v, w and the Newton system stay on \
         the device; only the 8-byte update norm comes back per Newton iteration), where the \
         seed sent the adjustments back every iteration. GPU `thomas` is not a row: on the \
         GPU a single system runs as PCR (up to 1024 rows) or the PCR-Thomas hybrid."
            .into(),
    );
    e.notes.push(
        "The Jacobian of Fig. 14 is a Crank-Nicolson Newton matrix (dt = 0.25, dx = 0.5, a \
         smooth v in the reaction term); every solver's answer is checked against Thomas \
         (max_error_vs_thomas). CPU pcr is O(n log n) PCR (rows up to 2^18 nodes); cpu rows \
         run on one thread (the solvers are sequential). Times: medians of 3 (one run from \
         2^18 nodes; solves: medians of 5, 3 from 2^20)."
            .into(),
    );
    if !gpu {
        e.notes
            .push("No usable CUDA device in this run: CPU rows only.".into());
    }
    e.figure = Some(
        FigureSpec::log_lines("n", &["step_s", "solve_s"])
            .title("seconds per Crank-Nicolson step (step_s) and per Jacobian solve (solve_s)")
            .series(&["backend", "solver"])
            .labels("N (nodes)", "seconds"),
    );
}
