//! `cargo xtask ci`: the checks `.ci/run` runs, in order, stopping at the first failure: fmt,
//! clippy, kernels --check, the tests, a short fuzzing campaign of the readers, every seed
//! experiment at its quick size (`warpath reproduce --quick`), the simulated
//! driver and the GPU tests through it, the Python package's pytest suite, MPI.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::{cargo, run_cmd};

/// Name filters of the simulated-GPU test step: a test runs when its name contains any.
pub(crate) const SIM_TEST_FILTERS: &[&str] = &["gpu", "cuda", "sim_"];

pub(crate) fn run(root: &Path) -> Result<()> {
    let cargo_steps: &[(&str, &[&str])] = &[
        ("fmt", &["fmt", "--all", "--check"]),
        (
            "clippy",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
        ),
        ("kernels", &["xtask", "kernels", "--check"]),
        ("tidy", &["xtask", "tidy"]),
        ("test", &["test", "--workspace"]),
        // A short libFuzzer campaign over every reader: the committed corpus and regressions
        // replayed, then 6 s of new inputs per target (`cargo xtask fuzz`; needs only a C++
        // compiler for libFuzzer, as `sim` does).
        ("fuzz", &["xtask", "fuzz", "--seconds", "6"]),
    ];
    let mut steps: Vec<(&str, Command)> = cargo_steps
        .iter()
        .map(|(name, args)| {
            let mut c = cargo();
            c.current_dir(root).args(*args);
            (*name, c)
        })
        .collect();
    // Every seed experiment at its quick size (`warpath reproduce --quick`): fails when one of
    // them fails; the report stays in target/reproduce-quick for reading. It runs the binary
    // the test step built (`cargo run -p warpath` would build the workspace a second time,
    // with the features of `warpath` alone: minutes on two cores).
    let mut reproduce = Command::new(crate::target_dir(root).join("debug").join("warpath"));
    reproduce
        .current_dir(root)
        .args(["reproduce", "--quick", "--out", "target/reproduce-quick"]);
    steps.push(("reproduce-quick", reproduce));
    // Every GPU test again, through the simulated CUDA driver: the real host code and kernels
    // on the CPU. WARPATH_REQUIRE_GPU=1 makes a test that would skip fail instead. GPU tests
    // carry `gpu` or `cuda` in their names (checked by `gpu_tests_are_named_for_the_ci_filter`),
    // the simulator's own tests `sim_`; the kernel harnesses already ran in the test step.
    let mut sim = cargo();
    sim.current_dir(root).args(["xtask", "sim"]);
    steps.push(("sim-build", sim));
    let mut sim_tests = cargo();
    sim_tests
        .current_dir(root)
        // `--tests` takes every target with `test = true`, library unit tests included;
        // `--lib` would also build warpath-py's (`test = false`: it would link libpython).
        .args(["test", "--workspace", "--bins", "--tests", "--"])
        .args(SIM_TEST_FILTERS)
        .args(["--skip", "kernels_in_cpu_simulation"])
        .env("LD_LIBRARY_PATH", sim_library_path(root))
        .env("WARPATH_SIM", "1")
        .env("WARPATH_REQUIRE_GPU", "1")
        .env("WARPATH_SIM_MEM", "1G");
    steps.push(("gpu-tests-simulated", sim_tests));
    // The Python package: a fresh venv, `pip install ./crates/warpath-py`, pytest against
    // scipy, scikit-learn, numpy and NetworkX, then its GPU tests through the simulator.
    let mut python = Command::new("bash");
    python.current_dir(root).arg("crates/warpath-py/ci.sh");
    steps.push(("python", python));
    // clustering's `mpi` feature under mpirun (installs OpenMPI from Debian when missing).
    let mut mpi = Command::new("bash");
    mpi.current_dir(root).arg("crates/clustering/ci-mpi.sh");
    steps.push(("mpi", mpi));

    for (name, mut cmd) in steps {
        let t = Instant::now();
        println!("=== ci: {name}: {cmd:?}");
        run_cmd(&mut cmd).with_context(|| format!("ci step `{name}` failed"))?;
        println!("=== ci: {name} ok in {:.0} s", t.elapsed().as_secs_f64());
    }
    println!("=== ci: all steps passed");
    Ok(())
}

/// `LD_LIBRARY_PATH` with the simulated driver's directory first.
fn sim_library_path(root: &Path) -> std::ffi::OsString {
    let mut path = crate::target_dir(root).join("cuda-sim").into_os_string();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(old);
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every test that asks for a GPU (`gpu_for_test`) must have a name the simulated-GPU step
    /// selects, or CI would never run it through the simulator.
    #[test]
    fn gpu_tests_are_named_for_the_ci_filter() {
        let root = crate::workspace_root().unwrap();
        let crates = root.join("crates");
        // The GPU bundle runs every test executable whose tests match `gpu`, this one too, on
        // a machine without the source tree: there is nothing to read there.
        if !crates.is_dir() && std::env::var_os("WARPATH_BUNDLE").is_some() {
            eprintln!(
                "skipped: no source tree at {} (GPU bundle)",
                crates.display()
            );
            return;
        }
        let mut files = Vec::new();
        collect_rs(&crates, &mut files);
        let mut bad = Vec::new();
        let mut checked = 0;
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let mut current_fn = String::new();
            for line in text.lines() {
                let t = line.trim_start();
                if t.starts_with("//") {
                    continue;
                }
                if let Some(i) = t.find("fn ") {
                    let name: String = t[i + 3..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        current_fn = name;
                    }
                }
                if t.contains("gpu_for_test(") && current_fn != "gpu_for_test" {
                    checked += 1;
                    if !SIM_TEST_FILTERS.iter().any(|f| current_fn.contains(f)) {
                        bad.push(format!("{}: fn {current_fn}", file.display()));
                    }
                }
            }
        }
        assert!(
            checked > 20,
            "found only {checked} GPU tests: is the scan broken?"
        );
        assert!(
            bad.is_empty(),
            "GPU tests whose names contain none of {SIM_TEST_FILTERS:?} (rename them):\n{}",
            bad.join("\n")
        );
    }

    fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                collect_rs(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
}
