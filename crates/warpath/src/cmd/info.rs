//! `warpath info`.

use anyhow::Result;

/// Arguments of `warpath info`.
#[derive(clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: Args, json: bool) -> Result<()> {
    let backend = std::env::var("WARPATH_BACKEND").unwrap_or_else(|_| "auto".into());
    match gpu_runtime::gpu() {
        Ok(gpu) => {
            let i = gpu.info();
            if json {
                println!(
                    "{}",
                    serde_json::json!({ "device": i, "cuda": true, "warpath_backend": backend })
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
                println!("  WARPATH_BACKEND    {backend}");
            }
        }
        Err(e) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({ "cuda": false, "reason": e.to_string(), "warpath_backend": backend })
                );
            } else {
                println!("no CUDA device: {e}");
                println!("warpath runs every algorithm on the CPU (WARPATH_BACKEND={backend})");
            }
        }
    }
    Ok(())
}
