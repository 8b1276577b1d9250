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
//! Sample weights ([`DistributedConfig::weights`], one per row) are read shard by shard
//! exactly as the rows are and enter the per-cluster sums, the weights (counts), the inertia
//! and k-means++ as in [`KMeans::fit_weighted`]; the checkpoint holds a digest of them, so a
//! run cannot resume with other weights.
//!
//! The initial centroids are the given ones ([`Init::Given`], validated as by [`KMeans::fit`])
//! or come from a fixed subsample of the rows (global indices `i * n / s`, with their weights),
//! assembled on every rank with one all-reduce, so they do not depend on the number of ranks.
//!
//! Every check that can fail on some ranks only (a shard with a bad value, a file one rank
//! cannot read, ranks given different parameters or centroids) is agreed on by all ranks
//! before the next collective: every rank returns an error (the failing rank its own, the
//! others [`KMeansError::Distributed`] quoting it), so no rank waits forever.
//!
//! # Identical decisions on every rank
//!
//! Each rank runs the same Lloyd loop and decides on its own whether a cluster is empty (which
//! starts a collective search for far points), whether labels changed, and whether the
//! centroid shift is within the tolerance (which ends the loop). Those decisions must be the
//! same on every rank, or one rank leaves the loop while another waits in the next collective
//! forever. They are pure functions of the all-reduced statistics (and of values every rank
//! holds identically: parameters, the checkpoint, all-gathered candidates), so it is enough
//! that every rank holds the *same bits* of every all-reduced vector. MPI does not promise
//! that: an `MPI_Allreduce` of doubles may round differently on different ranks (a
//! topology-aware or hardware-offloaded reduction, heterogeneous nodes). So every all-reduce
//! of floating-point values (the statistics of each iteration, the variance behind the
//! tolerance, the initial subsample) is followed by a check: a 64-bit digest of the result's
//! bits is all-reduced with min and max (exact integer operations, the same on every rank);
//! when they differ, rank 0 broadcasts its result and every rank continues with rank 0's bits
//! ([`DistributedReport::reconciled`] counts these). When the results agree, as in every
//! normal run, nothing changes, so the results are bit-identical to a plain all-reduce; the
//! check costs one all-reduce of two integers and a pass over the `k d + k + 2` values. At
//! the end the ranks also compare a digest of their final centroids and iteration count, so
//! a divergence that slipped through (a digest collision, about 2^-64) is an error, not mixed
//! labels. A resumed run also checks that every rank read the same checkpoint.
//! The [`PERTURB_AT_VAR`] test hook makes one rank's all-reduce differ in the last bit, to
//! check all this under `mpirun`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Root, Source};

use crate::bounds::BoundsStepper;
use crate::checkpoint::{
    CHECKPOINT_VERSION, Checkpoint, Job, digest, digest_part, from_bits, job_digest, to_bits,
};
use crate::cpu::{CpuKind, CpuStepper, column_moments};
use crate::data::{NpyType, read_npy_header, read_rows, read_weights_shard, shard_range};
use crate::kmeans::{
    check_finite, check_given, check_params, check_weight_values, groups_for, initial_centroids,
};
use crate::lloyd::{
    Candidate, LloydParams, ShiftLimit, StepStats, Stepper, candidate_order, lloyd,
};
use crate::{KMeans, KMeansError};

pub use crate::launch::{DistributedReport, FAIL_AT_VAR, Timings};

/// Environment variable for tests of the agreement of ranks (module docs): `STEP:RANK` makes
/// that rank flip the lowest bit of every value of its all-reduced statistics of its
/// `STEP`-th assignment step (counted from 1 in each launch), as a reduction that rounds
/// differently on that rank would.
pub const PERTURB_AT_VAR: &str = "WARPATH_KMEANS_PERTURB_AT";

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
    /// Sample weights, one per row: a `.csv`/`.txt` file with one weight per line (a header
    /// line allowed), a `.npy` file of shape `(n,)` or `(n, 1)` (`f32` or `f64`), or raw
    /// little-endian `f64` ([`crate::data::read_weights`]); finite, non-negative, not all
    /// zero. `None` weighs every point 1.
    pub weights: Option<PathBuf>,
    /// Clusters, init (k-means++, random or given centroids, `k x d`), `max_iter`, `tol`, seed
    /// (`n_init` and `exec` are ignored: one run, on the CPU of each rank). Every rank must
    /// be given the same parameters (checked).
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

/// The rank's own stepper: plain Lloyd or the pruned algorithms (each rank keeps the bounds
/// of its own rows; every choice gives the same labels, so ranks may even differ in it).
enum Local<'a> {
    Plain(CpuStepper<'a, f64>),
    Pruned(Box<BoundsStepper<'a, f64>>),
}

impl<'a> Local<'a> {
    fn new(data: &'a [f64], d: usize, weights: Option<&'a [f64]>, groups: Option<usize>) -> Self {
        match groups {
            None => Local::Plain(CpuStepper::new(data, d, weights, CpuKind::Parallel)),
            Some(t) => Local::Pruned(Box::new(BoundsStepper::new(data, d, weights, t))),
        }
    }

    fn stepper(&mut self) -> &mut dyn Stepper {
        match self {
            Local::Plain(s) => s,
            Local::Pruned(s) => s.as_mut(),
        }
    }

    /// The points, weights and labels (a pruned stepper holds them in its plain one).
    fn plain(&self) -> &CpuStepper<'a, f64> {
        match self {
            Local::Plain(s) => s,
            Local::Pruned(s) => &s.plain,
        }
    }

    fn plain_mut(&mut self) -> &mut CpuStepper<'a, f64> {
        match self {
            Local::Plain(s) => s,
            Local::Pruned(s) => &mut s.plain,
        }
    }

    fn d(&self) -> usize {
        self.plain().d
    }

    fn data(&self) -> &'a [f64] {
        self.plain().data
    }

    fn weights(&self) -> Option<&'a [f64]> {
        self.plain().weights
    }

    fn labels_mut(&mut self) -> &mut Vec<u32> {
        &mut self.plain_mut().labels
    }

    fn set_index_offset(&mut self, offset: u64) {
        self.plain_mut().index_offset = offset;
    }
}

/// The rank's shard, with a stepper that all-reduces.
struct MpiStepper<'a, C: Communicator> {
    world: &'a C,
    local: Local<'a>,
    timings: Timings,
    /// Assignment steps of this launch.
    steps: usize,
    /// The step whose all-reduced statistics this rank perturbs ([`PERTURB_AT_VAR`]).
    perturb_step: Option<usize>,
    /// All-reduce results that differed between ranks and were replaced by rank 0's.
    reconciled: usize,
}

impl<C: Communicator> MpiStepper<'_, C> {
    /// The element-wise sum over all ranks, the same bits on every rank (module docs);
    /// `perturb` flips the lowest bit of every value of this rank's result first (tests).
    fn all_sum(&mut self, v: &[f64], perturb: bool) -> Vec<f64> {
        let t = Instant::now();
        let mut out = vec![0.0; v.len()];
        self.world
            .all_reduce_into(v, &mut out[..], SystemOperation::sum());
        if perturb {
            out.iter_mut()
                .for_each(|x: &mut f64| *x = f64::from_bits(x.to_bits() ^ 1));
        }
        if !same_on_every_rank(self.world, digest(out.iter().map(|x| x.to_bits()))) {
            self.world.process_at_rank(0).broadcast_into(&mut out[..]);
            self.reconciled += 1;
        }
        self.timings.allreduce += t.elapsed().as_secs_f64();
        out
    }
}

impl<C: Communicator> Stepper for MpiStepper<'_, C> {
    fn dim(&self) -> usize {
        self.local.d()
    }

    fn step(&mut self, centroids: &[f64], k: usize) -> Result<StepStats, KMeansError> {
        let t = Instant::now();
        let local = self.local.stepper().step(centroids, k)?;
        self.timings.compute += t.elapsed().as_secs_f64();
        self.steps += 1;
        let perturb = self.perturb_step == Some(self.steps);
        let global = self.all_sum(&local.to_flat(), perturb);
        Ok(StepStats::from_flat(&global, k, self.local.d()))
    }

    fn exact_inertia(&mut self, centroids: &[f64], k: usize) -> Result<Option<f64>, KMeansError> {
        // Every rank takes the same branch: whether the local step used the formula depends
        // only on d and k.
        let local = self.local.stepper().exact_inertia(centroids, k)?;
        Ok(local.map(|v| self.all_sum(&[v], false)[0]))
    }

    fn farthest(&mut self, centroids: &[f64], m: usize) -> Result<Vec<Candidate>, KMeansError> {
        let d = self.local.d();
        let local = self.local.stepper().farthest(centroids, m)?;
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

/// Fails on every rank when any rank failed (so no rank waits in a collective forever): a
/// failing rank returns its own error, the others a [`KMeansError::Distributed`] that quotes
/// the error of the lowest failing rank.
fn agree<C: Communicator, T>(world: &C, local: Result<T, KMeansError>) -> Result<T, KMeansError> {
    let size = world.size();
    let mine = if local.is_err() { world.rank() } else { size };
    let mut first = size;
    world.all_reduce_into(&mine, &mut first, SystemOperation::min());
    if first == size {
        return local;
    }
    let root = world.process_at_rank(first);
    let mut msg = match &local {
        Err(e) if world.rank() == first => e.to_string().into_bytes(),
        _ => Vec::new(),
    };
    let mut len = msg.len() as u64;
    root.broadcast_into(&mut len);
    msg.resize(len as usize, 0);
    root.broadcast_into(&mut msg[..]);
    match local {
        Err(e) => Err(e),
        Ok(_) => Err(KMeansError::Distributed(format!(
            "rank {first} failed: {}",
            String::from_utf8_lossy(&msg)
        ))),
    }
}

/// Whether every rank passed the same `value`; the answer is the same on every rank (an
/// all-reduce of integers).
fn same_on_every_rank<C: Communicator>(world: &C, value: u64) -> bool {
    // min(!v) = !max(v): the minimum and the maximum in one all-reduce.
    let send = [value, !value];
    let mut out = [0u64; 2];
    world.all_reduce_into(&send[..], &mut out[..], SystemOperation::min());
    out[0] == !out[1]
}

/// Fails on every rank unless every rank passed the same `value`.
fn agree_same<C: Communicator>(world: &C, value: u64, what: &str) -> Result<(), KMeansError> {
    if same_on_every_rank(world, value) {
        Ok(())
    } else {
        Err(KMeansError::InvalidParameter(format!(
            "the ranks were given different {what}"
        )))
    }
}

/// The XOR over all ranks of their [`digest_part`]s: the digest of the whole vector.
fn all_digest<C: Communicator>(world: &C, first_index: u64, values: &[f64]) -> u64 {
    let mut out = 0u64;
    world.all_reduce_into(
        &digest_part(first_index, values),
        &mut out,
        SystemOperation::bitwise_xor(),
    );
    out
}

/// This rank's weights, checked (length, values with their global index), their digest, and
/// a check that they are not all zero.
fn read_shard_weights<C: Communicator>(
    world: &C,
    path: &Path,
    n: u64,
    shard: &std::ops::Range<u64>,
) -> Result<(Vec<f64>, u64), KMeansError> {
    let local = read_weights_shard(path, n, shard.clone()).and_then(|w| {
        check_weight_values(&w, shard.start)?;
        Ok(w)
    });
    let w = agree(world, local)?;
    let digest = all_digest(world, shard.start, &w);
    let mut total = 0.0;
    world.all_reduce_into(&w.iter().sum::<f64>(), &mut total, SystemOperation::sum());
    // Non-negative weights: the total is 0 on every rank exactly when every weight is 0.
    if total <= 0.0 {
        return Err(KMeansError::InvalidWeights("all weights are zero".into()));
    }
    Ok((w, digest))
}

/// `NUMBER:RANK` from the environment variable `var` (the test hooks).
fn rank_plan(var: &str) -> Option<(usize, i32)> {
    let v = std::env::var(var).ok()?;
    let (it, rank) = v.split_once(':')?;
    Some((it.trim().parse().ok()?, rank.trim().parse().ok()?))
}

/// Runs one distributed k-means job on `world`; every rank calls it. Rank 0 gets the report
/// (and writes the output files); the others get `None`.
///
/// # Complexity
/// `O(n k d / R)` compute, an all-reduce of `k d + k + 2` values and one of two integers
/// (the agreement check, module docs) per iteration on `R` ranks.
///
/// # Errors
/// Bad input or parameters (every rank returns an error: [`KMeansError::ZeroClusters`],
/// [`KMeansError::TooManyClusters`], [`KMeansError::ZeroDimensions`],
/// [`KMeansError::NonFiniteData`], [`KMeansError::ShapeMismatch`] for given centroids that are
/// not `k x d` or a weights file whose length is not `n`, [`KMeansError::InvalidParameter`]
/// for non-finite given centroids or ranks given different parameters,
/// [`KMeansError::InvalidWeights`]), a checkpoint that belongs to another job (other data,
/// weights, `k`, init, seed, `tol` or given centroids, or past `max_iter`:
/// [`KMeansError::CheckpointMismatch`], see [`Checkpoint::check_resume`]) or that cannot be
/// read ([`KMeansError::Format`]), I/O failures; on the ranks where the check passed the
/// error is a [`KMeansError::Distributed`] that quotes the failing rank's. Ranks that read
/// different checkpoints, or (a bug) end with different centroids, fail with
/// [`KMeansError::Distributed`] on every rank.
///
/// # Examples
/// Every rank of `mpirun -n 4 ./program` runs this (it needs `mpirun`, so it is not run here):
/// ```no_run
/// use clustering::distributed::{DistributedConfig, Input, run_distributed};
/// use clustering::{Init, KMeans};
/// let universe = mpi::initialize().expect("MPI initialises once");
/// let start = clustering::data::read_matrix("start.csv".as_ref())?;
/// let cfg = DistributedConfig {
///     input: Input::Npy("data.npy".into()),
///     weights: Some("weights.npy".into()),
///     params: KMeans::new(start.nrows()).init(Init::Given(start)),
///     checkpoint: Some("ck.json".into()),
///     resume: true,
///     output: Some("result.json".into()),
///     labels: None,
/// };
/// if let Some(report) = run_distributed(&universe.world(), &cfg)? {
///     println!("{} iterations, inertia {}", report.iterations, report.inertia);
/// }
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn run_distributed<C: Communicator>(
    world: &C,
    cfg: &DistributedConfig,
) -> Result<Option<DistributedReport>, KMeansError> {
    let started = Instant::now();
    let rank = world.rank();
    let ranks = world.size() as u64;
    let p = &cfg.params;
    let input = check_job(world, cfg)?;
    let (n, d) = (input.3, input.4);
    let shard = shard_range(n, ranks, rank as u64);
    let t = Instant::now();
    let (data, weights, weights_digest) = read_shard(world, cfg, &input, &shard)?;
    let job = Job {
        params: p,
        n,
        d,
        data_digest: all_digest(world, shard.start * d as u64, &data),
        weights_digest,
    };
    let read_s = t.elapsed().as_secs_f64();

    let groups = agree(
        world,
        groups_for(p.algorithm, data.len() / d, d, 8, p.k, p.max_iter + 1),
    )?;
    let mut stepper = MpiStepper {
        world,
        local: Local::new(&data, d, weights.as_deref(), groups),
        timings: Timings {
            read: read_s,
            ..Timings::default()
        },
        steps: 0,
        perturb_step: rank_plan(PERTURB_AT_VAR)
            .filter(|&(_, r)| r == rank)
            .map(|(step, _)| step),
        reconciled: 0,
    };
    stepper.local.set_index_offset(shard.start);

    let resumed = resume_checkpoint(world, cfg, &job)?;
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
            // `initial_centroids` makes the same choice on every rank from the same bits.
            let (sample, sample_w) = global_sample(&mut stepper, n, shard.start);
            let w = sample_w.as_deref();
            let init = initial_centroids(&p.init, &sample, d, w, p.k, p.seed, 0, &mut |_| {});
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
        limit: ShiftLimit::Absolute(tol_abs),
        start_iteration,
        final_labels: true,
    };
    let fail = if resumed.is_none() {
        rank_plan(FAIL_AT_VAR)
    } else {
        None
    };
    let mut ck_seconds = 0.0;
    let mut write_ck = |iteration: usize, c: &[f64], converged: bool| -> Result<(), KMeansError> {
        if let (0, Some(path)) = (rank, &cfg.checkpoint) {
            let t = Instant::now();
            Checkpoint {
                version: CHECKPOINT_VERSION,
                n,
                d,
                k: p.k,
                iteration,
                tol_abs,
                converged,
                centroid_bits: to_bits(c),
                initial_bits: to_bits(&initial),
                weights_digest,
                job: Some(job.recorded()),
            }
            .write_atomic(path)?;
            ck_seconds += t.elapsed().as_secs_f64();
        }
        Ok(())
    };
    // The rank's steps on a team of its threads (crate::team), as a local fit runs them.
    let local_rows = stepper.local.data().len() / d.max(1);
    let threads = crate::cpu::team_threads(local_rows, p.k, d);
    let out = crate::team::with_team(threads, || {
        lloyd(&mut stepper, start_centroids, &params, |iteration, c, _| {
            write_ck(iteration, c, false)?;
            fail_on_purpose(world, fail, iteration);
            Ok(())
        })
    })?;
    // A run resumed from a converged checkpoint does no iteration and stays converged.
    let converged = out.converged || already_converged;
    // Every rank took the same decisions from the same bits (module docs); a divergence
    // that slipped through is an error on every rank, never mixed labels.
    let end = to_bits(&out.centroids)
        .into_iter()
        .chain([out.iterations as u64, u64::from(converged)]);
    if !same_on_every_rank(world, digest(end)) {
        return Err(KMeansError::Distributed(
            "the ranks ended with different centroids or iteration counts".into(),
        ));
    }
    write_ck(out.iterations, &out.centroids, converged)?;

    let labels = std::mem::take(stepper.local.labels_mut());
    let mut timings = stepper.timings;
    timings.checkpoint = ck_seconds;
    let reconciled = stepper.reconciled;
    if !gather_labels(world, cfg, labels)? {
        return Ok(None);
    }
    timings.total = started.elapsed().as_secs_f64();
    let report = DistributedReport {
        n,
        d,
        k: p.k,
        ranks: ranks as usize,
        iterations: out.iterations,
        converged,
        inertia: out.last.inertia,
        resumed_from: resumed.as_ref().map(|c| c.iteration),
        centroids: out.centroids.clone(),
        centroid_bits: to_bits(&out.centroids),
        initial_bits: to_bits(&initial),
        seconds: timings,
        reconciled,
    };
    if let Some(o) = &cfg.output {
        write_report(o, &report)?;
    }
    Ok(Some(report))
}

/// The input file's description `(path, offset, dtype, n, d)` once every rank has checked the
/// parameters, the input and the given centroids, and agreed on the job.
fn check_job<C: Communicator>(
    world: &C,
    cfg: &DistributedConfig,
) -> Result<(PathBuf, u64, NpyType, u64, usize), KMeansError> {
    let p = &cfg.params;
    agree(world, check_params(p))?;
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
    agree(world, check_given(&p.init, p.k, None, d))?;
    // The outcome is the same on every rank: no `agree` needed.
    agree_same(
        world,
        job_digest(p, cfg.weights.is_some()),
        "parameters, given centroids or weighting",
    )?;
    Ok((path, offset, dtype, n, d))
}

/// The rank's rows of the input (checked finite) and weights, with the weights' digest.
type Shard = (Vec<f64>, Option<Vec<f64>>, Option<u64>);

/// Reads this rank's `shard` of the input described by `input` (`check_job`) and of the
/// weights; every rank fails when one does.
fn read_shard<C: Communicator>(
    world: &C,
    cfg: &DistributedConfig,
    input: &(PathBuf, u64, NpyType, u64, usize),
    shard: &std::ops::Range<u64>,
) -> Result<Shard, KMeansError> {
    let (path, offset, dtype, n, d) = input;
    let (offset, dtype, n, d) = (*offset, *dtype, *n, *d);
    let data = agree(
        world,
        read_rows(
            path,
            offset,
            dtype,
            shard.start,
            shard.end - shard.start,
            d as u64,
        )
        .and_then(|v| check_finite(&v, d, shard.start as usize).map(|_| v)),
    )?;
    let (weights, weights_digest) = match &cfg.weights {
        Some(wp) => {
            let (w, digest) = read_shard_weights(world, wp, n, shard)?;
            (Some(w), Some(digest))
        }
        None => (None, None),
    };
    Ok((data, weights, weights_digest))
}

/// The checkpoint to resume from, when asked for and there; every rank must take the same
/// branch (their collectives differ) and read the same checkpoint.
fn resume_checkpoint<C: Communicator>(
    world: &C,
    cfg: &DistributedConfig,
    job: &Job<'_>,
) -> Result<Option<Checkpoint>, KMeansError> {
    let resume_from = cfg
        .checkpoint
        .as_ref()
        .filter(|ck| cfg.resume && ck.exists());
    agree_same(
        world,
        u64::from(resume_from.is_some()),
        "answers to whether the checkpoint exists (is it on a shared file system?)",
    )?;
    let Some(path) = resume_from else {
        return Ok(None);
    };
    let ck = agree(
        world,
        Checkpoint::read(path).and_then(|ck| ck.check_resume(path, job).map(|_| ck)),
    )?;
    let state = [
        ck.iteration as u64,
        u64::from(ck.converged),
        ck.tol_abs.to_bits(),
    ];
    let all = state.into_iter().chain(ck.centroid_bits.iter().copied());
    if !same_on_every_rank(world, digest(all.chain(ck.initial_bits.iter().copied()))) {
        return Err(KMeansError::Distributed(format!(
            "the ranks read different checkpoints from {} (is it on a shared file system?)",
            path.display()
        )));
    }
    Ok(Some(ck))
}

/// The failure test ([`FAIL_AT_VAR`]): after iteration `at`, rank `r` exits, once every rank
/// knows the checkpoint is on disk.
fn fail_on_purpose<C: Communicator>(world: &C, fail: Option<(usize, i32)>, iteration: usize) {
    if let Some((at, r)) = fail
        && at == iteration
    {
        world.barrier();
        let rank = world.rank();
        if r != rank {
            return;
        }
        eprintln!(
            "kmeans-mpi: rank {rank} failing on purpose after iteration {iteration} ({FAIL_AT_VAR})"
        );
        std::process::exit(17);
    }
}

/// Sends the labels to rank 0, in rank order, which writes them when `cfg.labels` asks for
/// them; returns whether this rank is rank 0 (the one that reports).
fn gather_labels<C: Communicator>(
    world: &C,
    cfg: &DistributedConfig,
    labels: Vec<u32>,
) -> Result<bool, KMeansError> {
    if world.rank() != 0 {
        if cfg.labels.is_some() {
            world.process_at_rank(0).send(&labels[..]);
        }
        return Ok(false);
    }
    if let Some(lp) = &cfg.labels {
        let mut all = labels;
        for r in 1..world.size() {
            let (mut v, _) = world.process_at_rank(r).receive_vec::<u32>();
            all.append(&mut v);
        }
        write_labels(lp, &all)?;
    }
    Ok(true)
}

fn global_mean_variance<C: Communicator>(s: &mut MpiStepper<'_, C>, n: u64) -> f64 {
    let d = s.local.d();
    let sums = s.all_sum(&column_moments(s.local.data(), d, None), false);
    let mean: Vec<f64> = sums.iter().map(|v| v / n as f64).collect();
    let ss = s.all_sum(&column_moments(s.local.data(), d, Some(&mean)), false);
    ss.iter().sum::<f64>() / n as f64 / d as f64
}

/// Rows `i * n / s` for `i < s` and their weights (when the run is weighted), the same on
/// every rank whatever the number of ranks.
fn global_sample<C: Communicator>(
    s: &mut MpiStepper<'_, C>,
    n: u64,
    start: u64,
) -> (Vec<f64>, Option<Vec<f64>>) {
    let d = s.local.d();
    let rows = n.min(INIT_SAMPLE_ROWS) as usize;
    let end = start + (s.local.data().len() / d) as u64;
    // The points, then the weights (each rank fills its rows; the rest stay 0).
    let weighted = s.local.weights().is_some();
    let mut buf = vec![0.0; rows * d + if weighted { rows } else { 0 }];
    for i in 0..rows {
        let g = (i as u128 * n as u128 / rows as u128) as u64;
        if (start..end).contains(&g) {
            let l = (g - start) as usize;
            buf[i * d..(i + 1) * d].copy_from_slice(&s.local.data()[l * d..(l + 1) * d]);
            if let Some(w) = s.local.weights() {
                buf[rows * d + i] = w[l];
            }
        }
    }
    let mut all = s.all_sum(&buf, false);
    let weights = weighted.then(|| all.split_off(rows * d));
    (all, weights)
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
