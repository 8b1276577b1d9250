//! The seeds' experiments of this crate, for `warpath reproduce` (see `warpath_report`).
//!
//! From seed 002 ("k-means clustering using CUDAfy.NET"), the run time of the sequential,
//! multi-core and GPU k-means on the seed's two-cluster data, median of 30 runs:
//!
//! - `kmeans-vary-n`: 10 to 10^7 points, d = 2, K = 2;
//! - `kmeans-vary-d`: 10^5 points, d = 2 to 128, K = 2;
//! - `kmeans-vary-k`: 10^5 points, d = 2, K = 2 to 128, with the speed-ups over the sequential
//!   version beside the seed's 2.62x (multi-core) and 11.69x (GPU).
//!
//! From seed 002 ("distributed k-means clustering"), `kmeans-distributed`: where the time of
//! 100 iterations goes (sharing the data, computing, aggregating, synchronising) for d = 2,
//! K = 4, N = 10^7, its Table 1, over worker threads running the chunked path ([`crate::chunked`]).
//!
//! Every run uses the seed's k-means ([`seed_kmeans`]), not the library's defaults.

use std::sync::{Barrier, Mutex, RwLock};
use std::time::Instant;

use gpu_runtime::Exec;
use ndarray::{Array2, ArrayView2, s};
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, GpuUse, Row, Spec, median};

use crate::chunked::{ChunkStats, chunk_farthest, chunk_stats, next_centroids, sample_centroids};
use crate::data::two_clusters;
use crate::{Convergence, Init, KMeans, KMeansError, KMeansResult};

/// This crate's experiments, in the order of the seeds.
pub fn specs() -> Vec<Spec> {
    vec![
        Spec {
            id: "kmeans-vary-n",
            seed: "002",
            title: "k-means run time against the number of points (d = 2, K = 2)",
            run: kmeans_vary_n,
        },
        Spec {
            id: "kmeans-vary-d",
            seed: "002",
            title: "k-means run time against the point dimension (N = 10^5, K = 2)",
            run: kmeans_vary_d,
        },
        Spec {
            id: "kmeans-vary-k",
            seed: "002",
            title: "k-means run time and speed-ups against the number of clusters (N = 10^5, d = 2)",
            run: kmeans_vary_k,
        },
        Spec {
            id: "kmeans-distributed",
            seed: "002",
            title: "where the time of distributed k-means goes (d = 2, K = 4, N = 10^7, 100 iterations)",
            run: kmeans_distributed,
        },
    ]
}

/// The seed's k-means (its C++ version): `k` random data points as the first centroids, stop
/// when the summed squared centroid shift is at most 0.001 times the previous iteration's, at
/// most 1,000 iterations; one run from `seed`.
///
/// # Examples
/// ```
/// use clustering::{Convergence, Init, experiments::seed_kmeans};
/// let p = seed_kmeans(4, 1);
/// assert_eq!((p.init, p.convergence, p.tol, p.max_iter), (Init::Random, Convergence::PreviousShift, 1e-3, 1000));
/// ```
pub fn seed_kmeans(k: usize, seed: u64) -> KMeans {
    KMeans::new(k)
        .init(Init::Random)
        .convergence(Convergence::PreviousShift)
        .tol(1e-3)
        .max_iter(1000)
        .seed(seed)
}

/// The seed of the data generator of every experiment here.
const DATA_SEED: u64 = 2016;

fn fail(what: &str) -> impl Fn(KMeansError) -> ExperimentError + '_ {
    move |e| ExperimentError::from_display(what, e)
}

/// How one backend fits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Backend {
    /// [`KMeans::fit_reference`]: one thread, plain loops (the seed's sequential version).
    Sequential,
    /// [`KMeans::fit`] on the CPU in a one-thread rayon pool: the multi-core path's kernels
    /// without the threads (what its speed-up owes to the kernels alone).
    RayonOneThread,
    /// [`KMeans::fit`] on the CPU: rayon over every core (the seed's multi-core version).
    Rayon,
    /// [`KMeans::fit`] on the GPU.
    Cuda,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Sequential => "cpu",
            Backend::RayonOneThread => "rayon-1-thread",
            Backend::Rayon => "rayon",
            Backend::Cuda => "cuda",
        }
    }

    /// Fits on this backend; `one_thread` is the pool of [`Backend::RayonOneThread`], built
    /// once outside the timed region.
    fn fit(
        self,
        p: KMeans,
        x: ArrayView2<'_, f64>,
        one_thread: &rayon::ThreadPool,
    ) -> Result<KMeansResult<f64>, KMeansError> {
        match self {
            Backend::Sequential => p.fit_reference(x, None),
            Backend::RayonOneThread => one_thread.install(|| p.exec(Exec::Cpu).fit(x)),
            Backend::Rayon => p.exec(Exec::Cpu).fit(x),
            Backend::Cuda => p.exec(Exec::Cuda).fit(x),
        }
    }
}

/// The largest `n k d` the simulated driver runs (it is slow and times nothing).
const SIMULATED_MAX_WORK: usize = 1 << 16;

/// One point of a sweep: `n` points of dimension `d` into `k` clusters, each backend fitted
/// `repeats` times (run `r` from initial centroids drawn with seed `r`, the same for every
/// backend); a row per backend with the median time of the whole fit, the median iteration
/// count and the speed-up over the sequential backend.
fn sweep_point(
    ctx: &Context,
    n: usize,
    d: usize,
    k: usize,
    repeats: usize,
) -> Result<Vec<Row>, ExperimentError> {
    let blobs = two_clusters(n, d, DATA_SEED);
    let x = blobs.data.view();
    let mut backends = vec![Backend::Sequential, Backend::RayonOneThread, Backend::Rayon];
    let simulated = ctx.gpu == GpuUse::Simulated;
    if ctx.gpu_rows() && (!simulated || n * d * k <= SIMULATED_MAX_WORK) {
        backends.push(Backend::Cuda);
    }
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| ExperimentError::from_display("a one-thread pool", e))?;
    let mut rows = Vec::new();
    let mut sequential_secs = f64::NAN;
    for b in backends {
        ctx.progress(&format!("n = {n}, d = {d}, k = {k}: {}", b.name()));
        let runs = if b == Backend::Cuda && simulated {
            1
        } else {
            repeats
        };
        let (mut secs, mut iters, mut per_iter) = (Vec::new(), Vec::new(), Vec::new());
        let mut first: Option<KMeansResult<f64>> = None;
        for r in 0..runs {
            let p = seed_kmeans(k, r as u64);
            let t = Instant::now();
            let fit = b.fit(p, x, &one_thread).map_err(fail("k-means"))?;
            let s = t.elapsed().as_secs_f64();
            secs.push(s);
            iters.push(fit.iterations as f64);
            per_iter.push(s / fit.iterations.max(1) as f64);
            first.get_or_insert(fit);
        }
        let fit = first.expect("at least one run");
        let seconds = median(&mut secs);
        if b == Backend::Sequential {
            sequential_secs = seconds;
        }
        let row = Row::new()
            .with("n", n)
            .with("d", d)
            .with("k", k)
            .with("repeats", runs)
            .with(
                "threads",
                match b {
                    Backend::Sequential | Backend::RayonOneThread => Some(1),
                    Backend::Rayon => Some(rayon::current_num_threads()),
                    Backend::Cuda => None,
                },
            );
        let row = if b == Backend::Cuda {
            row.on_gpu(ctx)
        } else {
            row.with("backend", b.name())
        };
        rows.push(
            row.secs("seconds", seconds)
                .secs("ms_per_iteration", 1e3 * median(&mut per_iter))
                .secs("speedup", sequential_secs / seconds)
                .with("iterations", median(&mut iters))
                .with("inertia_run0", fit.inertia)
                .with(
                    "centre_error_run0",
                    centre_error(&fit.centroids, &blobs.centres),
                ),
        );
    }
    Ok(rows)
}

/// For `k = 2`, the largest distance of a planted centre to the nearest found centroid (how
/// well the two natural clusters were found); null for other `k`.
fn centre_error(found: &Array2<f64>, planted: &Array2<f64>) -> Option<f64> {
    (found.nrows() == 2).then(|| {
        planted
            .rows()
            .into_iter()
            .map(|p| {
                found
                    .rows()
                    .into_iter()
                    .map(|c| c.iter().zip(p).map(|(a, b)| (a - b) * (a - b)).sum::<f64>())
                    .fold(f64::INFINITY, f64::min)
                    .sqrt()
            })
            .fold(0.0, f64::max)
    })
}

/// What the three sweeps share in `notes`.
fn sweep_notes(e: &mut Experiment, ctx: &Context, repeats: usize) {
    e.notes.push(
        "The seed's k-means, not the library's defaults: k random data points as the first \
         centroids (ours are distinct points; the seed's rand() % N may repeat one), stop when the \
         summed squared centroid shift is at most 0.001 times the previous iteration's, at most \
         1,000 iterations (`seed_kmeans`; on the command line `warpath kmeans --init random \
         --convergence previous-shift --tol 0.001 --max-iter 1000`). The library's defaults are \
         k-means++, a shift of at most 1e-4 times the data's variance, 300 iterations."
            .into(),
    );
    e.notes.push(format!(
        "Median of {repeats} runs; run r starts from the random centroids of seed r, the same for \
         every backend, so the backends do the same iterations. The seed's GPU code stopped at 1% \
         of the previous shift (its CPU code at 0.1%): here every backend stops at 0.1%. A time \
         is the whole fit as the seed timed fit(): checks, initial centroids, iterations, and on \
         the GPU the upload of the points and the per-iteration transfers."
    ));
    e.notes.push(
        "Data: the seed says only \"two natural clusters at .25 or -.25 in each dimension\"; \
         here each point picks one of the two centres at random and lies uniformly within 0.2 \
         of it in every coordinate (`data::two_clusters`, seed 2016)."
            .into(),
    );
    e.notes.push(format!(
        "Backends: `cpu` is the sequential reference (one thread, plain loops in f64, as the \
         seed's sequential version); `rayon` the library's multi-core path ({} threads here); \
         `rayon-1-thread` the same path in a one-thread pool, so that the part of `rayon`'s \
         speed-up owed to its kernels (blocked distances, a fixed reduction tree) shows apart \
         from the part owed to the threads (the seed's parallel version ran its sequential \
         kernel on every core); `cuda` the GPU path. The seed \
         compared C++, C# and Python (scikit-learn) versions on a 4-core i7-2630QM laptop with a \
         GeForce GT 525M; scikit-learn is not rerun here.",
        rayon::current_num_threads()
    ));
    if ctx.gpu == GpuUse::Simulated {
        e.notes.push(format!(
            "GPU rows ran on the simulated driver (n k d at most {SIMULATED_MAX_WORK}, one run): \
             their results are real, their times are not measured."
        ));
    }
}

/// The seed's words on its k-means experiments.
const SEED_SETUP: &str = "Each reported point is the median of thirty run times of fit(points, \
    pointDim, numClusters) on a dataset of two natural clusters at .25 or -.25 in each \
    dimension (Intel Core i7-2630QM, NVIDIA GeForce GT 525M, Windows 7; C++, C# with CUDAfy.NET, \
    Python with scikit-learn). ";

/// The experiment `id` of [`specs`] (its seed and title taken from there), saying
/// `seed_says`.
fn seed_experiment(id: &str, seed_says: String) -> Experiment {
    let spec = specs().into_iter().find(|s| s.id == id);
    let spec = spec.expect("every experiment is listed in specs()");
    let mut e = Experiment::new(spec.id, spec.seed, spec.title);
    e.seed_says = seed_says;
    e
}

/// [`seed_experiment`] of a sweep: the seed's words on its setup ([`SEED_SETUP`]), then
/// `seed_says`.
fn seed_sweep(id: &str, seed_says: &str) -> Experiment {
    seed_experiment(id, format!("{SEED_SETUP}{seed_says}"))
}

/// A sweep into `e`: the rows of every point `(n, d, k)`, each measured `repeats` times, then
/// the sweeps' notes ([`sweep_notes`]), the `extra` notes and `figure`.
fn sweep(
    ctx: &Context,
    mut e: Experiment,
    points: impl IntoIterator<Item = (usize, usize, usize)>,
    repeats: usize,
    extra: impl IntoIterator<Item = String>,
    figure: FigureSpec,
) -> Result<Experiment, ExperimentError> {
    for (n, d, k) in points {
        e.rows.extend(sweep_point(ctx, n, d, k, repeats)?);
    }
    sweep_notes(&mut e, ctx, repeats);
    e.notes.extend(extra);
    e.figure = Some(figure);
    Ok(e)
}

/// A sweep's log-log chart of `y` against `x`, a line per backend, with its axis `labels`.
fn sweep_figure(x: &str, y: &str, title: &str, labels: (&str, &str)) -> FigureSpec {
    FigureSpec::lines(x, &[y])
        .title(title)
        .series(&["backend"])
        .log(true, true)
        .labels(labels.0, labels.1)
}

/// The values of `axis` (d or K) a sweep over `n` points takes: 2, 8, 32 and 128 at the quick
/// size, else every power of 2 from 2 to 128 (the seed's); and the note on the quick size
/// when `n` is below the seed's 10^5.
fn powers_of_two(ctx: &Context, n: usize, axis: &str) -> (Vec<usize>, Option<String>) {
    let values = if ctx.size == warpath_report::Size::Quick {
        vec![2, 8, 32, 128]
    } else {
        (1..=7).map(|p| 1usize << p).collect()
    };
    let quick = (n < 100_000).then(|| {
        format!(
            "Quick size: N = {n} and {axis} = 2, 8, 32, 128 (the seed's 10^5 and every power of 2 with --full)."
        )
    });
    (values, quick)
}

/// `kmeans-vary-n`: run time against the number of points, d = 2, K = 2 (seed: 10 to 10^7).
///
/// # Errors
/// A fit failing (none is expected; on the GPU, a device error).
pub fn kmeans_vary_n(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let top = ctx.pick(5, 7);
    let repeats = ctx.pick(5, 30);
    let e = seed_sweep(
        "kmeans-vary-n",
        "Varying point quantity, 10 to 10^7 two-dimensional points into two clusters: the C++ \
         sequential and parallel versions are tied (threading overhead cancels the gain); the C# \
         GPU version does not beat the C# parallel one but beats the C# sequential one as N \
         grows; one GPU iteration took 1 to 4 ms for 100,000 two-dimensional points. The seed's \
         figures are charts without published numbers.",
    );
    let quick =
        (top < 7).then(|| format!("Quick size: N up to 10^{top} (the seed's 10^7 with --full)."));
    let figure = sweep_figure(
        "n",
        "seconds",
        "k-means run time, d = 2, K = 2",
        ("points N", "seconds (median)"),
    );
    let points = (1..=top).map(|p| (10usize.pow(p), 2, 2));
    sweep(ctx, e, points, repeats, quick, figure)
}

/// `kmeans-vary-d`: run time against the point dimension, N = 10^5, K = 2 (seed: 2 to 2^7).
///
/// # Errors
/// A fit failing (none is expected; on the GPU, a device error).
pub fn kmeans_vary_d(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let n = ctx.pick(10_000, 100_000);
    let repeats = ctx.pick(5, 30);
    let e = seed_sweep(
        "kmeans-vary-d",
        "Varying point dimension, 10^5 points of 2 to 2^7 dimensions into two clusters: the C++ \
         and C# parallel versions are consistently faster than their sequential ones; the C# GPU \
         version is slower than both C# CPU versions (the seed suspects the host-device \
         transfers). The figures are charts without published numbers.",
    );
    let (dims, quick) = powers_of_two(ctx, n, "d");
    let figure = sweep_figure(
        "d",
        "seconds",
        &format!("k-means run time, N = {n}, K = 2"),
        ("dimension d", "seconds (median)"),
    );
    let points = dims.into_iter().map(|d| (n, d, 2));
    sweep(ctx, e, points, repeats, quick, figure)
}

/// `kmeans-vary-k`: run time and speed-ups against the number of clusters, N = 10^5, d = 2
/// (seed: 2 to 2^7; its speed-ups 2.62x multi-core and 11.69x GPU over sequential).
///
/// # Errors
/// A fit failing (none is expected; on the GPU, a device error).
pub fn kmeans_vary_k(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let n = ctx.pick(10_000, 100_000);
    let repeats = ctx.pick(3, 30);
    let mut e = seed_sweep(
        "kmeans-vary-k",
        "Varying cluster quantity, 10^5 two-dimensional points into 2 to 2^7 clusters: the \
         parallel versions beat the sequential ones and the C# GPU version is finally faster; at \
         most 10 ms for two clusters, about 100 ms for four to eight. Conclusion: \"speedups over \
         sequential implementations of about 2.62x and 11.69x in the C# parallel and GPGPU \
         implementations respectively when attempting to find large numbers of clusters on low \
         dimensional data\" (expected upper bounds: 8x parallel, 255x GPU).",
    );
    // The seed does not say at which K its speed-ups were measured: "large numbers of
    // clusters", the largest of its sweep.
    for (backend, speedup) in [("rayon", 2.62), ("cuda", 11.69)] {
        e.seed_rows.push(
            Row::new()
                .with("backend", backend)
                .with("k", 128)
                .with("speedup", speedup),
        );
    }
    let speedups = "The seed's speed-ups are its C# versions against C# sequential, at \"large \
        numbers of clusters\" (placed at K = 128, the end of its sweep); ours are each backend's \
        median time against our sequential version at the same K."
        .to_string();
    let (ks, quick) = powers_of_two(ctx, n, "K");
    let figure = sweep_figure(
        "k",
        "speedup",
        &format!("speed-up over sequential k-means, N = {n}, d = 2"),
        (
            "clusters K",
            "speed-up (median sequential time / median time)",
        ),
    );
    let points = ks.into_iter().map(|k| (n, 2, k));
    sweep(
        ctx,
        e,
        points,
        repeats,
        [speedups].into_iter().chain(quick),
        figure,
    )
}

/// Where the time of a chunked k-means over worker threads went (seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSplit {
    /// Handing every worker its own copy of its partition of the rows.
    pub sharing: f64,
    /// Per iteration the busiest worker's partial sums ([`chunk_stats`]), summed.
    pub computing: f64,
    /// Adding the partials in the workers' order and the centroid update
    /// ([`next_centroids`], with [`chunk_farthest`] when a cluster came out empty).
    pub aggregating: f64,
    /// The rest of every iteration: the barrier, waking the workers, the wait for the slowest.
    pub synchronizing: f64,
    /// Everything, from the first copy to the last iteration's centroids.
    pub total: f64,
    /// The final centroids.
    pub centroids: Array2<f64>,
}

/// What a worker hands back each iteration: its partial sums and the seconds they took.
type WorkerResult = Result<(ChunkStats, f64), KMeansError>;

/// Runs exactly `iterations` Lloyd iterations of chunked k-means from `start` over `workers`
/// threads, each holding a copy of an equal share of the rows of `x` (the seed's distributed
/// design in one process: partitions handed out once, partial sums per worker, a barrier each
/// iteration, the sums aggregated into the next centroids), and says where the time went.
///
/// # Complexity
/// `O(iterations n k d / workers)` time; `O(n d)` extra memory (the copies).
///
/// # Errors
/// As [`chunk_stats`] (bad data or centroids).
///
/// # Examples
/// ```
/// use clustering::{data::two_clusters, experiments::chunked_time_split};
/// let b = two_clusters(1000, 2, 1);
/// let start = b.data.slice(ndarray::s![..2, ..]).to_owned();
/// let t = chunked_time_split(b.data.view(), start, 10, 2)?;
/// assert!(t.computing > 0.0 && t.sharing + t.computing <= t.total);
/// # Ok::<(), clustering::KMeansError>(())
/// ```
pub fn chunked_time_split(
    x: ArrayView2<'_, f64>,
    start: Array2<f64>,
    iterations: usize,
    workers: usize,
) -> Result<TimeSplit, KMeansError> {
    let n = x.nrows();
    let (k, d) = start.dim();
    let workers = workers.clamp(1, n.max(1));
    let bounds: Vec<(usize, usize)> = (0..workers)
        .map(|w| (n * w / workers, n * (w + 1) / workers))
        .collect();
    let centroids = RwLock::new(start);
    let slots: Vec<Mutex<Option<WorkerResult>>> = (0..workers).map(|_| Mutex::new(None)).collect();
    let parts: Vec<Mutex<Option<Array2<f64>>>> = (0..workers).map(|_| Mutex::new(None)).collect();
    let barrier = Barrier::new(workers + 1);
    let t0 = Instant::now();
    let (mut computing, mut aggregating, mut synchronizing) = (0.0, 0.0, 0.0);
    let mut sharing = 0.0;
    let mut failure = None;
    std::thread::scope(|scope| {
        for (w, &(lo, hi)) in bounds.iter().enumerate() {
            let (centroids, slot, part, barrier) = (&centroids, &slots[w], &parts[w], &barrier);
            scope.spawn(move || {
                // Sharing: the worker receives its own copy of its partition.
                let mine = x.slice(s![lo..hi, ..]).to_owned();
                barrier.wait();
                for _ in 0..iterations {
                    barrier.wait(); // the next centroids are ready
                    let c = centroids.read().expect("no worker panics").clone();
                    let t = Instant::now();
                    let r = chunk_stats(mine.view(), None, c.view(), lo as u64, Exec::Cpu);
                    *slot.lock().expect("no worker panics") =
                        Some(r.map(|s| (s, t.elapsed().as_secs_f64())));
                    barrier.wait(); // partial sums are in
                }
                *part.lock().expect("no worker panics") = Some(mine);
            });
        }
        barrier.wait();
        sharing = t0.elapsed().as_secs_f64();
        for _ in 0..iterations {
            let t_iter = Instant::now();
            barrier.wait();
            barrier.wait();
            let t_agg = Instant::now();
            let mut total = ChunkStats::zeros(k, d);
            let mut busiest = 0.0f64;
            for slot in &slots {
                match slot.lock().expect("no worker panics").take() {
                    Some(Ok((st, secs))) => {
                        busiest = busiest.max(secs);
                        if failure.is_none() {
                            failure = total.merge(&st).err();
                        }
                    }
                    Some(Err(e)) => failure = failure.take().or(Some(e)),
                    None => {}
                }
            }
            if failure.is_none() {
                let mut c = centroids.write().expect("no worker panics");
                let m = total.far_points_needed();
                let mut far = Vec::new();
                if m > 0 {
                    // Rare (an empty cluster): the coordinator asks every partition.
                    for &(lo, hi) in &bounds {
                        let part = x.slice(s![lo..hi, ..]);
                        match chunk_farthest(part, None, c.view(), m, lo as u64) {
                            Ok(f) => far.extend(f),
                            Err(e) => failure = Some(e),
                        }
                    }
                }
                match next_centroids(&total, far) {
                    Ok(next) => *c = next,
                    Err(e) => failure = Some(e),
                }
            }
            let agg = t_agg.elapsed().as_secs_f64();
            let wall = t_iter.elapsed().as_secs_f64();
            computing += busiest;
            aggregating += agg;
            synchronizing += (wall - busiest - agg).max(0.0);
        }
    });
    let total = t0.elapsed().as_secs_f64();
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(TimeSplit {
        sharing,
        computing,
        aggregating,
        synchronizing,
        total,
        centroids: centroids.into_inner().expect("no worker panics"),
    })
}

/// `kmeans-distributed`: the seed's Table 1 (time of 100 iterations by task, d = 2, K = 4,
/// N = 10^7) for the chunked k-means over worker threads in one process.
///
/// # Errors
/// A chunk failing (none is expected).
pub fn kmeans_distributed(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let (n, d, k, iterations) = (ctx.pick(200_000, 10_000_000), 2, 4, 100);
    let workers = std::thread::available_parallelism()
        .map_or(1, |p| p.get())
        .min(4);
    let mut e = seed_experiment(
        "kmeans-distributed",
        "Table 1: time in milliseconds spent in each task for 100 iterations, d = 2, K = 4, \
         N = 10,000,000: sharing 721.9 (6.7%), computing 8558.7 (79.1%), synchronizing 1542.5 \
         (14.2%), unaccounted 6.2 (0.1%), total 10820.4. \"Roughly 80% of the work is going \
         towards actual computation ... the remaining 20% what amounts to distributed system \
         bookkeeping\", mostly synchronisation. Four virtual machines (a tri-core Xeon E312xx \
         2.6 GHz and 8 GiB each, 40 Gb/s RoCE), C++98 built without optimisation, data handed \
         out by RDMA, an all-to-all barrier over TCP, 100 fixed iterations."
            .into(),
    );
    let seed_parts = [
        ("sharing", 721.9, 6.7),
        ("computing", 8558.7, 79.1),
        ("synchronizing", 1542.5, 14.2),
        ("unaccounted", 6.2, 0.1),
        ("total", 10820.4, 100.0),
    ];
    for (part, ms, pct) in seed_parts {
        e.seed_rows.push(
            Row::new()
                .with("part", part)
                .with("ms", ms)
                .with("percent", pct),
        );
    }
    ctx.progress(&format!("{n} points, {workers} workers: generating"));
    let blobs = two_clusters(n, d, DATA_SEED);
    let x = blobs.data.view();
    // The seed's start: K random points (the library's choice, from a fixed subsample so that
    // it costs nothing beside the iterations).
    let stride = (n / 4096).max(1);
    let sample = x.slice(s![..;stride, ..]);
    let start = sample_centroids(sample, None, k, &Init::Random, 0, 0)
        .map_err(fail("initial centroids"))?;
    ctx.progress(&format!(
        "{n} points, {workers} workers: {iterations} iterations"
    ));
    let t = Instant::now();
    let split =
        chunked_time_split(x, start, iterations, workers).map_err(fail("chunked k-means"))?;
    let wall = t.elapsed().as_secs_f64();
    let unaccounted =
        (wall - split.sharing - split.computing - split.aggregating - split.synchronizing).max(0.0);
    let parts = [
        ("sharing", split.sharing),
        ("computing", split.computing),
        ("aggregating", split.aggregating),
        ("synchronizing", split.synchronizing),
        ("unaccounted", unaccounted),
        ("total", wall),
    ];
    for (part, secs) in parts {
        e.rows.push(
            Row::new()
                .with("backend", "cpu-threads")
                .with("part", part)
                .with("ms", 1e3 * secs)
                .with("percent", 100.0 * secs / wall)
                .with("workers", workers)
                .with("n", n)
                .with("iterations", iterations),
        );
    }
    e.notes.push(format!(
        "One process, not a cluster: {workers} worker threads (at most 4, the seed's four \
         machines; this machine's cores), each holding a copy of an equal share of the rows and \
         computing its partial sums with the chunked path that `warpath.dask` runs \
         (`chunked::chunk_stats`, which also re-checks its chunk for non-finite values every \
         iteration); a coordinator adds the partials in the workers' order and computes the \
         next centroids; a barrier each iteration. `chunked_time_split` measures the split."
    ));
    e.notes.push(
        "Parts: sharing = handing every worker its partition (a memory copy here, an RDMA \
         transfer over the network in the seed); computing = per iteration the busiest worker's \
         partial sums, summed; aggregating = adding the partials and the centroid update, which \
         the seed's table does not list apart (each of its participants aggregates itself); \
         synchronizing = the rest of each iteration (the barrier and the wait for the slowest \
         worker; in the seed an all-to-all exchange of partial results over TCP between \
         machines); unaccounted = the rest of the wall time (starting and joining the threads). \
         The seed does not define its rows further."
            .into(),
    );
    e.notes.push(
        "The seed's k-means: 100 fixed iterations from 4 random data points (drawn from a fixed \
         subsample of 4,096 rows), the seed's two-cluster data (`data::two_clusters`). For the \
         same split measured across processes see BENCHMARKS.md (Dask, `metrics_`); the MPI \
         worker `kmeans-mpi` reports rank 0's read, compute, all-reduce and checkpoint times. \
         One run, not a median."
            .into(),
    );
    if n < 10_000_000 {
        e.notes.push(format!(
            "Quick size: N = {n} (the seed's 10^7 with --full)."
        ));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpath_report::Size;

    fn rows_of<'a>(e: &'a Experiment, backend: &str) -> Vec<&'a Row> {
        e.rows
            .iter()
            .filter(|r| r.get_text("backend").as_deref() == Some(backend))
            .collect()
    }

    fn check_sweep(e: &Experiment, key: &str, values: &[f64]) {
        let cpu = rows_of(e, "cpu");
        let rayon = rows_of(e, "rayon");
        assert_eq!(cpu.len(), values.len());
        assert_eq!(rayon.len(), values.len());
        // The multi-core path gives the same bits on one thread as on every core.
        let one = rows_of(e, "rayon-1-thread");
        assert_eq!(one.len(), values.len());
        for (o, r) in one.iter().zip(&rayon) {
            assert_eq!(o.get_f64("inertia_run0"), r.get_f64("inertia_run0"));
            assert_eq!(o.get_f64("iterations"), r.get_f64("iterations"));
            assert_eq!(o.get_f64("threads"), Some(1.0));
        }
        for ((c, r), v) in cpu.iter().zip(&rayon).zip(values) {
            assert_eq!(c.get_f64(key), Some(*v));
            assert_eq!(r.get_f64(key), Some(*v));
            assert_eq!(c.get_f64("speedup"), Some(1.0));
            let (sc, sr) = (c.get_f64("seconds").unwrap(), r.get_f64("seconds").unwrap());
            assert!(sc > 0.0 && sr > 0.0);
            assert!((r.get_f64("speedup").unwrap() - sc / sr).abs() < 1e-9);
            // The same start and the same stopping rule: the same fit, up to rounding.
            let (ic, ir) = (
                c.get_f64("inertia_run0").unwrap(),
                r.get_f64("inertia_run0").unwrap(),
            );
            assert!((ic - ir).abs() <= 1e-9 * ic.max(1e-300), "{ic} vs {ir}");
            assert!(c.get_f64("iterations").unwrap() >= 1.0);
            assert!(c.get_f64("iterations").unwrap() <= 1000.0);
            if c.get_f64("k") == Some(2.0) && c.get_f64("n").unwrap() >= 100.0 {
                // Two natural clusters found: their centres within the noise's reach.
                let err = c.get_f64("centre_error_run0").unwrap();
                assert!(err < 0.05 * c.get_f64("d").unwrap().sqrt(), "{err}");
            }
        }
    }

    #[test]
    fn seed_data_has_two_clusters_at_plus_minus_a_quarter() {
        let b = two_clusters(10_000, 4, 3);
        let ones = b.truth.iter().filter(|&&t| t == 1).count();
        assert!((4_500..5_500).contains(&ones), "{ones}");
        for (row, &t) in b.data.rows().into_iter().zip(&b.truth) {
            let c = if t == 0 { 0.25 } else { -0.25 };
            assert!(row.iter().all(|v| (v - c).abs() <= 0.2));
        }
        assert_eq!(b.centres.row(1).to_vec(), vec![-0.25; 4]);
    }

    #[test]
    fn previous_shift_rule_stops_as_the_seed_does() {
        // The seed's loop: continue while change > 0.001 * pChange (pChange = 0 at first).
        let b = two_clusters(3000, 2, 9);
        let x = b.data.view();
        let start = x.slice(s![..6, ..]).to_owned();
        let p = seed_kmeans(6, 0).init(Init::Given(start.clone()));
        let fit = p.fit_reference(x, None).unwrap();
        let mut c = start;
        let (mut prev, mut iters) = (0.0, 0);
        loop {
            iters += 1;
            let mut st = ChunkStats::zeros(6, 2);
            st.merge(&chunk_stats(x, None, c.view(), 0, Exec::Cpu).unwrap())
                .unwrap();
            let next = next_centroids(&st, Vec::new()).unwrap();
            let change: f64 = next.iter().zip(&c).map(|(a, b)| (a - b) * (a - b)).sum();
            c = next;
            if change <= 0.001 * prev || iters == 1000 {
                break;
            }
            prev = change;
        }
        assert_eq!(fit.iterations, iters);
        for (a, b) in fit.centroids.iter().zip(&c) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn vary_n_finds_the_two_clusters_on_every_backend() {
        let e = kmeans_vary_n(&Context::new(Size::Quick)).unwrap();
        check_sweep(&e, "n", &[10.0, 100.0, 1e3, 1e4, 1e5]);
        assert!(e.figure.as_ref().unwrap().log_x);
    }

    #[test]
    fn vary_d_and_vary_k_sweep_the_seed_axes() {
        let e = kmeans_vary_d(&Context::new(Size::Quick)).unwrap();
        check_sweep(&e, "d", &[2.0, 8.0, 32.0, 128.0]);
        let e = kmeans_vary_k(&Context::new(Size::Quick)).unwrap();
        check_sweep(&e, "k", &[2.0, 8.0, 32.0, 128.0]);
        assert_eq!(e.seed_rows.len(), 2);
        assert_eq!(e.seed_rows[1].get_f64("speedup"), Some(11.69));
        assert_eq!(e.figure.as_ref().unwrap().y, ["speedup"]);
    }

    #[test]
    fn distributed_split_adds_up_and_gives_the_library_centroids() {
        let e = kmeans_distributed(&Context::new(Size::Quick)).unwrap();
        let ms = |p: &str| {
            e.rows
                .iter()
                .find(|r| r.get_text("part").as_deref() == Some(p))
                .and_then(|r| r.get_f64("ms"))
                .unwrap()
        };
        let parts: f64 = [
            "sharing",
            "computing",
            "aggregating",
            "synchronizing",
            "unaccounted",
        ]
        .iter()
        .map(|p| ms(p))
        .sum();
        assert!((parts - ms("total")).abs() <= 1e-6 * ms("total"), "{parts}");
        assert!(ms("computing") > 0.0 && ms("sharing") > 0.0);
        assert_eq!(e.seed_rows.len(), 5);
        // The chunked iterations over threads are the library's k-means.
        let b = two_clusters(20_000, 2, 5);
        let x = b.data.view();
        let start = x.slice(s![..4, ..]).to_owned();
        for workers in [1, 3] {
            let t = chunked_time_split(x, start.clone(), 30, workers).unwrap();
            let lib = KMeans::new(4)
                .init(Init::Given(start.clone()))
                .tol(0.0)
                .max_iter(30)
                .exec(Exec::Cpu)
                .fit(x)
                .unwrap();
            for (a, b) in t.centroids.iter().zip(&lib.centroids) {
                assert!((a - b).abs() <= 1e-12, "{a} vs {b}");
            }
        }
    }
}
