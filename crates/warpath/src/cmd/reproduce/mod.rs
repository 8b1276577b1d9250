//! `warpath reproduce`: every experiment of the seed documents rerun, and a report of each
//! beside the seed's own figures (`report.json`, `REPORT.md`, a self-contained `index.html`).
//!
//! The experiments live in their crates (`<crate>::experiments::specs()`); this module only
//! lists them, runs the ones asked for and writes the report ([`mod@write`]).

mod write;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context as _, Result};
use serde_json::{Value, json};
use warpath_report::{Context, Experiment, GpuUse, Size, Spec};

use crate::fail::usage;

/// The experiments the issue asks for, in report order (seed 000, 001, 002).
pub(crate) const ORDER: &[&str] = &[
    "euler-chart",
    "euler-stages",
    "distinct-table",
    "sort-chart",
    "edges-extraction",
    "debruijn-pin",
    "perm-11",
    "perm-12",
    "lap-ties",
    "lap-fig1",
    "lap-fig2",
    "kmeans-vary-n",
    "kmeans-vary-d",
    "kmeans-vary-k",
    "kmeans-distributed",
    "fhn-fig1-constant",
    "fhn-fig2-gaussian",
    "fhn-orders",
    "fhn-cpu-gpu",
    "fhn-adaptive",
    "fhn-implicit-stability",
    "fhn-newton",
    "fhn-solvers-cpu-gpu",
];

/// Every registered experiment, in [`ORDER`].
pub(crate) fn specs() -> Vec<Spec> {
    let mut all = Vec::new();
    all.extend(graph_core::experiments::specs());
    all.extend(gpu_primitives::experiments::specs());
    all.extend(combinatorics::experiments::specs());
    all.extend(pde::experiment::specs());
    all.extend(assignment::experiments::specs());
    all.extend(clustering::experiments::specs());
    all.sort_by_key(|s| {
        ORDER
            .iter()
            .position(|id| *id == s.id)
            .unwrap_or(usize::MAX)
    });
    all
}

/// Arguments of `warpath reproduce`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  warpath reproduce --out report --quick          # every experiment, small sizes (minutes)
  warpath reproduce --out report --only lap-fig1,fhn-orders
  warpath reproduce --list                        # the experiment ids
Open report/index.html in a browser: one section per experiment, the seed's figures beside ours.")]
pub(crate) struct Args {
    /// The directory to write report.json, REPORT.md and index.html into (created if needed).
    #[arg(long, required_unless_present = "list")]
    out: Option<PathBuf>,
    /// Small sizes: every experiment in a few minutes on 2 cores (the default).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The seed's sizes (hours on 2 cores for some experiments).
    #[arg(long)]
    full: bool,
    /// Only these experiments (comma-separated ids; see --list).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Print the experiment ids, seeds and titles, then exit.
    #[arg(long)]
    list: bool,
}

/// The GPU situation once: a real device, the simulated driver, or none (and why).
fn gpu_use() -> (GpuUse, Value) {
    match gpu_runtime::gpu() {
        Ok(g) if g.info().simulated => (
            GpuUse::Simulated,
            json!({"name": g.info().name, "simulated": true}),
        ),
        Ok(g) => (
            GpuUse::Hardware,
            json!({"name": g.info().name, "simulated": false,
                   "compute_capability": g.info().compute_capability,
                   "memory_bytes": g.info().total_memory}),
        ),
        Err(e) => (
            GpuUse::None,
            json!({"name": null, "why_none": e.to_string()}),
        ),
    }
}

/// Picks the specs named by `only` (all when empty); an unknown id is a usage error listing
/// the known ones.
fn select(all: &[Spec], only: &[String]) -> Result<Vec<Spec>> {
    if only.is_empty() {
        return Ok(all.to_vec());
    }
    let mut out = Vec::new();
    for id in only {
        match all.iter().find(|s| s.id == id.trim()) {
            Some(s) if !out.iter().any(|o: &Spec| o.id == s.id) => out.push(*s),
            Some(_) => {}
            None => {
                let known: Vec<&str> = all.iter().map(|s| s.id).collect();
                return Err(usage(format!(
                    "--only: no experiment `{id}`; the experiments are: {}",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(out)
}

/// One experiment's outcome: its result or its error, and its wall time.
pub(crate) struct Outcome {
    pub(crate) spec: Spec,
    pub(crate) result: std::result::Result<Experiment, String>,
    pub(crate) seconds: f64,
}

pub(crate) fn run(args: Args, json: bool) -> Result<()> {
    let all = specs();
    if args.list {
        return list(&all, json);
    }
    let out = args.out.expect("clap requires --out without --list");
    let size = if args.full { Size::Full } else { Size::Quick };
    let chosen = select(&all, &args.only)?;
    std::fs::create_dir_all(&out)
        .with_context(|| format!("creating the report directory {}", out.display()))?;
    let (gpu, gpu_json) = gpu_use();
    let interactive = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let started = Instant::now();
    let mut outcomes = Vec::new();
    for (i, spec) in chosen.iter().enumerate() {
        let head = format!("[{}/{}] {}", i + 1, chosen.len(), spec.id);
        eprintln!("{head}: {}", spec.title);
        let tag = head.clone();
        let ctx = Context::new(size).with_gpu(gpu).with_progress(move |line| {
            if interactive {
                eprintln!("{tag}: {line}");
            }
        });
        let t = Instant::now();
        let result = (spec.run)(&ctx).map_err(|e| e.to_string());
        let seconds = t.elapsed().as_secs_f64();
        match &result {
            Ok(e) => eprintln!("{head}: {} rows in {seconds:.1} s", e.rows.len()),
            Err(e) => eprintln!("{head}: FAILED after {seconds:.1} s: {e}"),
        }
        outcomes.push(Outcome {
            spec: *spec,
            result,
            seconds,
        });
    }
    let meta = write::Meta {
        size,
        gpu: gpu_json,
        machine: write::machine(),
        date: write::utc_now(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        seconds: started.elapsed().as_secs_f64(),
        missing: ORDER
            .iter()
            .filter(|id| !all.iter().any(|s| s.id == **id))
            .map(|s| s.to_string())
            .collect(),
    };
    let report = write::report_json(&meta, &outcomes);
    write::write_all(&out, &meta, &outcomes, &report)?;
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.result.is_err())
        .map(|o| o.spec.id)
        .collect();
    if json {
        println!(
            "{}",
            json!({"out": out.display().to_string(), "experiments": outcomes.len(),
                   "failed": failed, "seconds": meta.seconds, "size": size.name(),
                   "gpu": meta.gpu})
        );
    } else {
        println!(
            "{} experiments ({}) in {:.1} s: {}/index.html, REPORT.md, report.json",
            outcomes.len(),
            size.name(),
            meta.seconds,
            out.display()
        );
        if !meta.missing.is_empty() {
            println!("not reproduced yet: {}", meta.missing.join(", "));
        }
    }
    if !failed.is_empty() {
        anyhow::bail!(
            "{} experiment(s) failed: {} (the report says why)",
            failed.len(),
            failed.join(", ")
        );
    }
    Ok(())
}

fn list(all: &[Spec], json: bool) -> Result<()> {
    if json {
        let v: Vec<Value> = all
            .iter()
            .map(|s| json!({"id": s.id, "seed": s.seed, "title": s.title}))
            .collect();
        println!("{}", json!({ "experiments": v }));
    } else {
        for s in all {
            println!("{:<24} seed {}  {}", s.id, s.seed, s.title);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_id_is_one_the_issue_lists_and_appears_once() {
        let all = specs();
        assert!(!all.is_empty());
        for (i, s) in all.iter().enumerate() {
            assert!(ORDER.contains(&s.id), "{} is not in ORDER", s.id);
            assert!(all[..i].iter().all(|o| o.id != s.id), "{} twice", s.id);
            assert!(["000", "001", "002"].contains(&s.seed), "{}", s.seed);
        }
        let pos: Vec<usize> = all
            .iter()
            .map(|s| ORDER.iter().position(|o| *o == s.id).unwrap())
            .collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "report order");
        // every experiment the issue lists is reproduced
        let missing: Vec<&&str> = ORDER
            .iter()
            .filter(|id| !all.iter().any(|s| s.id == **id))
            .collect();
        assert!(missing.is_empty(), "not registered: {missing:?}");
    }

    #[test]
    fn only_selects_known_ids_and_names_the_known_ones_otherwise() {
        let all = specs();
        let one = select(&all, &["debruijn-pin".into(), "debruijn-pin".into()]).unwrap();
        assert_eq!(one.len(), 1);
        let e = select(&all, &["nope".into()]).unwrap_err().to_string();
        assert!(
            e.contains("no experiment `nope`") && e.contains("debruijn-pin"),
            "{e}"
        );
        assert_eq!(select(&all, &[]).unwrap().len(), all.len());
    }
}
