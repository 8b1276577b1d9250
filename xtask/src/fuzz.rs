//! `cargo xtask fuzz [--seconds N] [TARGET...]`: coverage-guided fuzzing of every reader with
//! libFuzzer, on stable Rust.
//!
//! cargo-fuzz needs nightly (it passes `-Z` flags), but what it asks of rustc exists on
//! stable: the `sancov-module` LLVM pass with libFuzzer's coverage options (inline 8-bit
//! counters, the PC table, compare tracing). This task passes those flags itself and links
//! libFuzzer through the `libfuzzer-sys` crate (which compiles it with the C++ compiler found
//! by `cc`). The targets are the `fuzz/` crate, a workspace of its own so that
//! `cargo test --workspace` never builds it; its executables go to `target/fuzz/`, built
//! for the host triple given explicitly so that build scripts and proc macros are not
//! instrumented.
//!
//! Each target runs for `--seconds` (default 60) over a working corpus
//! `target/fuzz/corpus/<target>/`, where libFuzzer keeps the new inputs that reach new
//! coverage, seeded by the committed corpus `fuzz/corpus/<target>/` (read, never written);
//! first, every file of `fuzz/regressions/<target>/` (inputs that once failed) is replayed.
//! Memory and time are bounded (`-rss_limit_mb`, `-malloc_limit_mb`, `-timeout`): a reader
//! that allocates without a bound, or hangs, fails like one that panics. A failing input is
//! saved under `target/fuzz/artifacts/<target>/`, and the task prints the command that
//! replays it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::{cargo, run_cmd, target_dir};

/// Every fuzz target (a binary of the `fuzz/` crate), one per reader.
pub(crate) const TARGETS: &[&str] = &[
    "table",
    "npy",
    "edge_list",
    "adjacency",
    "matrix_market",
    "fastx",
    "checkpoint",
    "reads",
    "sparse",
    "npz",
    "kmeans_matrix",
    "colored_graph",
    "named_list",
];

/// The rustc flags of a libFuzzer build (cargo-fuzz's, less its nightly-only `-Z` flags and
/// AddressSanitizer): coverage for libFuzzer's feedback, `cfg(fuzzing)`, debug assertions
/// and overflow checks.
const RUSTFLAGS: &[&str] = &[
    "--cfg",
    "fuzzing",
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "-Cdebug-assertions",
    "-Coverflow-checks",
];

/// libFuzzer's limits for every run: a single allocation, the whole process, one input.
const LIMITS: &[&str] = &[
    "-rss_limit_mb=2048",
    "-malloc_limit_mb=1024",
    "-timeout=10",
    "-max_len=8192",
];

/// What one campaign did, from libFuzzer's final statistics.
#[derive(Debug, Default, PartialEq)]
struct Stats {
    execs: u64,
    cov: u64,
    ft: u64,
    corpus: u64,
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
    let mut seconds = 60u64;
    let mut targets: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                let v = it.next().context("--seconds needs a number")?;
                seconds = v
                    .parse()
                    .with_context(|| format!("--seconds must be a whole number, not `{v}`"))?;
            }
            t => match TARGETS.iter().find(|&&x| x == t) {
                Some(&x) => targets.push(x),
                None => bail!(
                    "unknown fuzz target `{t}` (targets: {})",
                    TARGETS.join(", ")
                ),
            },
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    let bin_dir = build(root)?;
    let work = target_dir(root).join("fuzz");
    let mut failed = Vec::new();
    let mut summary = Vec::new();
    for t in &targets {
        match campaign(root, &bin_dir, &work, t, seconds) {
            Ok(s) => summary.push(format!(
                "{t}: {} runs, cov {} ft {}, corpus {} inputs, no failure",
                s.execs, s.cov, s.ft, s.corpus
            )),
            Err(e) => {
                summary.push(format!("{t}: FAILED: {e:#}"));
                failed.push(*t);
            }
        }
    }
    println!("=== fuzz: {seconds} s per target");
    for line in &summary {
        println!("  {line}");
    }
    if !failed.is_empty() {
        bail!(
            "fuzz targets failed: {} (inputs under {})",
            failed.join(", "),
            work.join("artifacts").display()
        );
    }
    Ok(())
}

/// Builds every target with coverage; returns the folder of the executables.
fn build(root: &Path) -> Result<PathBuf> {
    let host = host_triple()?;
    let dir = target_dir(root).join("fuzz");
    let t = Instant::now();
    let mut c = cargo();
    c.current_dir(root.join("fuzz"))
        .args(["build", "--release", "--bins", "--target", &host])
        .env("CARGO_TARGET_DIR", &dir)
        .env("RUSTFLAGS", RUSTFLAGS.join(" "))
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    run_cmd(&mut c).context("building the fuzz targets (fuzz/)")?;
    println!(
        "=== fuzz: targets built in {:.0} s",
        t.elapsed().as_secs_f64()
    );
    Ok(dir.join(host).join("release"))
}

fn host_triple() -> Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .arg("-vV")
        .output()
        .context("running rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .context("rustc -vV names no host")
}

/// Replays `fuzz/regressions/<target>/`, then fuzzes `target` for `seconds`.
fn campaign(root: &Path, bin_dir: &Path, work: &Path, target: &str, seconds: u64) -> Result<Stats> {
    let bin = bin_dir.join(target);
    let corpus = work.join("corpus").join(target);
    let artifacts = work.join("artifacts").join(target);
    let logs = work.join("logs");
    for d in [&corpus, &artifacts, &logs] {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let mut prefix = artifacts.into_os_string();
    prefix.push("/");
    let regressions = files_in(&root.join("fuzz/regressions").join(target))?;
    if !regressions.is_empty() {
        let out = Command::new(&bin)
            .args(LIMITS)
            .arg(format!("-artifact_prefix={}", prefix.to_string_lossy()))
            .args(&regressions)
            .env("RAYON_NUM_THREADS", "1")
            .output()
            .with_context(|| format!("starting {}", bin.display()))?;
        if !out.status.success() {
            bail!(
                "an input of fuzz/regressions/{target}/ fails again ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let log = logs.join(format!("{target}.log"));
    let mut c = Command::new(&bin);
    c.arg(&corpus)
        .arg(root.join("fuzz/corpus").join(target))
        .args(LIMITS)
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-artifact_prefix={}", prefix.to_string_lossy()))
        .arg("-print_final_stats=1")
        // One thread: the inputs are far below the readers' parallel thresholds, and a pool
        // per process would only compete with libFuzzer for the cores.
        .env("RAYON_NUM_THREADS", "1");
    // stdout and stderr to one file (libFuzzer writes its progress to stderr).
    let f = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    c.stdout(f.try_clone()?).stderr(f);
    let status = c
        .status()
        .with_context(|| format!("starting {}", bin.display()))?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    if !status.success() {
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "libFuzzer exited with {status}; log {}:\n{}\nreplay a saved input with: {} <input>",
            log.display(),
            tail.join("\n"),
            bin.display()
        );
    }
    let mut s = parse_stats(&text);
    s.corpus = files_in(&corpus)?.len() as u64;
    Ok(s)
}

/// The regular files of `dir` (none when it does not exist), sorted.
fn files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut v = Vec::new();
    for e in rd {
        let p = e?.path();
        if p.is_file() {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}

/// Executions from `stat::number_of_executed_units`, coverage and features from the last
/// status line (`#N ... cov: C ft: F ...`).
fn parse_stats(log: &str) -> Stats {
    let mut s = Stats::default();
    let field = |line: &str, key: &str| -> Option<u64> {
        let mut words = line.split_whitespace();
        words.find(|w| *w == key)?;
        words.next()?.parse().ok()
    };
    for line in log.lines() {
        if let Some(v) = line.strip_prefix("stat::number_of_executed_units:") {
            s.execs = v.trim().parse().unwrap_or(s.execs);
        }
        if line.starts_with('#') {
            if let Some(c) = field(line, "cov:") {
                s.cov = c;
            }
            if let Some(f) = field(line, "ft:") {
                s.ft = f;
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libfuzzer_statistics() {
        let log = "INFO: Seed: 1\n\
            #2\tINITED cov: 10 ft: 12 corp: 1/1b exec/s: 0 rss: 30Mb\n\
            #4096\tpulse  cov: 210 ft: 480 corp: 40/2Kb lim: 43 exec/s: 2048 rss: 40Mb\n\
            #9000\tDONE   cov: 230 ft: 512 corp: 44/3Kb lim: 60 exec/s: 3000 rss: 41Mb\n\
            Done 9000 runs in 3 second(s)\n\
            stat::number_of_executed_units: 9000\n\
            stat::peak_rss_mb:              41\n";
        assert_eq!(
            parse_stats(log),
            Stats {
                execs: 9000,
                cov: 230,
                ft: 512,
                corpus: 0
            }
        );
    }

    /// Every target has a binary in `fuzz/Cargo.toml`, a source and a seed corpus.
    #[test]
    fn every_target_has_a_binary_source_and_corpus() {
        let root = crate::workspace_root().unwrap();
        let manifest = std::fs::read_to_string(root.join("fuzz/Cargo.toml")).unwrap();
        for t in TARGETS {
            assert!(manifest.contains(&format!("name = \"{t}\"")), "{t}");
            assert!(
                root.join(format!("fuzz/fuzz_targets/{t}.rs")).is_file(),
                "{t}"
            );
            let seeds = files_in(&root.join("fuzz/corpus").join(t)).unwrap();
            assert!(!seeds.is_empty(), "fuzz/corpus/{t} has no seeds");
        }
    }
}
