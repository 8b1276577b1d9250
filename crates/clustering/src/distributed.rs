//! Distributed k-means over MPI (feature `mpi`).
//!
//! Every rank reads its own contiguous shard of the input ([`shard_range`]) by offset, runs the
//! rayon assignment on it, and an `MPI_Allreduce` adds the per-cluster statistics
//! (`k * d` sums, `k` weights, inertia, changed labels) every iteration; all ranks then make
//! the same centroid update (the code of the single-process path). Rank 0 writes an atomic
//! checkpoint (centroids and iteration count) after every iteration; a run started with
//! `resume` continues from it, with any number of ranks (shards are recomputed from the
//! checkpoint's `n`, so no data is dropped). Rank 0 gathers the labels and writes the results.
//!
//! The initial centroids come from a fixed subsample of the rows (global indices
//! `i * n / s`), assembled on every rank with one all-reduce, so they do not depend on the
//! number of ranks.

use std::path::{Path, PathBuf};
use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

use crate::checkpoint::{Checkpoint, from_bits, to_bits};
use crate::cpu::{CpuKind, CpuStepper, column_moments};
use crate::data::{NpyType, read_npy_header, read_rows, shard_range};
use crate::kmeans::{check_finite, check_params, initial_centroids};
use crate::lloyd::{Candidate, LloydParams, StepStats, Stepper, candidate_order, lloyd};
use crate::{Init, KMeans, KMeansError};

pub use crate::launch::{DistributedReport, FAIL_AT_VAR, Timings};

/// Rows sampled for the initial centroids (at most; all rows when fewer).
const INIT_SAMPLE_ROWS: u64 = 1 << 16;

/// The input file of a distributed run.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A 2-D `.npy` file of `f32` or `f64` in C order.
    Npy(PathBuf),
    /// Raw little-endian `f64`, row-major, `dim` columns, no header.
    RawF64 {
        /// The file.
        path: PathBuf,
        /// Columns per row.
        dim: usize,
    },
}

/// A distributed job.
#[derive(Debug, Clone)]
pub struct DistributedConfig {
    /// The data.
    pub input: Input,
    /// Clusters, init (k-means++ or random), `max_iter`, `tol`, seed (`n_init` and `exec` are
    /// ignored: one run, on the CPU of each rank).
    pub params: KMeans,
    /// Where rank 0 checkpoints after each iteration.
    pub checkpoint: Option<PathBuf>,
    /// Continue from the checkpoint (when it exists).
    pub resume: bool,
    /// Where rank 0 writes the report as JSON.
    pub output: Option<PathBuf>,
    /// Where rank 0 writes the labels, one per line.
    pub labels: Option<PathBuf>,
}

/// The rank's shard, with a stepper that all-reduces.
struct MpiStepper<'a, C: Communicator> {
    world: &'a C,
    local: CpuStepper<'a, f64>,
    timings: Timings,
}

impl<C: Communicator> MpiStepper<'_, C> {
    fn all_sum(&mut self, v: &[f64]) -> Vec<f64> {
        let t = Instant::now();
        let mut out = vec![0.0; v.len()];
        self.world
            .all_reduce_into(v, &mut out[..], SystemOperation::sum());
        self.timings.allreduce += t.elapsed().as_secs_f64();
        out
    }
}

impl<C: Communicator> Stepper for MpiStepper<'_, C> {
    fn dim(&self) -> usize {
        self.local.d
    }

    fn step(&mut self, centroids: &[f64], k: usize) -> Result<StepStats, KMeansError> {
        let t = Instant::now();
        let local = self.local.step(centroids, k)?;
        self.timings.compute += t.elapsed().as_secs_f64();
        let global = self.all_sum(&local.to_flat());
        Ok(StepStats::from_flat(&global, k, self.local.d))
    }

    fn farthest(&mut self, centroids: &[f64], m: usize) -> Result<Vec<Candidate>, KMeansError> {
        let d = self.local.d;
        let local = self.local.farthest(centroids, m)?;
        // Fixed-size records: dist, index, label, weight, point; padding has dist = -inf.
        let rec = 4 + d;
        let mut send = vec![0.0; m * rec];
        for r in 0..m {
            let s = &mut send[r * rec..(r + 1) * rec];
            match local.get(r) {
                Some(c) => {
                    s[0] = c.dist;
                    s[1] = c.index as f64;
                    s[2] = c.label as f64;
                    s[3] = c.weight;
                    s[4..].copy_from_slice(&c.point);
                }
                None => s[0] = f64::NEG_INFINITY,
            }
        }
        let t = Instant::now();
        let mut all = vec![0.0; send.len() * self.world.size() as usize];
        self.world.all_gather_into(&send[..], &mut all[..]);
        self.timings.allreduce += t.elapsed().as_secs_f64();
        let mut cands: Vec<Candidate> = all
            .chunks_exact(rec)
            .filter(|s| s[0] != f64::NEG_INFINITY)
            .map(|s| Candidate {
                dist: s[0],
                index: s[1] as u64,
                label: s[2] as u32,
                weight: s[3],
                point: s[4..].to_vec(),
            })
            .collect();
        cands.sort_by(candidate_order);
        cands.truncate(m);
        Ok(cands)
    }
}

/// Shape and element type of the input.
fn describe_input(input: &Input) -> Result<(PathBuf, u64, NpyType, u64, usize), KMeansError> {
    match input {
        Input::Npy(p) => {
            let h = read_npy_header(p)?;
            Ok((p.clone(), h.offset, h.dtype, h.rows, h.cols as usize))
        }
        Input::RawF64 { path, dim } => {
            if *dim == 0 {
                return Err(KMeansError::ZeroDimensions);
            }
            let len = std::fs::metadata(path)
                .map_err(|e| KMeansError::io(path, e))?
                .len();
            let row = 8 * *dim as u64;
            if len % row != 0 {
                return Err(KMeansError::format(
                    path,
                    format!("{len} bytes is not a whole number of {dim}-column f64 rows"),
                ));
            }
            Ok((path.clone(), 0, NpyType::F64, len / row, *dim))
        }
    }
}

/// Fails on every rank when any rank failed (so no rank waits in a collective forever).
fn agree<C: Communicator, T>(world: &C, local: Result<T, KMeansError>) -> Result<T, KMeansError> {
    let bad = [if local.is_err() { 1.0 } else { 0.0 }];
    let mut any = [0.0];
    world.all_reduce_into(&bad[..], &mut any[..], SystemOperation::sum());
    match local {
        Err(e) => Err(e),
        Ok(_) if any[0] > 0.0 => Err(KMeansError::Distributed(format!(
            "{} rank(s) failed (see their messages)",
            any[0]
        ))),
        Ok(v) => Ok(v),
    }
}

fn fail_at() -> Option<(usize, i32)> {
    let v = std::env::var(FAIL_AT_VAR).ok()?;
    let (it, rank) = v.split_once(':')?;
    Some((it.trim().parse().ok()?, rank.trim().parse().ok()?))
}

/// Runs one distributed k-means job on `world`; every rank calls it. Rank 0 gets the report
/// (and writes the output files); the others get `None`.
///
/// # Complexity
/// `O(n k d / R)` compute and an all-reduce of `k d + k + 2` values per iteration on `R`
/// ranks.
///
/// # Errors
/// Bad input or parameters (every rank reports them), a checkpoint that belongs to another
/// job, I/O failures.
pub fn run_distributed<C: Communicator>(
    world: &C,
    cfg: &DistributedConfig,
) -> Result<Option<DistributedReport>, KMeansError> {
    let started = Instant::now();
    let rank = world.rank();
    let ranks = world.size() as u64;
    let p = &cfg.params;
    agree(world, check_params(p))?;
    if matches!(p.init, Init::Given(_)) {
        return Err(KMeansError::InvalidParameter(
            "distributed runs take k-means++ or random initialisation".into(),
        ));
    }
    let (path, offset, dtype, n, d) = agree(world, describe_input(&cfg.input))?;
    if d == 0 {
        return Err(KMeansError::ZeroDimensions);
    }
    if p.k as u64 > n {
        return Err(KMeansError::TooManyClusters {
            k: p.k,
            n: n as usize,
        });
    }
    let shard = shard_range(n, ranks, rank as u64);
    let t = Instant::now();
    let data = agree(
        world,
        read_rows(
            &path,
            offset,
            dtype,
            shard.start,
            shard.end - shard.start,
            d as u64,
        )
        .and_then(|v| check_finite(&v, d, shard.start as usize).map(|_| v)),
    )?;
    let read_s = t.elapsed().as_secs_f64();

    let mut stepper = MpiStepper {
        world,
        local: CpuStepper::new(&data, d, None, CpuKind::Parallel),
        timings: Timings {
            read: read_s,
            ..Timings::default()
        },
    };
    stepper.local.index_offset = shard.start;

    // Resume or start.
    let resumed = match (&cfg.checkpoint, cfg.resume) {
        (Some(ck), true) if ck.exists() => Some(agree(world, read_matching(ck, n, d, p.k))?),
        _ => None,
    };
    let (start_centroids, initial, tol_abs, start_iteration, already_converged) = match &resumed {
        Some(ck) => (
            ck.centroids(),
            from_bits(&ck.initial_bits),
            ck.tol_abs,
            ck.iteration,
            ck.converged,
        ),
        None => {
            let tol_abs = p.tol * global_mean_variance(&mut stepper, n);
            let sample = global_sample(&mut stepper, n, shard.start);
            let init = initial_centroids(&p.init, &sample, d, None, p.k, p.seed, 0);
            (init.clone(), init, tol_abs, 0, false)
        }
    };
    let params = LloydParams {
        k: p.k,
        max_iter: if already_converged {
            start_iteration
        } else {
            p.max_iter
        },
        tol_abs,
        start_iteration,
    };
    let fail = if resumed.is_none() { fail_at() } else { None };
    let mut ck_seconds = 0.0;
    let mut write_ck = |iteration: usize, c: &[f64], converged: bool| -> Result<(), KMeansError> {
        if let (0, Some(path)) = (rank, &cfg.checkpoint) {
            let t = Instant::now();
            Checkpoint {
                version: 1,
                n,
                d,
                k: p.k,
                iteration,
                tol_abs,
                converged,
                centroid_bits: to_bits(c),
                initial_bits: to_bits(&initial),
            }
            .write_atomic(path)?;
            ck_seconds += t.elapsed().as_secs_f64();
        }
        Ok(())
    };
    let out = lloyd(&mut stepper, start_centroids, &params, |iteration, c, _| {
        write_ck(iteration, c, false)?;
        if let Some((at, r)) = fail
            && at == iteration
        {
            // Every rank knows the plan: make sure the checkpoint is on disk first.
            world.barrier();
            if r != rank {
                return Ok(());
            }
            eprintln!(
                "kmeans-mpi: rank {rank} failing on purpose after iteration {iteration} ({FAIL_AT_VAR})"
            );
            std::process::exit(17);
        }
        Ok(())
    })?;
    write_ck(out.iterations, &out.centroids, out.converged)?;

    // Labels to rank 0, in rank order.
    let labels = std::mem::take(&mut stepper.local.labels);
    let mut timings = stepper.timings;
    timings.checkpoint = ck_seconds;
    let report = if rank == 0 {
        if let Some(lp) = &cfg.labels {
            let mut all = labels;
            for r in 1..ranks as i32 {
                let (mut v, _) = world.process_at_rank(r).receive_vec::<u32>();
                all.append(&mut v);
            }
            write_labels(lp, &all)?;
        }
        timings.total = started.elapsed().as_secs_f64();
        let report = DistributedReport {
            n,
            d,
            k: p.k,
            ranks: ranks as usize,
            iterations: out.iterations,
            converged: out.converged,
            inertia: out.last.inertia,
            resumed_from: resumed.as_ref().map(|c| c.iteration),
            centroids: out.centroids.clone(),
            centroid_bits: to_bits(&out.centroids),
            initial_bits: to_bits(&initial),
            seconds: timings,
        };
        if let Some(o) = &cfg.output {
            write_report(o, &report)?;
        }
        Some(report)
    } else {
        if cfg.labels.is_some() {
            world.process_at_rank(0).send(&labels[..]);
        }
        None
    };
    Ok(report)
}

fn read_matching(path: &Path, n: u64, d: usize, k: usize) -> Result<Checkpoint, KMeansError> {
    let ck = Checkpoint::read(path)?;
    if ck.n != n || ck.d != d || ck.k != k {
        return Err(KMeansError::format(
            path,
            format!(
                "checkpoint is for n = {}, d = {}, k = {}; this job has n = {n}, d = {d}, k = {k}",
                ck.n, ck.d, ck.k
            ),
        ));
    }
    Ok(ck)
}

fn global_mean_variance<C: Communicator>(s: &mut MpiStepper<'_, C>, n: u64) -> f64 {
    let d = s.local.d;
    let sums = s.all_sum(&column_moments(s.local.data, d, None));
    let mean: Vec<f64> = sums.iter().map(|v| v / n as f64).collect();
    let ss = s.all_sum(&column_moments(s.local.data, d, Some(&mean)));
    ss.iter().sum::<f64>() / n as f64 / d as f64
}

/// Rows `i * n / s` for `i < s`, the same on every rank whatever the number of ranks.
fn global_sample<C: Communicator>(s: &mut MpiStepper<'_, C>, n: u64, start: u64) -> Vec<f64> {
    let d = s.local.d;
    let rows = n.min(INIT_SAMPLE_ROWS);
    let end = start + (s.local.data.len() / d) as u64;
    let mut buf = vec![0.0; rows as usize * d];
    for i in 0..rows {
        let g = (i as u128 * n as u128 / rows as u128) as u64;
        if (start..end).contains(&g) {
            let l = (g - start) as usize;
            buf[i as usize * d..(i as usize + 1) * d]
                .copy_from_slice(&s.local.data[l * d..(l + 1) * d]);
        }
    }
    s.all_sum(&buf)
}

fn write_labels(path: &Path, labels: &[u32]) -> Result<(), KMeansError> {
    use std::io::Write;
    let f = std::fs::File::create(path).map_err(|e| KMeansError::io(path, e))?;
    let mut w = std::io::BufWriter::new(f);
    for l in labels {
        writeln!(w, "{l}").map_err(|e| KMeansError::io(path, e))?;
    }
    w.flush().map_err(|e| KMeansError::io(path, e))
}

fn write_report(path: &Path, r: &DistributedReport) -> Result<(), KMeansError> {
    let tmp = path.with_extension("tmp");
    let text = serde_json::to_vec_pretty(r).map_err(|e| KMeansError::io(path, e))?;
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| KMeansError::io(path, e))
}
