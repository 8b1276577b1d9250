//! The seeds' experiments of this crate, for `warpath reproduce` (see `warpath_report`), and
//! the timed Euler circuit runs that `warpath euler --sweep` shares with them.
//!
//! - `euler-chart` (seed 000): Euler circuit time against edges on deep and shallow random
//!   Eulerian digraphs, Hierholzer, the parallel algorithm (rayon) and the GPU pipeline.
//! - `euler-stages` (seed 000): the time of each stage of the parallel algorithm and the number
//!   of cycles the pairing leaves (the seed's "partitions").
//! - `edges-extraction` (seed 000): the edge list (start and end of every edge) from CSR, on
//!   one thread, on all threads and on the GPU.

use std::time::Instant;

use gpu_runtime::Exec;
use warpath_report::{Context, Experiment, ExperimentError, FigureSpec, Row, Spec, median};

use crate::{
    EulerError, EulerStyle, EulerTrail, Graph, edge_list, edge_list_cuda_timed,
    euler_circuit_cuda_timed, euler_circuit_hierholzer, euler_circuit_parallel_staged,
    is_euler_circuit, random_euler_graph,
};

/// This crate's experiments, in the order of the seeds.
pub fn specs() -> Vec<Spec> {
    vec![
        Spec {
            id: "euler-chart",
            seed: "000",
            title: "Euler circuit time against edges, deep and shallow graphs, CPU and GPU",
            run: euler_chart,
        },
        Spec {
            id: "euler-stages",
            seed: "000",
            title: "the stages of the parallel Euler circuit algorithm, and the cycles left after pairing",
            run: euler_stages,
        },
        Spec {
            id: "edges-extraction",
            seed: "000",
            title: "the edge list from CSR (31.5M edges), CPU and GPU",
            run: edges_extraction,
        },
    ]
}

/// The seed of the generated graphs of the experiments (the CLI's default `--seed`).
pub const GRAPH_SEED: u64 = 42;

/// A way of computing an Euler circuit that [`time_euler`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EulerMethod {
    /// Hierholzer's algorithm on one thread ([`euler_circuit_hierholzer`]).
    Hierholzer,
    /// The parallel algorithm on the CPU ([`crate::euler_circuit_parallel`], rayon).
    Parallel,
    /// The parallel algorithm on the GPU ([`euler_circuit_cuda_timed`]).
    Cuda,
}

impl EulerMethod {
    /// The method's name in tables: `hierholzer`, `parallel` or `cuda`.
    pub fn name(self) -> &'static str {
        match self {
            EulerMethod::Hierholzer => "hierholzer",
            EulerMethod::Parallel => "parallel",
            EulerMethod::Cuda => "cuda",
        }
    }

    /// Where it runs, as a report's `backend`: `cpu` (one thread), `rayon` or `cuda`.
    pub fn backend(self) -> &'static str {
        match self {
            EulerMethod::Hierholzer => "cpu",
            EulerMethod::Parallel => "rayon",
            EulerMethod::Cuda => "cuda",
        }
    }
}

/// The timed parts of one run, `(name, seconds)`: `hierholzer` or `parallel` (wall clock) for
/// the CPU methods; `cuda_compute` and `cuda_transfers` (CUDA events) for the GPU.
pub type TimedParts = Vec<(&'static str, f64)>;

/// Why a timed Euler run failed.
#[derive(Debug, thiserror::Error)]
pub enum EulerRunError {
    /// The algorithm reported an error (a GPU out of memory included).
    #[error(transparent)]
    Euler(#[from] EulerError),
    /// The circuit returned is not an Euler circuit of the graph.
    #[error("{0}: the circuit failed verification")]
    NotACircuit(&'static str),
}

/// Runs `method` on `g` `reps` times (at least once), verifies every circuit (untimed) and
/// returns the timed parts of each run: what `warpath euler --sweep` (best of the runs) and
/// `euler-chart` (their median) report.
///
/// # Complexity
/// `reps` Euler circuits and verifications, `O(reps (V + E))`.
///
/// # Errors
/// [`EulerRunError::Euler`] when the method fails (no GPU, out of memory, a graph that is not
/// Eulerian); [`EulerRunError::NotACircuit`] when a result fails verification.
///
/// # Examples
/// ```
/// use graph_core::experiments::{EulerMethod, time_euler};
/// use graph_core::{EulerStyle, random_euler_graph};
/// let g = random_euler_graph(10_000, EulerStyle::Deep, 1)?;
/// let runs = time_euler(&g, EulerMethod::Parallel, 2)?;
/// assert_eq!(runs.len(), 2);
/// assert_eq!(runs[0][0].0, "parallel");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn time_euler(
    g: &Graph,
    method: EulerMethod,
    reps: usize,
) -> Result<Vec<TimedParts>, EulerRunError> {
    let mut out = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let wall = |name, f: &dyn Fn(&Graph) -> Result<EulerTrail, EulerError>| {
            let t = Instant::now();
            f(g).map(|trail| (trail, vec![(name, t.elapsed().as_secs_f64())]))
        };
        let (trail, parts) = match method {
            EulerMethod::Hierholzer => wall("hierholzer", &euler_circuit_hierholzer)?,
            EulerMethod::Parallel => wall("parallel", &|g| {
                euler_circuit_parallel_staged(g).map(|(t, _)| t)
            })?,
            EulerMethod::Cuda => euler_circuit_cuda_timed(g).map(|(trail, t)| {
                let parts = vec![
                    ("cuda_compute", t.compute),
                    ("cuda_transfers", t.upload + t.download),
                ];
                (trail, parts)
            })?,
        };
        if !is_euler_circuit(g, &trail) {
            return Err(EulerRunError::NotACircuit(method.name()));
        }
        out.push(parts);
    }
    Ok(out)
}

/// The element-wise median of the runs' parts (the same names in every run).
fn median_parts(runs: &[TimedParts]) -> TimedParts {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|i| {
            let mut v: Vec<f64> = runs.iter().map(|r| r[i].1).collect();
            (first[i].0, median(&mut v))
        })
        .collect()
}

fn style_name(style: EulerStyle) -> &'static str {
    match style {
        EulerStyle::Deep => "deep",
        EulerStyle::Shallow => "shallow",
    }
}

fn fail<E: std::fmt::Display>(what: String) -> impl Fn(E) -> ExperimentError {
    move |e| ExperimentError::from_display(&what, e)
}

/// The seed's Euler graphs: `GenerateEulerGraph(10 * 2^20, 7)` (deep, 41,944,529 edges) and
/// `GenerateEulerGraphAlt(2^20, 3 * 2^20)` (shallow, 3,145,727 edges).
const SEED_DEEP_EDGES: u64 = 41_944_529;
const SEED_SHALLOW_EDGES: u64 = 3_145_727;

const GENERATOR_NOTE: &str = "Graphs: ours are graph-core's seeded generators (`random_euler_graph`), \
     not the seed's `GenerateEulerGraph`/`GenerateEulerGraphAlt`. Deep = one random closed walk over \
     E/4 vertices; shallow = a random connected undirected multigraph with each edge in both \
     directions, adjacency sorted by target, so that the pairing leaves E/2 cycles of 2 edges (a \
     worse case than the seed's shallow graphs, which left 45,514 partitions at 3.1M edges).";

/// `euler-chart`: Euler circuit time against edges (seed's chart: 1M to 42M edges), deep and
/// shallow graphs; Hierholzer (one thread), the parallel algorithm (rayon) and, with a GPU, the
/// CUDA pipeline (device compute plus transfers); every circuit verified. Times are medians.
///
/// # Errors
/// A generator or a method failing.
pub fn euler_chart(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "euler-chart",
        "000",
        "Euler circuit time against edges, deep and shallow graphs, CPU and GPU",
    );
    e.seed_says = "On a deep graph of 41,944,529 edges (10,485,760 vertices) the GPU algorithm \
                   took 41.3 s and the CPU Hierholzer 62.9 s; a shallow graph of 3,145,727 edges \
                   took the GPU algorithm 203 s (45,514 partitions). The seed's chart (CPU and \
                   GPU against edges) showed the GPU line erratic: its time depends on the \
                   number of partitions, not only on the edges."
        .into();
    for (style, edges, method, backend, secs) in [
        ("deep", SEED_DEEP_EDGES, "seed GPU", "cuda", 41.347),
        ("deep", SEED_DEEP_EDGES, "seed hierholzer", "cpu", 62.902),
        ("shallow", SEED_SHALLOW_EDGES, "seed GPU", "cuda", 203.051),
    ] {
        e.seed_rows.push(
            Row::new()
                .with("style", style)
                .with("edges", edges)
                .with("method", method)
                .with("backend", backend)
                .with("seconds", secs),
        );
    }
    e.notes.push(GENERATOR_NOTE.into());
    e.notes.push(
        "The seed's GPU time is the whole of its pipeline with CPU partitioning; ours is the \
         CUDA pipeline's device compute plus its transfers (CUDA events), every stage on the \
         device. CPU times are wall clock on this machine's threads (`threads` column)."
            .into(),
    );
    let sizes: Vec<u64> = ctx.pick(
        vec![100_000, 300_000, 1_000_000],
        vec![
            1_000_000,
            3_000_000,
            10_000_000,
            20_000_000,
            SEED_DEEP_EDGES,
        ],
    );
    let reps = ctx.pick(3, 3);
    let gpu = ctx.gpu_rows();
    let mut methods = vec![EulerMethod::Hierholzer, EulerMethod::Parallel];
    if gpu {
        methods.push(EulerMethod::Cuda);
        // Load (JIT-compile) the kernels before the clock runs.
        let warm =
            random_euler_graph(1000, EulerStyle::Shallow, 1).map_err(fail("warm-up".into()))?;
        euler_circuit_cuda_timed(&warm).map_err(fail("warming up the GPU".into()))?;
    }
    let threads = rayon::current_num_threads();
    for &m in &sizes {
        for style in [EulerStyle::Deep, EulerStyle::Shallow] {
            let label = style_name(style);
            ctx.progress(&format!("euler-chart: {label} {m} edges"));
            let g = random_euler_graph(m, style, GRAPH_SEED)
                .map_err(fail(format!("generating {label} {m}")))?;
            for &method in &methods {
                // The simulated driver is slow: one run, at the smallest size only.
                let sim_skip = method == EulerMethod::Cuda
                    && ctx.gpu == warpath_report::GpuUse::Simulated
                    && m != sizes[0];
                if sim_skip {
                    continue;
                }
                let runs = match time_euler(
                    &g,
                    method,
                    if method == EulerMethod::Cuda && ctx.gpu == warpath_report::GpuUse::Simulated {
                        1
                    } else {
                        reps
                    },
                ) {
                    Ok(r) => r,
                    Err(EulerRunError::Euler(EulerError::Gpu(
                        err @ gpu_runtime::GpuError::OutOfMemory { .. },
                    ))) => {
                        e.notes
                            .push(format!("cuda on {label} {m} edges skipped: {err}"));
                        continue;
                    }
                    Err(err) => return Err(fail(format!("{} on {label} {m}", method.name()))(err)),
                };
                let parts = median_parts(&runs);
                let total: f64 = parts.iter().map(|p| p.1).sum();
                let mut row = Row::new()
                    .with("style", label)
                    .with("edges", g.edge_count())
                    .with("vertices", g.vertex_count())
                    .with("method", method.name());
                row = if method == EulerMethod::Cuda {
                    row.on_gpu(ctx)
                } else {
                    row.with("backend", method.backend()).with(
                        "threads",
                        if method == EulerMethod::Parallel {
                            threads
                        } else {
                            1
                        },
                    )
                };
                row = row.secs("seconds", total);
                if method == EulerMethod::Cuda {
                    for (name, s) in &parts {
                        row = row.secs(&format!("{name}_seconds"), *s);
                    }
                }
                row = row
                    .secs(
                        "m_edges_per_second",
                        g.edge_count() as f64 / total.max(1e-12) / 1e6,
                    )
                    .with("verified", true)
                    .with("runs", runs.len());
                e.rows.push(row);
            }
        }
    }
    e.figure = Some(
        FigureSpec::lines("edges", &["seconds"])
            .title("Euler circuit time against edges (median of runs)")
            .series(&["method", "style"])
            .log(true, true)
            .labels("edges", "seconds"),
    );
    Ok(e)
}

/// `euler-stages`: the wall time of each stage of the parallel algorithm on the CPU (pairing,
/// cycle labelling, linking = spanning forest of the cycle graph, splicing, ranking) and the
/// cycles the pairing left, on deep and shallow graphs at the seed's two sizes.
///
/// # Errors
/// A generator or the algorithm failing, or a circuit failing verification.
pub fn euler_stages(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "euler-stages",
        "000",
        "the stages of the parallel Euler circuit algorithm, and the cycles left after pairing",
    );
    e.seed_says = "Deep graph, 41,944,529 edges: 1. predecessors 3.21 s, 2. partitioning 6.45 s \
                   (6 partitions), 3. circuit graph 31.47 s, 4. swaps 0.22 s; GPU total 41.35 s. \
                   Shallow graph, 3,145,727 edges: 0.35 s, 168.37 s (45,514 partitions), 34.16 s, \
                   0.17 s; total 203.05 s. \"The bottleneck is the partitioning stage.\""
        .into();
    for (style, edges, p, l, k, s, total, cycles) in [
        (
            "deep",
            SEED_DEEP_EDGES,
            3.2147,
            6.4476,
            31.4655,
            0.2190,
            41.3474,
            6u64,
        ),
        (
            "shallow",
            SEED_SHALLOW_EDGES,
            0.3479,
            168.3659,
            34.1633,
            0.1708,
            203.0506,
            45_514,
        ),
    ] {
        e.seed_rows.push(
            Row::new()
                .with("style", style)
                .with("edges", edges)
                .with("backend", "seed GPU+CPU")
                .with("pairing_seconds", p)
                .with("labelling_seconds", l)
                .with("linking_seconds", k)
                .with("splicing_seconds", s)
                .with("total_seconds", total)
                .with("cycles_after_pairing", cycles),
        );
    }
    e.notes.push(
        "Stages mapped to the seed's: pairing = 1. predecessors (each vertex's i-th in-edge \
         paired with its i-th out-edge), labelling = 2. partitioning (each edge's cycle; ours \
         by sampled list ranking in parallel, the seed's by a sequential walk with a HashSet), \
         linking = 3. circuit graph (ours builds only a spanning forest of it, with a lock-free \
         union-find), splicing = 4. swaps. Ranking (writing the circuit out in order) has no \
         stage of its own in the seed. Our times are the rayon (CPU) algorithm's; the GPU \
         pipeline is timed as a whole in euler-chart."
            .into(),
    );
    e.notes.push(GENERATOR_NOTE.into());
    let points: Vec<(EulerStyle, u64)> = ctx.pick(
        vec![(EulerStyle::Deep, 400_000), (EulerStyle::Shallow, 400_000)],
        vec![
            (EulerStyle::Deep, SEED_SHALLOW_EDGES),
            (EulerStyle::Deep, SEED_DEEP_EDGES),
            (EulerStyle::Shallow, SEED_SHALLOW_EDGES),
            (EulerStyle::Shallow, SEED_DEEP_EDGES),
        ],
    );
    let reps = 3;
    for (style, m) in points {
        let label = style_name(style);
        ctx.progress(&format!("euler-stages: {label} {m} edges"));
        let g = random_euler_graph(m, style, GRAPH_SEED)
            .map_err(fail(format!("generating {label} {m}")))?;
        let mut runs = Vec::new();
        for _ in 0..reps {
            let (trail, st) = euler_circuit_parallel_staged(&g)
                .map_err(fail(format!("parallel on {label} {m}")))?;
            if !is_euler_circuit(&g, &trail) {
                return Err(ExperimentError(format!(
                    "{label} {m}: circuit failed verification"
                )));
            }
            runs.push(st);
        }
        let med =
            |f: fn(&crate::EulerStages) -> f64| median(&mut runs.iter().map(f).collect::<Vec<_>>());
        let st = runs[0];
        e.rows.push(
            Row::new()
                .with("style", label)
                .with("edges", g.edge_count())
                .with("vertices", g.vertex_count())
                .with("backend", "rayon")
                .with("threads", rayon::current_num_threads())
                .secs("pairing_seconds", med(|s| s.pairing))
                .secs("labelling_seconds", med(|s| s.labelling))
                .secs("linking_seconds", med(|s| s.linking))
                .secs("splicing_seconds", med(|s| s.splicing))
                .secs("ranking_seconds", med(|s| s.ranking))
                .secs("total_seconds", med(|s| s.total()))
                .with("cycles_after_pairing", st.cycles_after_pairing)
                .with("forest_links", st.forest_links)
                .with("verified", true),
        );
    }
    Ok(e)
}

/// `edges-extraction`: the edge list of a CSR graph (start and end of every edge) of about
/// 31.5M edges: the sequential iterator collected into pairs (the seed's CPU `OrdinalEdges`),
/// [`edge_list`] on the CPU (rayon) and on the GPU (wall clock including transfers, and the
/// kernel alone). Every result is compared with the sequential one.
///
/// # Errors
/// The generator or the GPU failing, or a result differing.
pub fn edges_extraction(ctx: &Context) -> Result<Experiment, ExperimentError> {
    let mut e = Experiment::new(
        "edges-extraction",
        "000",
        "the edge list from CSR (31.5M edges), CPU and GPU",
    );
    e.seed_says = "Graph: 10,485,760 vertices, 31,458,372 edges. GPU edges: 1.52 s; CPU edges: \
                   16.52 s (\"I'm happy to take the win!\")."
        .into();
    for (method, backend, secs) in [("seed GPU", "cuda", 1.5235), ("seed CPU", "cpu", 16.5161)] {
        e.seed_rows.push(
            Row::new()
                .with("edges", 31_458_372u64)
                .with("vertices", 10_485_760u64)
                .with("method", method)
                .with("backend", backend)
                .with("seconds", secs),
        );
    }
    e.notes.push(
        "Graph: our deep generator with the seed's edge count (31,458,372 edges over E/4 = \
         7,864,593 vertices; the seed's had 10,485,760 vertices, 3 edges each on average). \
         `sequential` collects `Graph::edges()` into (start, end) pairs on one thread, as the \
         seed's CPU `OrdinalEdges`; `rayon` and `cuda` return the two arrays (starts, ends) as \
         the seed's GPU `getEdges` does. The GPU row's time includes uploading the offsets and \
         downloading the starts; `kernel_seconds` is the kernel alone."
            .into(),
    );
    let m = ctx.pick(1_000_000u64, 31_458_372);
    ctx.progress(&format!("edges-extraction: generating {m} edges"));
    let g = random_euler_graph(m, EulerStyle::Deep, GRAPH_SEED)
        .map_err(fail("generating the graph".into()))?;
    let reps = 5;
    let mut times = Vec::new();
    let mut pairs = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        pairs = g.edges().collect::<Vec<(u32, u32)>>();
        times.push(t.elapsed().as_secs_f64());
    }
    let (edges, vertices) = (g.edge_count(), g.vertex_count());
    // The start of the result row of `method`.
    let row = |method: &str| {
        Row::new()
            .with("edges", edges)
            .with("vertices", vertices)
            .with("method", method)
    };
    // An error unless the edge list of `side` held the edges.
    let check = |ok: bool, side: &str| {
        ok.then_some(())
            .ok_or_else(|| ExperimentError(format!("the {side} edge list differs from the edges")))
    };
    e.rows.push(
        row("sequential")
            .with("backend", "cpu")
            .with("threads", 1)
            .secs("seconds", median(&mut times))
            .with("verified", pairs.len() as u64 == g.edge_count()),
    );
    let same = |s: &[u32], t: &[u32]| {
        s.len() == pairs.len()
            && s.iter()
                .zip(t)
                .zip(&pairs)
                .all(|((a, b), p)| (*a, *b) == *p)
    };
    let mut times = Vec::new();
    let mut ok = true;
    for _ in 0..reps {
        let t = Instant::now();
        let (list, _) = edge_list(&g, Exec::Cpu).map_err(fail("edge_list on the CPU".into()))?;
        times.push(t.elapsed().as_secs_f64());
        ok &= same(&list.sources, &list.targets);
    }
    check(ok, "CPU")?;
    e.rows.push(
        row("edge_list")
            .with("backend", "rayon")
            .with("threads", rayon::current_num_threads())
            .secs("seconds", median(&mut times))
            .with("verified", true),
    );
    if ctx.gpu_rows() {
        // Load the module before the clock runs.
        let small = Graph::from_edges(2, &[(0, 1), (1, 0)]).map_err(fail("warm-up".into()))?;
        edge_list_cuda_timed(&small).map_err(fail("warming up the GPU".into()))?;
        let reps = if ctx.gpu == warpath_report::GpuUse::Simulated {
            1
        } else {
            reps
        };
        let (mut wall, mut kernel) = (Vec::new(), Vec::new());
        let mut ok = true;
        for _ in 0..reps {
            let t = Instant::now();
            let (list, times) =
                edge_list_cuda_timed(&g).map_err(fail("edge_list on the GPU".into()))?;
            wall.push(t.elapsed().as_secs_f64());
            kernel.push(times.compute);
            ok &= same(&list.sources, &list.targets);
        }
        check(ok, "GPU")?;
        e.rows.push(
            row("edge_list")
                .on_gpu(ctx)
                .secs("seconds", median(&mut wall))
                .secs("kernel_seconds", median(&mut kernel))
                .with("verified", true),
        );
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpath_report::Size;

    /// Runs the experiment `run` at the quick size and checks that it has `rows` rows.
    fn quick(run: fn(&Context) -> Result<Experiment, ExperimentError>, rows: usize) -> Experiment {
        let e = run(&Context::new(Size::Quick)).unwrap();
        assert_eq!(e.rows.len(), rows, "{}", e.id);
        e
    }

    #[test]
    fn euler_chart_quick_times_every_method_on_both_styles() {
        // 3 sizes x 2 styles x 2 CPU methods.
        let e = quick(euler_chart, 12);
        for r in &e.rows {
            assert_eq!(r.get("verified"), Some(&true.into()));
            let m = r.get_f64("edges").unwrap();
            assert!([100_000.0, 300_000.0, 1_000_000.0].contains(&m));
            let s = r.get_f64("seconds").unwrap();
            assert!(s > 0.0 && s < 30.0, "{s}");
            let rate = r.get_f64("m_edges_per_second").unwrap();
            assert!((rate - m / s / 1e6).abs() < 1e-6 * rate);
        }
        assert_eq!(specs()[0].id, e.id);
    }

    #[test]
    fn euler_stages_count_the_cycles_of_the_pairing() {
        let e = quick(euler_stages, 2);
        for r in &e.rows {
            let cycles = r.get_f64("cycles_after_pairing").unwrap();
            // Connected: the forest joins every cycle with one link fewer.
            assert_eq!(r.get_f64("forest_links"), Some(cycles - 1.0));
            let parts: f64 = ["pairing", "labelling", "linking", "splicing", "ranking"]
                .iter()
                .map(|s| r.get_f64(&format!("{s}_seconds")).unwrap())
                .sum();
            let total = r.get_f64("total_seconds").unwrap();
            // Medians of each stage need not add up to the median total, but stay close.
            assert!(
                parts > 0.0 && (parts - total).abs() <= 0.5 * total + 1e-3,
                "{parts} {total}"
            );
        }
        // The shallow generator pairs almost every edge with its reverse: about E / 2 cycles
        // of 2 edges (self-loops and repeated pairs make a few more or fewer).
        let shallow = e
            .rows
            .iter()
            .find(|r| r.get_text("style").as_deref() == Some("shallow"));
        let c = shallow.unwrap().get_f64("cycles_after_pairing").unwrap();
        assert!((c - 200_000.0).abs() < 2_000.0, "{c}");
        let deep = e
            .rows
            .iter()
            .find(|r| r.get_text("style").as_deref() == Some("deep"));
        assert!(deep.unwrap().get_f64("cycles_after_pairing").unwrap() < 1000.0);
    }

    #[test]
    fn staged_cycles_match_an_independent_count() {
        // The cycles of the pairing counted directly: pair each vertex's i-th in-edge (in edge
        // order) with its i-th out-edge and follow the successor permutation.
        for style in [EulerStyle::Deep, EulerStyle::Shallow] {
            let g = random_euler_graph(5000, style, 3).unwrap();
            let m = g.edge_count() as usize;
            let mut cursor: Vec<u64> = g.offsets()[..g.vertex_count()].to_vec();
            let mut succ = vec![0usize; m];
            for (e, &t) in g.targets().iter().enumerate() {
                succ[e] = cursor[t as usize] as usize;
                cursor[t as usize] += 1;
            }
            let mut seen = vec![false; m];
            let mut cycles = 0u64;
            for s in 0..m {
                if !seen[s] {
                    cycles += 1;
                    let mut x = s;
                    while !seen[x] {
                        seen[x] = true;
                        x = succ[x];
                    }
                }
            }
            let (_, st) = euler_circuit_parallel_staged(&g).unwrap();
            assert_eq!(st.cycles_after_pairing, cycles, "{style:?}");
            assert_eq!(st.forest_links, cycles - 1);
        }
    }

    #[test]
    fn edges_extraction_quick_agrees_with_the_sequential_edges() {
        let e = quick(edges_extraction, 2);
        for r in &e.rows {
            assert_eq!(r.get("verified"), Some(&true.into()));
            assert_eq!(r.get_f64("edges"), Some(1_000_000.0));
            assert!(r.get_f64("seconds").unwrap() > 0.0);
        }
        let backends: Vec<String> = e
            .rows
            .iter()
            .filter_map(|r| r.get_text("backend"))
            .collect();
        assert_eq!(backends, ["cpu", "rayon"]);
    }
}
