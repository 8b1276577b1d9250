//! `cargo xtask <task>`: the project's tasks, in Rust so they run wherever cargo does.
//!
//! - `kernels [--check]`: compile `kernels-cuda/*.cu` to `kernels-cuda/ptx/*.ptx` with nvcc 13.0
//!   from PyPI wheels installed under `target/`; `--check` fails when the committed PTX is stale.
//! - `sim`: the simulated CUDA driver, `target/cuda-sim/libcuda.so`, that runs the GPU code paths
//!   on the CPU (see `kernels-cuda/sim/driver.cpp`).
//! - `gpu-bundle`: release test and bench executables plus `run.sh` in `target/gpu-bundle/`.
//! - `tidy`: the architecture's machine-checkable invariants (see `tidy.rs`).
//! - `fuzz [--seconds N] [TARGET...]`: coverage-guided fuzzing of the readers (see `fuzz.rs`).
//! - `ci`: what `.ci/run` runs (fmt, clippy, kernels --check, tests, simulated GPU tests, Python,
//!   MPI).

mod bundle;
mod ci;
mod fuzz;
mod kernels;
mod launchers;
mod resources;
mod sim;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  kernels [--check]   compile kernels-cuda/*.cu to PTX (installs nvcc 13.0 from PyPI into target/);
                      and kernels-cuda/RESOURCES.md (ptxas registers/spills for sm_80, sm_90);
                      --check fails if either differs from what the sources produce
  sim                 build the simulated CUDA driver target/cuda-sim/libcuda.so (g++); run the
                      GPU tests on the CPU with LD_LIBRARY_PATH=target/cuda-sim WARPATH_SIM=1
  gpu-bundle          build release test + bench executables into target/gpu-bundle/ with run.sh
  tidy [--modules CRATE_SRC]
                      check ARCHITECTURE.md's invariants (harness per .cu, launches only through
                      the generated launchers, cudarc only inside gpu-runtime, no cmd file
                      importing the demo, no module cycle, no function over 150 lines and no
                      file over 1,000); --modules prints one crate's module graph and cycles
  fuzz [--seconds N] [TARGET...]
                      coverage-guided fuzzing of the readers (libFuzzer, stable Rust): builds
                      fuzz/ with coverage into target/fuzz/, replays fuzz/regressions/<target>/,
                      then runs each target N seconds (default 60) from fuzz/corpus/<target>/;
                      targets: table npy edge_list adjacency matrix_market fastx checkpoint
  ci                  run what .ci/run runs: fmt --check, clippy -D warnings, kernels --check,
                      tests, the GPU tests through the simulated driver (sim), the Python
                      package (crates/warpath-py/ci.sh) and the MPI tests (crates/clustering/ci-mpi.sh)
";

fn main() {
    if let Err(e) = run() {
        eprintln!("xtask: error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root()?;
    match args.first().map(String::as_str) {
        Some("kernels") => {
            let check = match args.get(1).map(String::as_str) {
                None => false,
                Some("--check") => true,
                Some(other) => bail!("unknown option `{other}` for kernels\n\n{USAGE}"),
            };
            kernels::run(&root, check)
        }
        Some("sim") => sim::run(&root),
        Some("gpu-bundle") => bundle::run(&root),
        Some("ci") => ci::run(&root),
        Some("tidy") => match (args.get(1).map(String::as_str), args.get(2)) {
            (None, _) => tidy::run(&root),
            (Some("--modules"), Some(src)) => tidy::print_modules(&root, Path::new(src)),
            _ => bail!("usage: cargo xtask tidy [--modules CRATE_SRC]\n\n{USAGE}"),
        },
        Some("fuzz") => fuzz::run(&root, &args[1..]),
        Some("-h" | "--help" | "help") | None => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown task `{other}`\n\n{USAGE}"),
    }
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> Result<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    Ok(manifest
        .parent()
        .context("xtask has no parent directory")?
        .to_path_buf())
}

/// The cargo target directory (respects `CARGO_TARGET_DIR`).
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Runs a command, failing with its command line when it exits non-zero.
fn run_cmd(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Sets the execute bits (the nvcc wheels' binaries, the bundle's executables).
#[cfg(unix)]
fn make_executable(p: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perm = std::fs::metadata(p)?.permissions();
    perm.set_mode(perm.mode() | 0o755);
    std::fs::set_permissions(p, perm)?;
    Ok(())
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<()> {
    Ok(())
}
