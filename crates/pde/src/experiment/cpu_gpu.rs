//! `fhn-cpu-gpu` (the seed's Figs 5 and 6): seconds per explicit iteration against `n` on one
//! CPU thread, on every core and on the GPU (with and without transfers), and the core loop's
//! share.

use std::collections::BTreeMap;
use std::time::Instant;

use gpu_runtime::Exec;
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, GpuUse, Row, median};

use super::{fail, seed_experiment};
use crate::params::FhnParams;
use crate::{PdeError, Scenario, explicit_run};

/// Seconds per explicit iteration on the CPU for `n` nodes: `(total, core)` over `iters`
/// iterations. The total is a fresh run: allocating and initialising the state, the work
/// arrays and the iterations; the core is `iters` more iterations on the same arrays. The
/// median of `repeats`.
fn cpu_iteration(n: usize, iters: u64, repeats: usize) -> Result<(f64, f64), PdeError> {
    let p = FhnParams {
        n,
        length: (n - 1) as f64 * 0.5,
        ..FhnParams::default()
    };
    let (mut totals, mut cores) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        let t0 = Instant::now();
        let mut scratch = crate::explicit::ExplicitScratch::default();
        let mut s = Scenario::Gaussian.initial_state(&p);
        crate::explicit::explicit_run_reusing(&p, &mut s, iters, Exec::Cpu, &mut scratch)?;
        let total = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        crate::explicit::explicit_run_reusing(&p, &mut s, iters, Exec::Cpu, &mut scratch)?;
        let core = t1.elapsed().as_secs_f64();
        std::hint::black_box(&s.v);
        totals.push(total / iters as f64);
        cores.push(core / iters as f64);
    }
    Ok((median(&mut totals), median(&mut cores)))
}

/// `fhn-cpu-gpu`: the seed's Figs 5 and 6. Seconds per explicit iteration (30 iterations, the
/// median of 3 runs) for `n = 2^10 ..= 2^24` (quick: `2^16`): on one CPU thread and on all
/// cores, the total (allocation, initialisation and the loop) and the core loop alone; on the
/// GPU, "w/o tx" (upload once, 30 steps, download once) and "w/ tx" (upload, one step and
/// download every iteration), each with its kernel time. Ratio rows at the largest `n`.
///
/// # Errors
/// A run failing (none expected).
pub fn cpu_gpu(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = cpu_gpu_experiment();
    let hi = ctx.pick(16u32, 24);
    let iters = 30u64;
    let gpu = if ctx.gpu_rows() {
        gpu_runtime::gpu().ok()
    } else {
        None
    };
    let simulated = ctx.gpu == GpuUse::Simulated;
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| ExperimentError::from_display("a one-thread pool", e))?;
    let mut last = BTreeMap::new();
    for k in (10..=hi).step_by(2) {
        let n = 1usize << k;
        ctx.progress(&format!("n = 2^{k}"));
        let repeats = if n >= 1 << 22 { 1 } else { 3 };
        cpu_time_rows(n, iters, repeats, &one_thread, &mut e.rows, &mut last)?;
        let Some(g) = gpu else { continue };
        if simulated && n > 1 << 10 {
            continue; // the simulator is slow: its rows check results, not speed
        }
        gpu_time_rows(ctx, g, n, iters, &mut e.rows, &mut last)?;
    }
    if let Some(r) = ratios_row(&last, simulated) {
        e.rows.push(r);
    }
    cpu_gpu_notes(&mut e, gpu.is_some(), simulated);
    Ok(e)
}

/// The last measurement per backend: `backend -> (n, total, core)` seconds per iteration.
type LastTimes = BTreeMap<&'static str, (usize, f64, f64)>;

/// The `fhn-cpu-gpu` experiment with the seed's words and its ratios, before any run.
fn cpu_gpu_experiment() -> Experiment {
    let mut e = seed_experiment(
        "fhn-cpu-gpu",
        "Wall time of one explicit iteration, the mean of 30, against N (up to 2^24), \
        sequential C# on an i7-2360QM against CUDAfy on a GeForce GT 525m (96 cores). At \
        N = 2^24 'GPU w/o tx' (no intermediate results sent back) is 19x faster than 'GPU w/ \
        tx' and 73x faster than the CPU; the core loop is 3.7% of the CPU's time and 14.9% of \
        the GPU's, and the GPU's core loop is 18x faster than the CPU's (Fig. 6).",
    );
    e.seed_rows.push(
        Row::new()
            .with("kind", "ratios")
            .with("n", 1u64 << 24)
            .with("gpu_wo_tx_vs_w_tx", 19.0)
            .with("gpu_wo_tx_vs_cpu", 73.0)
            .with("cpu_core_share", 0.037)
            .with("gpu_core_share", 0.149)
            .with("core_gpu_vs_cpu", 18.0),
    );
    e
}

/// The CPU rows for `n` nodes: one thread (in `one_thread`) and every core, `iters`
/// iterations, the median of `repeats`; each backend's times also go to `last`.
fn cpu_time_rows(
    n: usize,
    iters: u64,
    repeats: usize,
    one_thread: &rayon::ThreadPool,
    rows: &mut Vec<Row>,
    last: &mut LastTimes,
) -> Result<(), ExperimentError> {
    for (backend, pool) in [("cpu", Some(one_thread)), ("cpu-parallel", None)] {
        let (total, core) = match pool {
            Some(pool) => pool.install(|| cpu_iteration(n, iters, repeats)),
            None => cpu_iteration(n, iters, repeats),
        }
        .map_err(fail("a CPU run"))?;
        rows.push(
            Row::new()
                .with("kind", "time")
                .with("n", n)
                .with("backend", backend)
                .secs("total_s_per_iter", total)
                .secs("core_s_per_iter", core)
                .with("core_share", core / total),
        );
        last.insert(backend, (n, total, core));
    }
    Ok(())
}

/// The GPU rows for `n` nodes on `g`: "w/o tx" (one upload, the steps, one download) and
/// "w/ tx" (upload, one step and download per iteration), `iters` iterations (2 on the
/// simulated driver), each checked against the CPU's answer; both go to `last`.
fn gpu_time_rows(
    ctx: &Context,
    g: &gpu_runtime::Gpu,
    n: usize,
    iters: u64,
    rows: &mut Vec<Row>,
    last: &mut LastTimes,
) -> Result<(), ExperimentError> {
    let simulated = ctx.gpu == GpuUse::Simulated;
    let p = FhnParams {
        n,
        length: (n - 1) as f64 * 0.5,
        ..FhnParams::default()
    };
    let it = if simulated { 2 } else { iters };
    // w/o tx: one upload, `it` steps, one download.
    let mut s = Scenario::Gaussian.initial_state(&p);
    let t0 = Instant::now();
    let tm = crate::explicit_gpu_timing(g, &p, &mut s.v, &mut s.w, 1, it)
        .map_err(fail("the GPU run"))?;
    let total = t0.elapsed().as_secs_f64() / it as f64;
    let core = tm.kernels_only / it as f64;
    // the CPU's answer after the same steps, to check the GPU's
    let mut c = Scenario::Gaussian.initial_state(&p);
    explicit_run(&p, &mut c, it, Exec::Cpu).map_err(fail("the CPU check"))?;
    let agree = s.v.iter().zip(&c.v).all(|(a, b)| (a - b).abs() < 1e-9);
    // The row of `variant`: times per iteration, the kernels' share, the check.
    let time_row = |variant: &str, total: f64, core: f64, share: f64, agree: bool| {
        Row::new()
            .with("kind", "time")
            .with("n", n)
            .on_gpu(ctx)
            .with("variant", variant)
            .secs("total_s_per_iter", total)
            .secs("core_s_per_iter", core)
            .with("core_share", (!simulated).then_some(share))
            .with("matches_cpu", agree)
    };
    rows.push(time_row("w/o tx", total, core, core / total, agree));
    // w/ tx: every iteration uploads, steps and downloads.
    let mut s = Scenario::Gaussian.initial_state(&p);
    let (mut total_tx, mut core_tx) = (0.0, 0.0);
    let t0 = Instant::now();
    for _ in 0..it {
        let tm = crate::explicit_gpu_timing(g, &p, &mut s.v, &mut s.w, 1, 1)
            .map_err(fail("the GPU run"))?;
        core_tx += tm.kernels_only;
    }
    total_tx += t0.elapsed().as_secs_f64();
    let agree_tx = s.v.iter().zip(&c.v).all(|(a, b)| (a - b).abs() < 1e-9);
    rows.push(time_row(
        "w/ tx",
        total_tx / it as f64,
        core_tx / it as f64,
        core_tx / total_tx,
        agree_tx,
    ));
    last.insert("cuda w/o tx", (n, total, core));
    last.insert("cuda w/ tx", (n, total_tx / it as f64, core_tx / it as f64));
    Ok(())
}

/// The ratios row at the largest `n` measured on every backend in `last`, keyed like the
/// seed's row (the GPU's ratios only from a real device at the CPU's `n`).
fn ratios_row(last: &LastTimes, simulated: bool) -> Option<Row> {
    let &(n, cpu_total, cpu_core) = last.get("cpu")?;
    let mut r = Row::new()
        .with("kind", "ratios")
        .with("n", n)
        .with("cpu_core_share", cpu_core / cpu_total);
    if let (Some(&(gn, wo, wo_core)), Some(&(_, w, _)), false) =
        (last.get("cuda w/o tx"), last.get("cuda w/ tx"), simulated)
        && gn == n
    {
        r = r
            .with("gpu_wo_tx_vs_w_tx", w / wo)
            .with("gpu_wo_tx_vs_cpu", cpu_total / wo)
            .with("gpu_core_share", wo_core / wo)
            .with("core_gpu_vs_cpu", cpu_core / wo_core);
    }
    if let Some(&(_, par_total, par_core)) = last.get("cpu-parallel") {
        r = r
            .with("parallel_vs_cpu_total", cpu_total / par_total)
            .with("parallel_vs_cpu_core", cpu_core / par_core);
    }
    Some(r)
}

/// The notes and the chart of `fhn-cpu-gpu`: what the backends and times are, and whether
/// there were GPU rows (`gpu`, `simulated`).
fn cpu_gpu_notes(e: &mut Experiment, gpu: bool, simulated: bool) {
    e.notes.push(
        "backend cpu: one thread (the seed's CPU code was sequential); cpu-parallel: rayon on \
         every core (time-blocked above 2^15 nodes). Our total includes allocating and \
         initialising v and w; the seed's CPU total had 96% outside the core loop, which ours \
         does not reproduce (allocation is cheap here)."
            .into(),
    );
    e.notes.push(
        "GPU w/ tx uploads v and w, runs one step and downloads them every iteration; w/o tx \
         uploads once and downloads once per 30 iterations (the seed's definitions as we read \
         them). On the CPU the core loop is 30 more iterations on the arrays the total \
         allocated. core_s_per_iter on the GPU is CUDA-event time of the kernels alone. Times are \
         medians of 3 runs (one run from 2^22 nodes)."
            .into(),
    );
    if !gpu {
        e.notes
            .push("No usable CUDA device in this run: CPU rows only.".into());
    } else if simulated {
        e.notes.push(
            "Simulated driver: GPU rows at n = 2^10 only, 2 iterations, results checked \
             against the CPU (matches_cpu), no times."
                .into(),
        );
    }
    e.figure = Some(
        FigureSpec::log_lines("n", &["total_s_per_iter", "core_s_per_iter"])
            .title("seconds per explicit iteration (total, and core loop alone)")
            .series(&["backend", "variant"])
            .labels("N (nodes)", "seconds per iteration"),
    );
}
