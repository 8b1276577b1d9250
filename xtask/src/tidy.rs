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
//! 6. No module cycles: in every crate (`crates/*/src`, `xtask/src`, `benches/src`), the
//!    top-level modules refer to each other without a cycle (`cycles.rs`).
//! 7. No hand-written function over 150 lines, no hand-written file over 1,000
//!    (`lengths.rs`; generated files and the one-ISA SIMD files of [`ONE_ISA_FILES`] apart).
//!
//! Checks 6 and 7 landed while older code still broke them: the violations known then are
//! listed in [`ALLOWED_CYCLES`], [`ALLOWED_LONG_FUNCTIONS`] and [`ALLOWED_LONG_FILES`]
//! (issue 50: to be removed, entry by entry, as each is fixed). Tidy fails on any violation
//! not listed, and on a listed one that is gone (so the lists only shrink).

mod cycles;
mod lengths;
mod source;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use lengths::{MAX_FILE_LINES, MAX_FUNCTION_LINES};

/// Module cycles tolerated: a crate's source folder and the modules of one cycle (a cycle
/// found among a subset of a listed set passes). Empty: the last one (gpu-runtime's) is gone,
/// and a new cycle fails the check.
const ALLOWED_CYCLES: &[(&str, &[&str])] = &[];

/// Functions over [`MAX_FUNCTION_LINES`] lines tolerated: file and function name. Empty
/// since issue 50 split the last ones; a new long function fails the check.
const ALLOWED_LONG_FUNCTIONS: &[(&str, &str)] = &[];

/// Files over [`MAX_FILE_LINES`] lines tolerated. Empty since issue 50 split the last ones; a
/// new long file fails the check (the one-ISA files below are exempt for good).
const ALLOWED_LONG_FILES: &[&str] = &[];

/// One-ISA SIMD files, exempt from the length check for good: each is one instruction set's
/// version of kernels whose structure another file explains, and splitting it would scatter
/// the intrinsics of one ISA.
const ONE_ISA_FILES: &[&str] = &[
    // the AVX-512 and AVX2 partitions and sorting networks of the vectorized quicksort
    // (`mod.rs` explains the method; the two files are the same method for two ISAs)
    "crates/gpu-primitives/src/simd_sort/avx512.rs",
    "crates/gpu-primitives/src/simd_sort/avx2.rs",
];

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
    problems.extend(cycle_problems(root, ALLOWED_CYCLES)?);
    problems.extend(length_problems(
        root,
        ALLOWED_LONG_FUNCTIONS,
        ALLOWED_LONG_FILES,
    )?);
    Ok(problems)
}

/// The crates' source folders: `crates/*/src`, `xtask/src`, `benches/src`.
fn crate_sources(root: &Path) -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for e in fs::read_dir(root.join("crates"))? {
        let src = e?.path().join("src");
        if src.is_dir() {
            dirs.push(src);
        }
    }
    dirs.push(root.join("xtask/src"));
    dirs.push(root.join("benches/src"));
    dirs.sort();
    Ok(dirs)
}

/// `path` relative to `root`, with `/`.
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The files of the crate whose source folder is `src`: `(path under src, path shown,
/// text)`.
fn crate_files(root: &Path, src: &Path) -> Result<Vec<(String, String, String)>> {
    let mut paths = Vec::new();
    rust_files(src, &mut paths)?;
    paths.sort();
    let mut files = Vec::new();
    for p in &paths {
        files.push((relative(src, p), relative(root, p), fs::read_to_string(p)?));
    }
    Ok(files)
}

/// `cargo xtask tidy --modules SRC`: prints the top-level module graph of the crate whose
/// source folder is `SRC` (each edge with its number of references) and its cycles, to see
/// what to move when breaking one.
pub(crate) fn print_modules(root: &Path, src: &Path) -> Result<()> {
    let src = if src.is_absolute() {
        src.to_path_buf()
    } else {
        root.join(src)
    };
    if !src.is_dir() {
        bail!(
            "{} is not a folder (a crate's src, e.g. crates/assembly/src)",
            src.display()
        );
    }
    let graph = cycles::module_graph(&crate_files(root, &src)?);
    let mut from = "";
    for ((a, b), at) in &graph.edges {
        if a != from {
            println!("{a}");
            from = a;
        }
        let n = at.len();
        println!("  -> {b} ({n} place{})", if n == 1 { "" } else { "s" });
    }
    let found = cycles::cycles(&graph);
    if found.is_empty() {
        println!("no module cycle");
    }
    for c in found {
        println!("cycle: {}", c.path.join(" -> "));
    }
    Ok(())
}

/// Check 6: module cycles not in `allowed` ([`ALLOWED_CYCLES`]), and entries there that
/// match no cycle.
fn cycle_problems(root: &Path, allowed: &[(&str, &[&str])]) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut used = vec![false; allowed.len()];
    for src in crate_sources(root)? {
        let krate = relative(root, &src);
        for c in cycles::cycles(&cycles::module_graph(&crate_files(root, &src)?)) {
            let listed = allowed.iter().position(|(k, m)| {
                *k == krate && c.modules.iter().all(|x| m.contains(&x.as_str()))
            });
            if let Some(a) = listed {
                used[a] = true;
                continue;
            }
            let mut p = format!(
                "{krate}: module cycle {} (invariant 6): move what one side needs into a small \
                 module both import, or turn one reference around, until no module of the cycle \
                 leads back to itself; the references between its modules:",
                c.path.join(" -> ")
            );
            for (a, b, at) in &c.edges {
                p.push_str(&format!("\n    {a} -> {b}: {}", at.join(", ")));
            }
            problems.push(p);
        }
    }
    for (a, (krate, modules)) in allowed.iter().enumerate() {
        if !used[a] {
            problems.push(format!(
                "{krate}: the cycle of {modules:?} is gone: remove its entry from ALLOWED_CYCLES \
                 in xtask/src/tidy.rs"
            ));
        }
    }
    Ok(problems)
}

/// Check 7: functions and files too long, not in the allowlists (`functions`, `long_files`:
/// [`ALLOWED_LONG_FUNCTIONS`], [`ALLOWED_LONG_FILES`]); entries there that are fixed.
fn length_problems(
    root: &Path,
    functions: &[(&str, &str)],
    long_files: &[&str],
) -> Result<Vec<String>> {
    let mut files = Vec::new();
    for src in crate_sources(root)? {
        rust_files(&src, &mut files)?;
    }
    rust_files(&root.join("benches/benches"), &mut files)?;
    files.sort();
    let mut problems = Vec::new();
    let mut used_fns = vec![false; functions.len()];
    let mut used_files = vec![false; long_files.len()];
    for f in &files {
        let rel = relative(root, f);
        let text = fs::read_to_string(f)?;
        if lengths::is_generated(&text) || ONE_ISA_FILES.contains(&rel.as_str()) {
            continue;
        }
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            match long_files.iter().position(|a| *a == rel) {
                Some(a) => used_files[a] = true,
                None => problems.push(format!(
                    "{rel}: {lines} lines, over {MAX_FILE_LINES} (invariant 7): split it, one file \
                     per stage or concern (a folder with a `mod.rs` that says which file does what)"
                )),
            }
        }
        for func in lengths::functions(&text) {
            if func.lines <= MAX_FUNCTION_LINES {
                continue;
            }
            match functions
                .iter()
                .position(|(file, name)| *file == rel && *name == func.name)
            {
                Some(a) => used_fns[a] = true,
                None => problems.push(format!(
                    "{rel}:{}: fn {} is {} lines, over {MAX_FUNCTION_LINES} (invariant 7): split \
                     it into named functions, one per step",
                    func.line, func.name, func.lines
                )),
            }
        }
    }
    for (a, (file, name)) in functions.iter().enumerate() {
        if !used_fns[a] {
            problems.push(format!(
                "{file}: fn {name} is no longer over {MAX_FUNCTION_LINES} lines (or is gone): \
                 remove its entry from ALLOWED_LONG_FUNCTIONS in xtask/src/tidy.rs"
            ));
        }
    }
    for (a, file) in long_files.iter().enumerate() {
        if !used_files[a] {
            problems.push(format!(
                "{file} is no longer over {MAX_FILE_LINES} lines (or is gone): remove its entry \
                 from ALLOWED_LONG_FILES in xtask/src/tidy.rs"
            ));
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

    /// A scratch workspace with one crate, `crates/demo/src`, holding `files`.
    fn scratch(name: &str, files: &[(&str, String)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("xtask-tidy-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for (path, text) in files {
            let p = root.join("crates/demo/src").join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        root
    }

    /// Asserts one problem per `(prefix, part)` of `wants`, in order: it starts with the prefix
    /// and holds the part.
    fn assert_problems(p: &[String], wants: &[(&str, &str)]) {
        assert_eq!(p.len(), wants.len(), "{p:?}");
        for (problem, (prefix, part)) in p.iter().zip(wants) {
            assert!(
                problem.starts_with(prefix) && problem.contains(part),
                "{problem}"
            );
        }
    }

    #[test]
    fn a_new_cycle_fails_a_listed_one_passes_a_fixed_one_must_leave_the_list() {
        let root = scratch(
            "cycles",
            &[
                ("lib.rs", "mod a; mod b; mod c;".into()),
                ("a.rs", "use crate::b::X;".into()),
                ("b.rs", "use crate::a::Y;".into()),
                ("c.rs", String::new()),
            ],
        );
        assert_problems(
            &cycle_problems(&root, &[]).unwrap(),
            &[(
                "crates/demo/src: module cycle a -> b -> a",
                "a -> b: crates/demo/src/a.rs:1",
            )],
        );
        let listed: &[(&str, &[&str])] = &[("crates/demo/src", &["a", "b", "c"])];
        assert!(cycle_problems(&root, listed).unwrap().is_empty());
        let stale: &[(&str, &[&str])] = &[
            ("crates/demo/src", &["a", "b"]),
            ("crates/demo/src", &["c", "d"]),
        ];
        assert_problems(
            &cycle_problems(&root, stale).unwrap(),
            &[("", "remove its entry from ALLOWED_CYCLES")],
        );
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn long_functions_and_files_fail_unless_listed_and_generated_files_pass() {
        let long_fn = format!("fn big() {{\n{}}}\n", "    step();\n".repeat(150));
        let long_file = "const X: u8 = 0;\n".repeat(1001);
        let generated = format!("// generated by a tool; do not edit\n{long_file}{long_fn}");
        let root = scratch(
            "lengths",
            &[
                ("lib.rs", "mod a; mod b; mod g;".into()),
                ("a.rs", long_fn.clone()),
                ("b.rs", long_file),
                ("g.rs", generated),
            ],
        );
        assert_problems(
            &length_problems(&root, &[], &[]).unwrap(),
            &[
                ("crates/demo/src/a.rs:1: fn big is 152 lines", ""),
                ("crates/demo/src/b.rs: 1001 lines", ""),
            ],
        );
        let fns: &[(&str, &str)] = &[("crates/demo/src/a.rs", "big")];
        let files: &[&str] = &["crates/demo/src/b.rs", "crates/demo/src/gone.rs"];
        assert_problems(
            &length_problems(&root, fns, files).unwrap(),
            &[("", "gone.rs is no longer over 1000 lines")],
        );
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn comments_do_not_count() {
        let lines: Vec<_> = code_lines("// launch_builder\nlet x = 1; // cudarc\n").collect();
        assert_eq!(lines, vec![(2, "let x = 1; ")]);
    }
}
