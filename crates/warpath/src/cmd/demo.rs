//! `warpath demo`: every algorithm on a built-in input, verified, in one table.

use std::time::Instant;

use anyhow::Result;
use gpu_runtime::{Backend, Exec, axpy, axpy_reference, iota_on_gpu};

use crate::report::{AlreadyReported, DemoRow, Rows};

/// How large the built-in inputs are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DemoSize {
    /// Finishes within a minute on a 2-core machine without a GPU.
    Small,
    /// Inputs large enough for the GPU to pay.
    Large,
}

/// Arguments of `warpath demo`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Input sizes.
    #[arg(long, value_enum, default_value_t = DemoSize::Small)]
    size: DemoSize,
}

pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    let started = Instant::now();
    // Rows print as they finish (the table under --json waits for the end).
    let mut sink = Rows::new(json);
    // In the order of the crates: runtime, primitives, graphs, permutations, assignment,
    // clustering, PDE.
    for row in runtime_demo(args.size) {
        sink.push(row);
    }
    super::sort::demo(args.size, &mut sink);
    super::graph::demo(args.size, &mut sink);
    super::perm::demo(args.size, &mut sink);
    super::lap::demo(args.size, &mut sink);
    super::kmeans::demo(args.size, &mut sink);
    super::fhn::demo(args.size, &mut sink);
    let rows = sink.rows;
    let failed = rows.iter().filter(|r| !r.verified).count();
    if json {
        println!(
            "{}",
            serde_json::json!({
                "rows": rows,
                "verified": failed == 0,
                "seconds": started.elapsed().as_secs_f64(),
            })
        );
    } else {
        println!(
            "demo: {} algorithm runs, {} verified, {} failed, {:.1} s",
            rows.len(),
            rows.len() - failed,
            failed,
            started.elapsed().as_secs_f64()
        );
    }
    if failed > 0 {
        return Err(AlreadyReported(format!("{failed} demo run(s) failed verification")).into());
    }
    Ok(())
}

/// The runtime self test: axpy on the CPU, and on the GPU (with iota) when there is one.
fn runtime_demo(size: DemoSize) -> Vec<DemoRow> {
    let n = match size {
        DemoSize::Small => 1 << 20,
        DemoSize::Large => 1 << 26,
    };
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let mut expect = y0.clone();
    axpy_reference(2.0, &x, &mut expect);

    let mut rows = Vec::new();
    let mut y = y0.clone();
    let t = Instant::now();
    match axpy(2.0, &x, &mut y, Exec::Auto) {
        Ok(b) => rows.push(DemoRow::new(
            "runtime self-test (axpy)",
            n as u64,
            b,
            t.elapsed(),
            y == expect,
        )),
        Err(e) => rows.push(DemoRow::failed("runtime self-test (axpy)", n as u64, e)),
    }
    match gpu_runtime::gpu() {
        Ok(gpu) => {
            let mut y = y0;
            let t = Instant::now();
            let row = match axpy(2.0, &x, &mut y, Exec::Cuda) {
                Ok(b) => DemoRow::new(
                    "runtime self-test (axpy)",
                    n as u64,
                    b,
                    t.elapsed(),
                    y == expect,
                )
                .with_note("includes transfers"),
                Err(e) => DemoRow::failed("runtime self-test (axpy)", n as u64, e),
            };
            rows.push(row);
            let t = Instant::now();
            let row = match iota_on_gpu(gpu, n) {
                Ok(v) => DemoRow::new(
                    "runtime self-test (iota)",
                    n as u64,
                    Backend::Cuda,
                    t.elapsed(),
                    v.iter().enumerate().all(|(i, &x)| x == i as u32),
                ),
                Err(e) => DemoRow::failed("runtime self-test (iota)", n as u64, e),
            };
            rows.push(row);
        }
        Err(e) => {
            if let Some(r) = rows.last_mut() {
                let sep = if r.note.is_empty() { "" } else { "; " };
                r.note = format!("{}{sep}GPU rows skipped: {e}", r.note);
            }
        }
    }
    rows
}
