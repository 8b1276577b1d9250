//! `warpath info`.

use anyhow::Result;

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
            let consequence = consequence(&backend);
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "cuda": false, "reason": e.to_string(), "warpath_backend": backend,
                        "consequence": consequence,
                    })
                );
            } else {
                println!("no CUDA device: {e}");
                println!("{consequence}");
            }
        }
    }
    Ok(())
}
