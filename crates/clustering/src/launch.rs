//! Launching the distributed worker (`kmeans-mpi`, feature `mpi`) under `mpirun`, and
//! relaunching it from its checkpoint when a rank dies. This module needs no MPI library: it
//! only starts processes, so `warpath kmeans --ranks R` works in any build that can find the
//! worker binary.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::{Algorithm, Init, KMeansError};

/// Environment variable for fault-injection tests: `ITERATION:RANK` makes that rank exit
/// abruptly (without `MPI_Finalize`) after that iteration of a run that was not resumed. The
/// launcher removes it from relaunches.
pub const FAIL_AT_VAR: &str = "WARPATH_KMEANS_FAIL_AT";

/// Exit status of a job that is itself bad: the worker's usage errors (as clap's) and every
/// error it reports (bad input, parameters, a checkpoint of another job: it calls
/// `MPI_Abort` with this code). [`launch_with_restarts`] does not relaunch such a job; only
/// a job whose rank died some other way (a crash, a kill, a lost machine) is relaunched.
pub const BAD_JOB_EXIT_CODE: i32 = 2;

/// Environment variable naming the worker binary (default: `kmeans-mpi` next to the running
/// executable, then on `PATH`).
pub const WORKER_VAR: &str = "WARPATH_KMEANS_MPI";

/// How to launch a distributed job.
#[derive(Debug, Clone)]
pub struct MpiLaunch {
    /// The `mpirun` program.
    pub mpirun: PathBuf,
    /// The `kmeans-mpi` worker binary.
    pub worker: PathBuf,
    /// Number of ranks.
    pub ranks: usize,
    /// How many times a failed job is relaunched from its checkpoint.
    pub max_restarts: usize,
    /// Worker arguments (input, `--k`, `--init` or `--init-centroids FILE`, `--weights FILE`,
    /// ..., without `--checkpoint` and `--resume`), passed on `mpirun`'s command line to
    /// every rank (and again to every relaunch).
    pub worker_args: Vec<OsString>,
    /// The checkpoint file.
    pub checkpoint: PathBuf,
    /// Resume already on the first launch (continue an earlier job).
    pub resume: bool,
    /// Environment variables for the first launch only (e.g. [`FAIL_AT_VAR`] in tests).
    pub first_launch_env: Vec<(OsString, OsString)>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchOutcome {
    /// Launches (1 when nothing failed).
    pub attempts: usize,
    /// Standard output of the successful launch (the worker's JSON report).
    pub stdout: String,
    /// Why each failed launch failed (exit status and the end of its standard error).
    pub failures: Vec<String>,
}

/// Finds the worker: `$WARPATH_KMEANS_MPI`, then `kmeans-mpi` next to the current executable
/// (and one folder up, for test binaries in `target/*/deps`), then `PATH`.
pub fn find_worker() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(WORKER_VAR) {
        return Some(PathBuf::from(p));
    }
    let name = format!("kmeans-mpi{}", std::env::consts::EXE_SUFFIX);
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        for d in [Some(dir), dir.parent()].into_iter().flatten() {
            let p = d.join(&name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(&name))
            .find(|p| p.is_file())
    })
}

/// Runs the job under `mpirun`; when it fails, relaunches it with `--resume` (up to
/// `max_restarts` times), so it continues from the last checkpoint, possibly on a different
/// set of ranks. `on_failure` is told about each failure before its relaunch. A job that
/// exits with [`BAD_JOB_EXIT_CODE`] (the worker refused its input or parameters) is not
/// relaunched.
///
/// # Errors
/// [`KMeansError::Distributed`] when `mpirun` cannot be started, the worker refused the job,
/// or the job still fails after `max_restarts` relaunches.
pub fn launch_with_restarts(
    opts: &MpiLaunch,
    mut on_failure: impl FnMut(usize, &str),
) -> Result<LaunchOutcome, KMeansError> {
    let mut failures = Vec::new();
    for attempt in 0..=opts.max_restarts {
        let resume = opts.resume || attempt > 0;
        let out = command(opts, resume, attempt > 0).output().map_err(|e| {
            KMeansError::Distributed(format!(
                "could not start {}: {e} (install OpenMPI: apt-get install openmpi-bin)",
                opts.mpirun.display()
            ))
        })?;
        if out.status.success() {
            return Ok(LaunchOutcome {
                attempts: attempt + 1,
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                failures,
            });
        }
        let err = String::from_utf8_lossy(&out.stderr);
        // The worker's own messages say why; mpirun's help text around them does not.
        let mut lines: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("kmeans-mpi"))
            .take(3)
            .collect();
        if lines.is_empty() {
            lines = err.lines().rev().take(6).collect();
            lines.reverse();
        }
        let why = format!(
            "launch {} failed ({}): {}",
            attempt + 1,
            out.status,
            lines.join(" | ")
        );
        if out.status.code() == Some(BAD_JOB_EXIT_CODE) {
            return Err(KMeansError::Distributed(format!(
                "the worker refused the job (not relaunched): {why}"
            )));
        }
        if attempt < opts.max_restarts {
            on_failure(attempt + 1, &why);
        }
        failures.push(why);
    }
    Err(KMeansError::Distributed(format!(
        "the job failed {} time(s); last: {}",
        failures.len(),
        failures.last().map(String::as_str).unwrap_or("")
    )))
}

fn command(opts: &MpiLaunch, resume: bool, relaunch: bool) -> Command {
    let mut c = Command::new(&opts.mpirun);
    // OpenMPI refuses to run as root without these; oversubscription lets R exceed the cores.
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .arg("--oversubscribe")
        .arg("-n")
        .arg(opts.ranks.to_string())
        .arg(&opts.worker)
        .args(&opts.worker_args)
        .arg("--checkpoint")
        .arg(&opts.checkpoint);
    if resume {
        c.arg("--resume");
    }
    if relaunch {
        c.env_remove(FAIL_AT_VAR);
    } else {
        c.envs(opts.first_launch_env.iter().map(|(k, v)| (k, v)));
    }
    c
}

/// Seconds spent in each part of a distributed run (on rank 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// Reading the shard.
    pub read: f64,
    /// Local assignment and partial sums.
    pub compute: f64,
    /// All-reduce and all-gather.
    pub allreduce: f64,
    /// Writing checkpoints.
    pub checkpoint: f64,
    /// The whole run.
    pub total: f64,
}

/// What rank 0 reports at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistributedReport {
    /// Points.
    pub n: u64,
    /// Dimensions.
    pub d: usize,
    /// Clusters.
    pub k: usize,
    /// Ranks of this (last) launch.
    pub ranks: usize,
    /// Iterations in total (including those before a resume).
    pub iterations: usize,
    /// Whether the run converged before `max_iter`.
    pub converged: bool,
    /// Final inertia.
    pub inertia: f64,
    /// The iteration the run resumed from, if it did.
    pub resumed_from: Option<usize>,
    /// Final centroids, row-major.
    pub centroids: Vec<f64>,
    /// Final centroids as bit patterns (exact).
    pub centroid_bits: Vec<u64>,
    /// Initial centroids as bit patterns (to rerun the same job elsewhere).
    pub initial_bits: Vec<u64>,
    /// Time split.
    pub seconds: Timings,
    /// All-reduce results that differed between ranks in some bit and were replaced by rank
    /// 0's, so that every rank took the same decisions (0 in a healthy run; see
    /// `distributed`'s module docs).
    #[serde(default)]
    pub reconciled: usize,
}

/// Where a distributed fit starts.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerStart {
    /// Rank 0 initialises and broadcasts: the worker takes the method's name
    /// ([`Init::name`]: k-means++, random, k-means|| with its default rounds); use
    /// [`WorkerStart::Centroids`] for given centroids.
    Init(Init),
    /// Every rank reads these `k x d` centroids (a `.npy` or text matrix).
    Centroids(PathBuf),
}

/// A distributed fit's parameters, as the worker (`kmeans-mpi`) takes them on its command
/// line: [`WorkerJob::args`] writes that command line, so the launcher and the worker's
/// arguments are spelled in one place.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerJob {
    /// The points: a 2-D `.npy` file (`f32` or `f64`), which each rank reads its shard of.
    pub input: PathBuf,
    /// Clusters.
    pub k: usize,
    /// The start.
    pub start: WorkerStart,
    /// Sample weights: a 1-D `f64` `.npy`, raw little-endian `f64` (`.bin`) or a text file of
    /// one weight per line.
    pub weights: Option<PathBuf>,
    /// Most Lloyd iterations.
    pub max_iter: usize,
    /// The relative tolerance of the stopping rule.
    pub tol: f64,
    /// The seed of the initialisation.
    pub seed: u64,
    /// How each rank assigns its points.
    pub algorithm: Algorithm,
}

impl WorkerJob {
    /// The worker's arguments for this job, writing its report (JSON) to `out` and its labels
    /// (one per line) to `labels` (without `--checkpoint` and `--resume`, which
    /// [`launch_with_restarts`] adds).
    pub fn args(&self, out: &Path, labels: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec![
            self.input.clone().into(),
            "--k".into(),
            self.k.to_string().into(),
        ];
        match &self.start {
            WorkerStart::Centroids(p) => a.extend(["--init-centroids".into(), p.clone().into()]),
            WorkerStart::Init(init) => a.extend(["--init".into(), init.name().into()]),
        }
        if let Some(w) = &self.weights {
            a.extend(["--weights".into(), w.clone().into()]);
        }
        a.extend([
            "--max-iter".into(),
            self.max_iter.to_string().into(),
            "--tol".into(),
            self.tol.to_string().into(),
            "--seed".into(),
            self.seed.to_string().into(),
            "--algorithm".into(),
            self.algorithm.name().into(),
            "--out".into(),
            out.into(),
            "--labels".into(),
            labels.into(),
        ]);
        a
    }
}

/// A finished distributed fit: rank 0's report, every point's label, and the launches.
#[derive(Debug, Clone, PartialEq)]
pub struct DistributedFit {
    /// What rank 0 reported (centroids, inertia, iterations, timings).
    pub report: DistributedReport,
    /// The label of every point, in the input's order.
    pub labels: Vec<u32>,
    /// How the launches went.
    pub outcome: LaunchOutcome,
}

/// Runs `job` under `mpirun` as `launch` says ([`launch_with_restarts`]: relaunched from its
/// checkpoint when a rank dies; `launch.worker_args` is replaced by the job's arguments
/// followed by what it held), then reads the report and the labels the worker wrote to
/// temporary files, and removes them.
///
/// # Errors
/// [`KMeansError::Distributed`]: as [`launch_with_restarts`], or a report or labels file that
/// is missing or unreadable.
pub fn run_job(
    job: &WorkerJob,
    mut launch: MpiLaunch,
    on_failure: impl FnMut(usize, &str),
) -> Result<DistributedFit, KMeansError> {
    let tmp = std::env::temp_dir();
    let id = std::process::id();
    let report_path = tmp.join(format!("warpath-kmeans-{id}.json"));
    let labels_path = tmp.join(format!("warpath-kmeans-{id}.labels"));
    let extra = std::mem::take(&mut launch.worker_args);
    launch.worker_args = job.args(&report_path, &labels_path);
    launch.worker_args.extend(extra);
    let read = || -> Result<(DistributedReport, Vec<u32>), KMeansError> {
        let read_err = |what: &Path, e: &dyn std::fmt::Display| {
            KMeansError::Distributed(format!("reading {}: {e}", what.display()))
        };
        let bytes = std::fs::read(&report_path).map_err(|e| read_err(&report_path, &e))?;
        let report: DistributedReport =
            serde_json::from_slice(&bytes).map_err(|e| read_err(&report_path, &e))?;
        let text = std::fs::read_to_string(&labels_path).map_err(|e| read_err(&labels_path, &e))?;
        let labels = text
            .lines()
            .map(|l| l.trim().parse::<u32>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| read_err(&labels_path, &e))?;
        Ok((report, labels))
    };
    let result = launch_with_restarts(&launch, on_failure)
        .and_then(|outcome| read().map(|(report, labels)| (outcome, report, labels)));
    let _ = std::fs::remove_file(&report_path);
    let _ = std::fs::remove_file(&labels_path);
    let (outcome, report, labels) = result?;
    Ok(DistributedFit {
        report,
        labels,
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_spells_the_workers_arguments() {
        let mut job = WorkerJob {
            input: "x.npy".into(),
            k: 4,
            start: WorkerStart::Init(Init::KMeansPlusPlus),
            weights: None,
            max_iter: 50,
            tol: 1e-4,
            seed: 7,
            algorithm: Algorithm::Lloyd,
        };
        let words = |job: &WorkerJob| -> Vec<String> {
            job.args(Path::new("r.json"), Path::new("l.txt"))
                .into_iter()
                .map(|a| a.into_string().unwrap())
                .collect()
        };
        assert_eq!(
            words(&job).join(" "),
            "x.npy --k 4 --init k-means++ --max-iter 50 --tol 0.0001 --seed 7 \
             --algorithm lloyd --out r.json --labels l.txt"
        );
        job.start = WorkerStart::Centroids("c.npy".into());
        job.weights = Some("w.npy".into());
        let w = words(&job);
        assert_eq!(w[3..7], ["--init-centroids", "c.npy", "--weights", "w.npy"]);
    }
}
