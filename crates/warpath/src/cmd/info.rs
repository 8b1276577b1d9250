//! `warpath info`, and the runtime self-test rows of `warpath demo`.

use std::time::Instant;

use anyhow::Result;
use gpu_runtime::{Backend, Exec, axpy, axpy_reference, iota_on_gpu};

use crate::report::{DemoRow, DemoSize, Rows};

/// Arguments of `warpath info`.
#[derive(clap::Args)]
pub(crate) struct Args {}

/// What `WARPATH_BACKEND` means on a machine without a GPU.
fn consequence(backend: &str) -> String {
    match backend.trim().to_ascii_lowercase().as_str() {
        "cuda" | "gpu" => format!(
            "WARPATH_BACKEND={backend}: every run that could use the GPU fails with an error (no \
             fallback to the CPU); unset it or set cpu/auto to run on the CPU"
        ),
        "" | "auto" | "cpu" => {
            format!("warpath runs every algorithm on the CPU (WARPATH_BACKEND={backend})")
        }
        _ => format!(
            "WARPATH_BACKEND={backend} is not one of cpu, cuda, auto: every run fails until it is fixed"
        ),
    }
}

pub(crate) fn run(_args: Args, json: bool) -> Result<()> {
    let backend = std::env::var("WARPATH_BACKEND").unwrap_or_else(|_| "auto".into());
    match gpu_runtime::gpu() {
        Ok(gpu) => {
            let i = gpu.info();
            // cuBLAS: its version where warpath can use it (k-means' products), else why not.
            let blas = match gpu.blas() {
                Ok(b) => serde_json::json!({ "available": true, "version": b.version() }),
                Err(why) => serde_json::json!({ "available": false, "reason": why }),
            };
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "device": i, "cuda": true, "cublas": blas, "warpath_backend": backend
                    })
                );
            } else {
                println!("device {}: {}", i.ordinal, i.name);
                println!(
                    "  compute capability {}.{}",
                    i.compute_capability.0, i.compute_capability.1
                );
                println!("  multiprocessors    {}", i.multiprocessors);
                println!(
                    "  memory             {:.1} GiB free of {:.1} GiB",
                    i.free_memory as f64 / (1u64 << 30) as f64,
                    i.total_memory as f64 / (1u64 << 30) as f64
                );
                println!(
                    "  driver supports    CUDA {}.{}",
                    i.driver_version / 1000,
                    (i.driver_version % 1000) / 10
                );
                match gpu.blas() {
                    Ok(b) => println!("  cuBLAS             version {}", b.version()),
                    Err(why) => println!("  cuBLAS             not used: {why}"),
                }
                println!("  WARPATH_BACKEND    {backend}");
            }
        }
        Err(e) => {
            let consequence = consequence(&backend);
            if json {
                crate::cli_io::print_json!({
                    "cuda": false, "reason": e.to_string(), "warpath_backend": backend,
                    "consequence": consequence,
                });
            } else {
                println!("no CUDA device: {e}");
                println!("{consequence}");
            }
        }
    }
    Ok(())
}

/// Rows of `warpath demo`, the runtime self test: axpy on the CPU, and on the GPU (with iota)
/// when there is one.
pub(crate) fn demo(size: DemoSize, sink: &mut Rows) {
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
    for row in rows {
        sink.push(row);
    }
}
