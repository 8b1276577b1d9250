//! `cargo xtask ci`: the checks `.ci/run` runs, in order, stopping at the first failure.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::{cargo, run_cmd};

pub(crate) fn run(root: &Path) -> Result<()> {
    let steps: &[(&str, &[&str])] = &[
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
    for (name, args) in steps {
        let t = Instant::now();
        println!("=== ci: {name}: cargo {}", args.join(" "));
        run_cmd(cargo().current_dir(root).args(*args))
            .with_context(|| format!("ci step `{name}` failed"))?;
        println!("=== ci: {name} ok in {:.0} s", t.elapsed().as_secs_f64());
    }
    println!("=== ci: all steps passed");
    Ok(())
}
