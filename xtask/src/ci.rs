//! `cargo xtask ci`: the checks `.ci/run` runs, in order, stopping at the first failure.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::{cargo, run_cmd};

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
        ("test", &["test", "--workspace"]),
    ];
    let mut steps: Vec<(&str, Command)> = cargo_steps
        .iter()
        .map(|(name, args)| {
            let mut c = cargo();
            c.current_dir(root).args(*args);
            (*name, c)
        })
        .collect();
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
