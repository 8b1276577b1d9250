//! `cargo xtask gpu-bundle`: everything needed to run the tests and benchmarks on a machine
//! with a GPU but no Rust toolchain.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::{cargo, make_executable, run_cmd, target_dir};

const RUN_SH: &str = r#"#!/usr/bin/env bash
# warpath GPU bundle: runs every test executable and exits non-zero if any fails.
#   WARPATH_REQUIRE_GPU=1 ./run.sh          make a missing GPU a failure (recommended)
#   ./run.sh --bench [FILTER]               run the criterion benchmarks instead
#   ./run.sh --demo                         run `warpath info` and `warpath demo`
set -u
cd "$(dirname "$0")"
export WARPATH_BUNDLE=1
# Integration tests of the CLI find the bundled binary here (their build-time path is gone).
export WARPATH_BIN="$PWD/bin/warpath"
case "${1:-}" in
  --bench)
    shift
    status=0
    for b in benches/*; do
      echo "=== bench $b"
      "$b" --bench "$@" || status=1
    done
    exit $status ;;
  --demo)
    bin/warpath info && bin/warpath demo
    exit $? ;;
esac
bin/warpath info
failed=()
for t in tests/*; do
  echo "=== test $t"
  if ! "$t" --test-threads="${TEST_THREADS:-4}"; then failed+=("$t"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all test executables passed"
"#;

pub(crate) fn run(root: &Path) -> Result<()> {
    let out = target_dir(root).join("gpu-bundle");
    let _ = fs::remove_dir_all(&out);
    for d in ["tests", "benches", "bin"] {
        fs::create_dir_all(out.join(d))?;
    }

    // Test harnesses only: `cargo test` also builds plain binaries (for CARGO_BIN_EXE_*).
    let tests = build_executables(
        root,
        &["test", "--workspace", "--release", "--no-run"],
        |kind, harness| harness && kind != "bench",
    )?;
    let benches = build_executables(root, &["bench", "--workspace", "--no-run"], |kind, _| {
        kind == "bench"
    })?;
    run_cmd(
        cargo()
            .current_dir(root)
            .args(["build", "--release", "-p", "warpath"]),
    )?;
    // The synthetic genomes and reads of crates/assembly/scripts/scale.sh, made on the device
    // (verify.sh scale): a 60 Mbp read set is 1.2 GB, far over the transfer limit.
    run_cmd(cargo().current_dir(root).args([
        "build",
        "--release",
        "-p",
        "assembly",
        "--example",
        "synthetic_genome",
    ]))?;
    let warpath = target_dir(root).join("release/warpath");
    let genome = target_dir(root).join("release/examples/synthetic_genome");

    for (dir, exes) in [("tests", &tests), ("benches", &benches)] {
        for (name, exe) in exes {
            copy_stripped(exe, &out.join(dir).join(name))?;
        }
    }
    copy_stripped(&warpath, &out.join("bin/warpath"))?;
    copy_stripped(&genome, &out.join("bin/synthetic_genome"))?;
    let run_sh = out.join("run.sh");
    fs::write(&run_sh, RUN_SH)?;
    make_executable(&run_sh)?;

    let size: u64 = walk_size(&out)?;
    println!(
        "gpu-bundle: {} test and {} bench executables, {:.1} MiB in {}",
        tests.len(),
        benches.len(),
        size as f64 / (1 << 20) as f64,
        out.display()
    );
    // A compressed copy (about 2.5x smaller) for transfers with a size limit; scripts/gpu/verify.sh
    // unpacks it when target/gpu-bundle itself was not carried.
    let target = target_dir(root);
    let tarball = target.join("gpu-bundle.tar.gz");
    let mut tar = Command::new("tar");
    tar.arg("czf")
        .arg(&tarball)
        .arg("-C")
        .arg(&target)
        .arg("gpu-bundle");
    match run_cmd(&mut tar) {
        Ok(()) => println!(
            "gpu-bundle: {:.1} MiB compressed in {}",
            fs::metadata(&tarball)?.len() as f64 / (1 << 20) as f64,
            tarball.display()
        ),
        Err(e) => println!("gpu-bundle: no compressed copy ({e})"),
    }
    println!("run there: WARPATH_REQUIRE_GPU=1 {}/run.sh", out.display());
    Ok(())
}

/// Runs cargo with JSON messages and returns `(unique name, executable)` of the artifacts for
/// which `keep(target kind, is a test harness)` holds.
fn build_executables(
    root: &Path,
    args: &[&str],
    keep: impl Fn(&str, bool) -> bool,
) -> Result<Vec<(String, PathBuf)>> {
    let mut child = cargo()
        .current_dir(root)
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .stdout(Stdio::piped())
        .spawn()
        .context("could not start cargo")?;
    let mut found = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line?;
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let Some(exe) = msg["executable"].as_str() else {
            continue;
        };
        let kind = msg["target"]["kind"][0].as_str().unwrap_or("");
        if !keep(kind, msg["profile"]["test"] == true) {
            continue;
        }
        let pkg = msg["package_id"].as_str().unwrap_or("");
        let pkg = pkg
            .rsplit('/')
            .next()
            .unwrap_or(pkg)
            .split(['#', '@'])
            .next()
            .unwrap_or(pkg);
        let pkg = pkg.replace('-', "_");
        let target = msg["target"]["name"]
            .as_str()
            .unwrap_or("unknown")
            .replace('-', "_");
        // e.g. `gpu_runtime.lib`, `warpath.cli` (an integration test), `warpath.bin`.
        let name = if pkg == target {
            format!("{pkg}.{kind}")
        } else {
            format!("{pkg}.{target}")
        };
        found.push((name, PathBuf::from(exe)));
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("cargo {} failed", args.join(" "));
    }
    Ok(found)
}

fn copy_stripped(from: &Path, to: &Path) -> Result<()> {
    fs::copy(from, to).with_context(|| format!("copying {}", from.display()))?;
    // Symbols are most of a release test binary; the bundle must travel (64 MiB limit).
    let _ = Command::new("strip").arg(to).status();
    make_executable(to)
}

fn walk_size(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for e in fs::read_dir(dir)? {
        let e = e?;
        let m = e.metadata()?;
        total += if m.is_dir() {
            walk_size(&e.path())?
        } else {
            m.len()
        };
    }
    Ok(total)
}
