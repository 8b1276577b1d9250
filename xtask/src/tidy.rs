//! `cargo xtask tidy`: the invariants of ARCHITECTURE.md that a machine can check.
//!
//! 1. Every `kernels-cuda/<module>.cu` has a simulator harness `kernels-cuda/sim/test_<module>.cpp`
//!    and generated launchers `kernels-cuda/ptx/<module>.rs` (their freshness is
//!    `kernels --check`'s job).
//! 2. Kernels are launched only through the generated launchers: no `launch_builder` and no
//!    driver launch call outside `crates/gpu-runtime/src/launch.rs`.
//! 3. cudarc stays inside gpu-runtime: no other crate names it, and no public item of
//!    gpu-runtime does.
//! 4. GPU host code reaches the device only through gpu-runtime's API: no `.stream()` or
//!    `.function(` of the `Gpu` outside gpu-runtime.
//! 5. The CLI's `cmd` files do not import the demo (the table of demo rows lives in
//!    `cmd/mod.rs`).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for e in fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// Lines of code, without `//` comments (doc comments included), with their 1-based numbers.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let code = match l.find("//") {
            Some(p) => &l[..p],
            None => l,
        };
        (!code.trim().is_empty()).then_some((i + 1, code))
    })
}

/// The problems found in the repository at `root` (empty when tidy).
pub(crate) fn problems(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let kernels = root.join("kernels-cuda");
    for e in fs::read_dir(&kernels)? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "cu") {
            let stem = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if !kernels.join(format!("sim/test_{stem}.cpp")).exists() {
                problems.push(format!(
                    "kernels-cuda/{stem}.cu has no simulator harness kernels-cuda/sim/test_{stem}.cpp"
                ));
            }
            if !kernels.join(format!("ptx/{stem}.rs")).exists() {
                problems.push(format!(
                    "kernels-cuda/{stem}.cu has no launchers kernels-cuda/ptx/{stem}.rs (run `cargo xtask kernels`)"
                ));
            }
        }
    }

    let mut files = Vec::new();
    for d in ["crates", "benches", "xtask/src"] {
        rust_files(&root.join(d), &mut files)?;
    }
    files.sort();
    let launch_file = Path::new("crates/gpu-runtime/src/launch.rs");
    let this_file = Path::new("xtask/src/tidy.rs");
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        if rel == this_file {
            continue;
        }
        let text = fs::read_to_string(f)?;
        let in_runtime = rel.starts_with("crates/gpu-runtime");
        let in_cli_cmd = rel.starts_with("crates/warpath/src/cmd");
        for (n, code) in code_lines(&text) {
            let at = format!("{}:{n}", rel.display());
            if (code.contains("launch_builder") || code.contains("launch_kernel("))
                && rel != launch_file
            {
                problems.push(format!(
                    "{at}: a hand-written kernel launch; call the generated launcher (gpu_runtime::kernels!)"
                ));
            }
            if code.contains("cudarc") && !in_runtime && !rel.starts_with("xtask") {
                problems.push(format!("{at}: cudarc outside gpu-runtime"));
            }
            if in_runtime
                && rel.starts_with("crates/gpu-runtime/src")
                && code.trim_start().starts_with("pub ")
                && code.contains("cudarc")
            {
                problems.push(format!("{at}: cudarc in a public item of gpu-runtime"));
            }
            if !in_runtime
                && !rel.starts_with("xtask")
                && (code.contains("gpu.stream()") || code.contains("gpu.function("))
            {
                problems.push(format!(
                    "{at}: the Gpu's stream or functions outside gpu-runtime; use its buffer API and the launchers"
                ));
            }
            if in_cli_cmd
                && rel.file_name().is_some_and(|n| n != "demo.rs")
                && (code.contains("cmd::demo")
                    || code.contains("super::demo")
                    || code.contains("use demo"))
            {
                problems.push(format!(
                    "{at}: a cmd file imports the demo; demo rows belong in cmd/mod.rs's table"
                ));
            }
        }
    }
    Ok(problems)
}

pub(crate) fn run(root: &Path) -> Result<()> {
    let problems = problems(root)?;
    if !problems.is_empty() {
        bail!(
            "tidy: {} problem(s)\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
    println!("tidy: ok");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_is_tidy() {
        let root = crate::workspace_root().unwrap();
        let p = problems(&root).unwrap();
        assert!(p.is_empty(), "{}", p.join("\n"));
    }

    #[test]
    fn comments_do_not_count() {
        let lines: Vec<_> = code_lines("// launch_builder\nlet x = 1; // cudarc\n").collect();
        assert_eq!(lines, vec![(2, "let x = 1; ")]);
    }
}
